"""LLM policies for the maze-envs environments: prompts, reply schemas and parsing, model
backends (hosted models through pydantic-ai, local models through Ollama) and token/cost
accounting."""
