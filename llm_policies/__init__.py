"""LLM policies for the maze-envs environments.

A language model as a policy of :mod:`maze_envs.policies.interface`, for Maze Escape
(:class:`EscapeLLMPolicy`) and AGI Maze (:class:`AgiMazeLLMPolicy`), built by name through the
``maze_envs.policies`` entry points (:func:`make_llm_policy`: ``anthropic:``, ``openai:``,
``openai-chat:``, ``openrouter:``, ``ollama:``). The parts:

* the harness: versioned prompts (:mod:`llm_policies.prompts`, data files), reply schemas
  (:mod:`llm_policies.schema`), named quirk rules (:mod:`llm_policies.parsing`), AGI Maze
  history policies (:mod:`llm_policies.history`), the decision loop and its settings
  (:mod:`llm_policies.harness`), the checks before each request (context window, caps:
  :mod:`llm_policies.guard`, :mod:`llm_policies.tokens`), what the agents of a game share
  (:mod:`llm_policies.game`), the policies (:mod:`llm_policies.policy_base`,
  :mod:`llm_policies.policy`), decision replay (:mod:`llm_policies.apps.replay`,
  :mod:`llm_policies.apps.replay_report`);
* the backends: hosted models through pydantic-ai, local ones through Ollama's native API, a
  scripted backend for tests (:mod:`llm_policies.backends`), what a server really does (output
  modes it honours, context window, tokenizer: :mod:`llm_policies.capabilities`,
  :mod:`llm_policies.server_info`), usage and cost
  (:mod:`llm_policies.accounting`), the response cache (:mod:`llm_policies.cache`) and model
  settings (:mod:`llm_policies.settings`).

Names are imported on first use, so ``import llm_policies`` stays cheap. See docs/llm.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from llm_policies._moved import install as install_moved

_EXPORTS = {
    "AgiMazeLLMPolicy": "llm_policies.policy",
    "EscapeLLMPolicy": "llm_policies.policy",
    "HarnessSettings": "llm_policies.harness",
    "ModelSettings": "llm_policies.settings",
    "make_llm_policy": "llm_policies.registry",
    "replay_decisions": "llm_policies.apps.replay",
}

__all__ = sorted(_EXPORTS)

# The applications moved to llm_policies.apps (issue 26): their old import paths still work,
# with a DeprecationWarning.
install_moved(
    {
        "llm_policies.inspect": "llm_policies.apps.inspect",
        "llm_policies.study_run": "llm_policies.apps.study_run",
        "llm_policies.study_plan": "llm_policies.apps.study_plan",
        "llm_policies.replay": "llm_policies.apps.replay",
        "llm_policies.replay_report": "llm_policies.apps.replay_report",
    }
)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_policies' has no attribute {name!r}")
    return getattr(import_module(module), name)
