"""One model request as one verifiers turn: chat messages, Chat Completions options, the reply.

The LLM policies send a :class:`~llm_policies.backends.base.ModelRequest` (the system prompt, the
conversation, the output mode, the reply schema). Through verifiers it becomes one turn of the
seat's interaction (:mod:`~llm_policies.apps.verifiers.backend`) and one Chat Completions call
of the seat's harness (:mod:`~llm_policies.apps.verifiers.harness`):

* the messages (:func:`turn_messages`): the system prompt, then every message of the request.
  A request is complete in itself (a Maze Escape prompt has no history; an AGI Maze history is
  what its history policy shows), so each turn sends exactly it, never the trace's earlier turns
  as well; verifiers' trace keeps the shared start of the turns once (its message graph);
* the options of the output mode (:func:`call_options`): ``tool``, the schema as the one
  function offered, forced; ``native``, ``response_format`` ``json_schema``; ``grammar``,
  ``json_object`` with the schema beside it (llama.cpp's grammar); ``json_object``; ``prompted``,
  none (the schema is in the system prompt);
* the reply (:func:`reply_parts`): the text and the first tool call's arguments exactly as the
  model sent them, for the harness's quirk rules.

The harness learns the request of the turn it runs from :data:`CURRENT`, which the backend sets
around the turn (the turn runs in the backend's task, so the context goes with it).

Example:
    >>> from llm_policies.backends.base import ChatMessage, ModelRequest
    >>> from llm_policies.settings import ModelSettings
    >>> request = ModelRequest("Rules.", (ChatMessage("user", "Your move?"),), "tool",
    ...                        {"type": "object", "properties": {}}, "maze_action", ModelSettings())
    >>> [m.role for m in turn_messages(request)]
    ['system', 'user']
    >>> call_options(request)["tool_choice"]
    {'type': 'function', 'function': {'name': 'maze_action'}}
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any, Final

import verifiers.v1 as vf

from llm_policies.backends.base import ModelRequest
from llm_policies.settings import OUTPUT_MODES, OutputMode

#: The request of the turn being played (set by the backend around ``interaction.turn``).
CURRENT: ContextVar[ModelRequest | None] = ContextVar("maze_envs_verifiers_request", default=None)
#: The output modes a seat can play in (every explicit mode; ``auto``'s probes would be turns).
SERVED_MODES: Final[tuple[OutputMode, ...]] = OUTPUT_MODES
#: The tool's description when the schema has none (the same words as the Inspect front end).
TOOL_DESCRIPTION: Final = "Your reply for this turn."


def turn_messages(request: ModelRequest) -> list[vf.Message]:
    """The request as verifiers messages: the system prompt, then the conversation."""
    messages: list[vf.Message] = [vf.SystemMessage(content=request.system)]
    for message in request.messages:
        if message.role == "user":
            messages.append(vf.UserMessage(content=message.content))
        else:
            messages.append(vf.AssistantMessage(content=message.content))
    return messages


def call_options(request: ModelRequest) -> dict[str, Any]:
    """The Chat Completions options of the request's output mode (see the module docstring)."""
    schema, name, mode = request.schema, request.schema_name, request.output_mode
    if mode == "tool":
        function = {
            "name": name,
            "description": schema.get("description") or TOOL_DESCRIPTION,
            "parameters": schema,
        }
        return {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    if mode == "native":
        format_ = {"name": name, "schema": schema, "strict": True}
        return {"response_format": {"type": "json_schema", "json_schema": format_}}
    if mode == "grammar":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def reply_parts(messages: Sequence[vf.Message]) -> tuple[str | None, str | None]:
    """(text, first tool call's arguments) of the last assistant message, as sent."""
    for message in reversed(messages):
        if isinstance(message, vf.AssistantMessage):
            calls = message.tool_calls or []
            return message.content or None, (calls[0].arguments if calls else None)
    return None, None
