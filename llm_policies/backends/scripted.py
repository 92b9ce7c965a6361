"""A backend that answers from a script: for tests and for measuring the harness without a model.

The script is a sequence of items, consumed one per request, or a function of the request that
returns an item. An item is

* a ``str``: the raw reply, as tool-call arguments in ``tool`` mode and as text otherwise;
* a :class:`ScriptedReply`: text and tool arguments exactly as given (e.g. JSON sent as text
  although a tool call was asked for), with token counts and a delay;
* a :class:`~llm_policies.backends.base.ModelError` instance: raised (a
  :class:`~llm_policies.backends.base.ModelUnavailable` is what a real backend raises after its
  retries).

Every request is kept in ``backend.requests``. Scripted models are local: cost 0.

    >>> import asyncio
    >>> from llm_policies.backends.base import ChatMessage, ModelRequest
    >>> from llm_policies.settings import ModelSettings
    >>> backend = ScriptedBackend(['{"move": "N"}'])
    >>> request = ModelRequest("rules", (ChatMessage("user", "turn 1"),), "tool",
    ...                        {"type": "object"}, "maze_action", ModelSettings())
    >>> reply = asyncio.run(backend.complete(request))
    >>> reply.tool_arguments, reply.text, reply.usage.cost_status
    ('{"move": "N"}', None, 'local')
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from llm_policies.accounting import price
from llm_policies.backends.base import ModelError, ModelReply, ModelRequest
from llm_policies.settings import OUTPUT_MODES, ModelSettings, OutputMode
from maze_envs.policies.interface import Usage

CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted reply; token counts ``None`` are estimated from the text (4 chars a token)."""

    text: str | None = None
    tool_arguments: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    delay_s: float = 0.0
    model: str = "scripted"


ScriptItem = str | ScriptedReply | ModelError
Script = Sequence[ScriptItem] | Callable[[ModelRequest], ScriptItem]


class ScriptedBackend:
    """Replies from a script (see the module's docstring)."""

    output_modes: tuple[OutputMode, ...] = OUTPUT_MODES
    local = True

    def __init__(
        self,
        script: Script,
        *,
        spec: str = "scripted:test",
        settings: ModelSettings | None = None,
    ) -> None:
        if not (callable(script) or isinstance(script, Sequence)) or isinstance(script, str):
            raise TypeError(
                "a script is a sequence of replies (str, ScriptedReply, ModelError) or a "
                f"function of the request, got {type(script).__name__}"
            )
        self.spec = spec
        self.settings = settings or ModelSettings()
        self.requests: list[ModelRequest] = []
        self._function = script if callable(script) else None
        self._items: Iterator[ScriptItem] = iter(() if callable(script) else script)

    def _next(self, request: ModelRequest) -> ScriptItem:
        if self._function is not None:
            return self._function(request)
        try:
            return next(self._items)
        except StopIteration:
            raise RuntimeError(
                f"{self.spec}: the script has no reply left for request {len(self.requests)}"
            ) from None

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        item = self._next(request)
        if isinstance(item, ModelError):
            raise item
        if isinstance(item, str):
            item = (
                ScriptedReply(tool_arguments=item)
                if request.output_mode == "tool"
                else ScriptedReply(text=item)
            )
        if not isinstance(item, ScriptedReply):
            raise TypeError(f"{self.spec}: unknown script item {item!r}")
        if item.delay_s:
            await asyncio.sleep(item.delay_s)
        said = (item.text or "") + (item.tool_arguments or "")
        usage = price(
            self.spec,
            Usage(
                input_tokens=(
                    item.input_tokens
                    if item.input_tokens is not None
                    else request.prompt_chars() // CHARS_PER_TOKEN
                ),
                output_tokens=(
                    item.output_tokens
                    if item.output_tokens is not None
                    else max(1, len(said) // CHARS_PER_TOKEN)
                ),
                cache_read_tokens=item.cache_read_tokens,
                requests=1,
                latency_s=item.delay_s,
            ),
            local=True,
        )
        raw: dict[str, Any] = {
            "scripted": True,
            "text": item.text,
            "tool_arguments": item.tool_arguments,
        }
        return ModelReply(
            text=item.text,
            tool_arguments=item.tool_arguments,
            usage=usage,
            model=item.model,
            latency_s=item.delay_s,
            raw=raw,
        )

    async def aclose(self) -> None:
        return None
