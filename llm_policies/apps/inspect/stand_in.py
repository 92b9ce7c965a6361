"""The stand-in models as an Inspect model provider: ``inspect eval ... --model stand-in/NAME``.

The quick try that needs no network and no key::

    inspect eval maze_envs/escape --model stand-in/wall-follower --limit 2

``stand-in/wall-follower`` (right hand) and ``stand-in/wall-follower-left`` are the scripted
Maze Escape players of :mod:`llm_policies.backends.stand_in` (``--model stand-in:wall-follower``
in ``maze-envs bench``), served through Inspect's model API like any provider: they read the
prompt Inspect sends (the harness's, unchanged), answer in the reply schema as a tool call or
JSON text, and report their token counts (estimated at 4 characters a token), so nothing is
downloaded. Inspect's own ``mockllm/model`` is no offline quick try: it answers no action (every
decision falls back to STAY), and it counts tokens with tiktoken, whose tables it downloads on
first use, so offline every call fails and each game is an outage.

The provider registers when the tasks load (``inspect eval maze_envs/...``: the entry point of
the ``inspect_ai`` group imports :mod:`llm_policies.apps.inspect.tasks`, which imports this module).
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from llm_policies.backends.base import ChatMessage as Message
from llm_policies.backends.base import ModelRequest, OutputMode
from llm_policies.backends.scripted import CHARS_PER_TOKEN
from llm_policies.backends.stand_in import stand_in_script
from llm_policies.prompt_data import load
from llm_policies.settings import ModelSettings

#: The Inspect provider name: ``--model stand-in/wall-follower``.
PROVIDER = "stand-in"


def _prompted_schema(system: str) -> tuple[OutputMode, dict[str, Any]]:
    """The text output mode and the reply schema a system prompt asks for (the harness writes
    the schema right after the mode's instruction, ``escape/reply.toml``)."""
    instructions = load("escape/reply.toml")["mode"]
    for mode in ("prompted", "json_object", "grammar"):  # grammar's text is json_object's
        lead = instructions[mode].partition("{schema}")[0]
        at = system.find(lead)
        if at >= 0:
            found = json.JSONDecoder().raw_decode(system, at + len(lead))[0]
            return mode, found
    raise ValueError(
        "the stand-in answers in the reply schema of the maze tasks: it got no tool, no "
        "response schema and no JSON schema in the system prompt"
    )


def _request(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> ModelRequest:
    """Inspect's request as the harness's :class:`ModelRequest` (what a stand-in reads)."""
    system = "\n".join(m.text for m in input if isinstance(m, ChatMessageSystem))
    messages = tuple(
        Message("assistant" if m.role == "assistant" else "user", m.text)
        for m in input
        if not isinstance(m, ChatMessageSystem)
    )
    mode: OutputMode
    if tools:
        mode, name = "tool", tools[0].name
        schema = tools[0].parameters.model_dump(exclude_none=True)
    elif config.response_schema is not None:
        mode, name = "native", config.response_schema.name
        schema = config.response_schema.json_schema.model_dump(exclude_none=True)
    else:  # a text mode: the schema is in the system prompt, after the mode's instruction
        mode, schema = _prompted_schema(system)
        name = str(schema.get("title") or "maze_action")
    return ModelRequest(
        system=system,
        messages=messages,
        output_mode=mode,
        schema=schema,
        schema_name=name,
        settings=ModelSettings(),
    )


class StandIn(ModelAPI):
    """Every model of the provider is the stand-in of that name (``stand-in/wall-follower``);
    registered as the provider :data:`PROVIDER` (:data:`StandInAPI`)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (Inspect's own signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        stand_in_script(f"stand-in:{model_name}")  # an unknown name fails here, naming the known

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        request = _request(input, tools, config)
        reply = stand_in_script(f"stand-in:{self.model_name}")(request)
        text = reply.tool_arguments if reply.tool_arguments is not None else reply.text or ""
        model = f"{PROVIDER}/{self.model_name}"
        if reply.tool_arguments is not None:
            output = ModelOutput.for_tool_call(model, tools[0].name, json.loads(text))
        else:
            output = ModelOutput.from_content(model, text)
        prompt = len(request.system) + sum(len(m.content) for m in request.messages)
        input_tokens = prompt // CHARS_PER_TOKEN
        output_tokens = max(1, len(text) // CHARS_PER_TOKEN)
        output.usage = ModelUsage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        )
        return output


#: The provider ``stand-in`` (Inspect's registered factory of :class:`StandIn`).
StandInAPI = modelapi(name=PROVIDER)(StandIn)
