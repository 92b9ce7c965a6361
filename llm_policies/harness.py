"""The harness of the LLM policies: its settings, and one decision (call, parse, retry, record).

Every choice that changed how models played in the Maze Escape study is a field of
:class:`HarnessSettings`, validated, and reported by ``policy.harness()`` for the game's meta in
the journal. :func:`decide` is the loop both policies share:

1. check the request (:class:`~llm_policies.guard.Guard`): it must fit the context window and
   the game's caps, whose share it reserves; else ``fallback`` (reason ``context`` or ``cap``)
   without sending it;
2. send the request (the backend retries 429/5xx/timeouts itself), then charge what it cost;
3. parse the raw reply with the named quirk rules (:mod:`llm_policies.parsing`);
4. on an unusable reply, re-ask with the reason and a short excerpt of the reply, up to
   ``parse_retries`` times;
5. give back the values, or ``fallback`` (still unusable; or the server refused the prompt as
   too long, reason ``context``; or it rejects the output mode, reason ``config``) or ``outage``
   (the model could not be reached: :class:`~llm_policies.backends.base.ModelUnavailable`, or
   any other backend failure), with a record of every attempt for the journal. It never raises
   because of a model.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llm_policies.accounting import price
from llm_policies.backends.base import (
    ChatMessage,
    ContextLengthExceeded,
    ModelBackend,
    ModelError,
    ModelReply,
    ModelRequest,
)
from llm_policies.capabilities import is_mode_rejection
from llm_policies.guard import Capped, Cleared, Guard, NoRoom
from llm_policies.history import HistoryKind
from llm_policies.outcome import (
    DecisionRecord,
    FallbackReason,
    Outcome,
    Status,
    mode_rejected_message,
    truncation_message,
)
from llm_policies.output_mode import OutputModeChoice
from llm_policies.parsing import ParseResult, parse_reply
from llm_policies.prompt_data import load
from llm_policies.schema import Check, ReplySchema
from llm_policies.settings import HarnessOutputMode, ModelSettings, OutputMode
from maze_envs.policies.interface import Usage

log = logging.getLogger(__name__)

__all__ = [
    "ECHO_LIMIT",
    "FallbackReason",
    "HarnessSettings",
    "Outcome",
    "Status",
    "decide",
    "decode_messages",
    "echo_excerpt",
    "encode_messages",
    "mode_rejected_message",
    "prefix_share",
    "prompt_text",
]

#: Characters of an unusable reply echoed back in a re-ask (enough to point at it; a whole
#: runaway reply would fill the context window).
ECHO_LIMIT = 300


class HarnessSettings(BaseModel):
    """Every harness choice of an LLM policy (recorded with each game).

    Attributes:
        prompt_version: Maze Escape: a rung of the ladder (``llm_policies.prompts``) or
            ``"latest"``; AGI Maze: ``"v1"`` (``"latest"`` means it too).
        wording: the observation wording version of :mod:`maze_envs.text` (None: newest).
        output_mode: ``"tool"``, ``"native"``, ``"grammar"``, ``"json_object"``, ``"prompted"``,
            or ``"auto"``
            (probe the server once and take the best mode it honours; the default for
            OpenAI-compatible servers declared ``local``).
        check: the one-line check field: ``"off"``, ``"optional"`` or ``"required"``.
        order: ``"check_first"`` (reasoning fields before the action), ``"move_first"``, or every
            field name in order.
        history: AGI Maze history policy: ``observations``, ``planning`` or ``world_model``.
        window: AGI Maze sliding window in steps (None: the whole episode).
        parse_retries: re-asks after an unusable reply before falling back.
        max_tokens_per_game / max_cost_per_game: caps (input + output tokens; USD); when one is
            reached the decision asks the runner to stop the game, with the reason.
        max_consecutive_fallbacks: stop the game after this many fallback or outage decisions
            in a row (a model that never answers usably would otherwise play the whole budget).
        set_memory: AGI Maze labyrinth set: when the policy is reset for the next labyrinth of
            the same set (same seed, a later index), keep the conversation, the caps and the
            counters, so what the model learnt in the tutorials stays in view (the system prompt
            becomes the new labyrinth's description); ``False`` starts each labyrinth afresh.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_version: str = "latest"
    wording: str | None = None
    output_mode: HarnessOutputMode = "tool"
    check: Check = "off"
    order: Literal["check_first", "move_first"] | tuple[str, ...] = "check_first"
    history: HistoryKind = "observations"
    window: int | None = Field(None, ge=1)
    parse_retries: int = Field(2, ge=0, le=10)
    max_tokens_per_game: int | None = Field(None, gt=0)
    max_cost_per_game: float | None = Field(None, gt=0)
    max_consecutive_fallbacks: int | None = Field(20, ge=1)
    set_memory: bool = True


@lru_cache(maxsize=256)
def blob(text: str) -> Any:
    """``text`` as a journal blob (stored once per distinct content), or as is without one.

    Cached: a game's system prompt and schema are the same object every turn (hashed once).
    """
    try:
        from maze_envs.journal import Blob  # type: ignore[attr-defined,unused-ignore]
    except ImportError:  # an older journal: store the text inline
        return text
    return Blob(text)


def priced(backend: ModelBackend, reply: ModelReply) -> Usage:
    """The reply's usage with its cost filled in, when the backend left it unpriced."""
    usage = reply.usage
    if usage.cost_status != "none" or (usage.input_tokens + usage.output_tokens) == 0:
        return usage
    try:
        return price(backend.spec, usage, local=backend.local, reported_model=reply.model)
    except ImportError:  # genai-prices missing: the cost stays unknown, never 0
        return replace(usage, cost_usd=None, cost_status="unknown")


def echo_excerpt(reply: ModelReply, limit: int = ECHO_LIMIT) -> str:
    """What the model sent, for the re-ask to point at: at most ``limit`` characters.

    >>> from maze_envs.policies.interface import Usage
    >>> echo_excerpt(ModelReply("x" * 1000, None, Usage(), "m", 0.0, {}), limit=10)
    'xxxxxxxxxx [... 990 more characters]'
    """
    said = reply.tool_arguments if reply.tool_arguments is not None else reply.text or ""
    if not said:
        return "(empty reply)"
    if len(said) <= limit:
        return said
    return f"{said[:limit]} [... {len(said) - limit} more characters]"


def encode_messages(
    messages: Sequence[ChatMessage], previous: Sequence[ChatMessage] | None
) -> dict[str, Any]:
    """Messages as ``{"prev": k, "new": [...]}``: the first ``k`` equal the previous decision's.

    A growing history is then stored once in all (each decision adds its new messages), and
    :func:`decode_messages` rebuilds every request from the records in order.
    """
    k = 0
    if previous:
        for mine, theirs in zip(messages, previous, strict=False):
            if mine != theirs:
                break
            k += 1
    new = [{"role": m.role, "content": m.content} for m in messages[k:]]
    return {"prev": k, "new": new}


def decode_messages(
    encoded: Mapping[str, Any], previous: Sequence[ChatMessage] | None
) -> tuple[ChatMessage, ...]:
    """The messages of a record, given the previous record's (decoded) messages."""
    k = int(encoded.get("prev", 0))
    if k and (previous is None or len(previous) < k):
        raise ValueError(
            f"record refers to {k} earlier messages but only {len(previous or ())} are known"
        )
    kept = tuple(previous[:k]) if previous and k else ()
    return kept + tuple(ChatMessage(m["role"], m["content"]) for m in encoded.get("new", ()))


async def decide(
    backend: ModelBackend,
    *,
    system: str,
    messages: Sequence[ChatMessage],
    schema: ReplySchema,
    settings: ModelSettings,
    harness: HarnessSettings,
    mode: OutputMode | None = None,
    check_values: Callable[[dict[str, Any]], str | None] | None = None,
    previous_messages: Sequence[ChatMessage] | None = None,
    cache_key_extra: str = "",
    cache_history: bool = False,
    guard: Guard | None = None,
) -> Outcome:
    """One decision; see the module docstring.

    ``mode`` is the output mode to send (the one ``auto`` chose; default the harness's own);
    ``check_values`` rejects parsed values (e.g. an action the labyrinth does not offer right
    now) with a reason for the retry; ``guard`` checks each request against the context window
    and the game's caps before it is sent, and charges what it cost.
    """
    mode = OutputModeChoice.fixed(harness.output_mode, mode)
    retry_text = load("escape/reply.toml")["retry"]["invalid"]
    conversation = list(messages)
    decision = DecisionRecord(
        {
            "model": backend.spec,
            "system": blob(system),
            "messages": encode_messages(messages, previous_messages),
            "schema_name": schema.name,
            "schema": blob(schema.schema_text),
            "fields": list(schema.fields),
            "output_mode": mode,
            "attempts": [],
        }
    )
    error: str | None = None
    cut = False  # the last unusable reply was cut at the output cap
    for attempt in range(harness.parse_retries + 1):
        request = ModelRequest(
            system=system,
            messages=tuple(conversation),
            output_mode=mode,
            schema=schema.json_schema,
            schema_name=schema.name,
            settings=settings,
            cache_key_extra=cache_key_extra,
            cache_history=cache_history,
        )
        sent = await _send(backend, request, mode, guard, decision)
        if isinstance(sent, Outcome):
            return sent
        reply, cleared, call_usage, breach = sent
        result: ParseResult = parse_reply(reply.text, reply.tool_arguments, schema, mode)
        error = result.error
        if result.values is not None and check_values is not None:
            error = check_values(result.values)
        cap = request.settings.max_output_tokens
        cut = error is not None and result.values is None and reply.truncated(cap)
        told = error
        if cut:  # not malformed: the model had not finished when the cap cut it off
            written = call_usage.output_tokens
            error = truncation_message(written, cap)
            told = f"it was cut off after {written} tokens, before it was complete (write less)"
        decision.add_attempt(reply, call_usage, result, error, cleared, breach, cut)
        if error is None and result.values is not None:
            return decision.ok(result.values, attempt, result.quirks, result.rejected)
        decision.failed_quirks.update(result.quirks)
        if attempt < harness.parse_retries:
            conversation += [
                ChatMessage("assistant", echo_excerpt(reply)),
                ChatMessage("user", retry_text.format(error=told)),
            ]
    reason: FallbackReason = "truncated" if cut else "unusable"
    return decision.fail(reason, error or "no usable reply", retries=harness.parse_retries)


Sent = tuple[ModelReply, Cleared, Usage, dict[str, Any] | None]


async def _send(
    backend: ModelBackend,
    request: ModelRequest,
    mode: OutputMode,
    guard: Guard | None,
    decision: DecisionRecord,
) -> Sent | Outcome:
    """Send one request: the first in its mode alone, then within the server's slots, checked
    against the context window and the caps (and reserved) once it may go; its reply, clearance,
    usage and cap breach, or the outcome of a decision that ends here."""
    endpoint = guard.endpoint if guard is not None else None
    first = await endpoint.first_request(mode) if endpoint is not None else False
    served = False
    try:
        if endpoint is not None and endpoint.rejected(mode):  # the first request found out
            reason = endpoint.rejected(mode) or ""
            return decision.fail("config", mode_rejected_message(mode, reason))
        # the slot is held from the check on: a window another request of this run learnt
        # while this one waited is known to the check, and nothing waits in the server's queue
        async with endpoint.slot() if endpoint is not None else contextlib.nullcontext():
            cleared = Cleared(None, None)
            if guard is not None:
                checked = await guard.check(request)
                if isinstance(checked, NoRoom):
                    return decision.fail("context", checked.message, context=checked.to_json())
                if isinstance(checked, Capped):
                    return decision.fail("cap", checked.reason)
                cleared = checked
            try:
                reply = await backend.complete(request)
                served = True
            except ContextLengthExceeded as exc:
                served = True  # the server took the mode; the prompt was too long
                _settle(guard, request, cleared, None, Usage())
                if endpoint is not None:
                    endpoint.answered_once = True
                    if exc.window is not None:
                        endpoint.learn_window(exc.window, "error")
                return decision.fail(
                    "context", f"context: {exc.message}", context={"server_error": exc.to_json()}
                )
            except ModelError as exc:
                _settle(guard, request, cleared, None, Usage())
                if endpoint is not None and exc.status is not None:
                    endpoint.answered_once = True  # an HTTP answer, if not a reply
                if is_mode_rejection(exc, mode):
                    if endpoint is not None:
                        endpoint.reject(mode, exc.message)
                    return decision.fail(
                        "config", mode_rejected_message(mode, exc.message), config=exc.to_json()
                    )
                return decision.outage(exc.to_json(), str(exc))
            except Exception as exc:  # a backend bug must not end the game either
                _settle(guard, request, cleared, None, Usage())
                log.exception("backend %s failed unexpectedly", backend.spec)
                detail = {"error": type(exc).__name__, "message": str(exc)}
                return decision.outage(detail, repr(exc))
        if endpoint is not None and not reply.cached:
            endpoint.answered_once = True
    finally:
        if first and endpoint is not None:
            endpoint.answered(mode, served)
    if mode == "tool" and reply.tool_arguments is None:
        decision.notices.append(
            {
                "kind": "mode_ignored",
                "mode": "tool",
                "detail": "no tool call came back (a server that ignores tool_choice, such as "
                "llama.cpp's, never shows the model the tool): output_mode=auto picks a mode "
                "the server honours",
            }
        )
    call_usage = priced(backend, reply)
    breach = _settle(guard, request, cleared, reply, call_usage)
    return reply, cleared, call_usage, breach


def _settle(
    guard: Guard | None,
    request: ModelRequest,
    cleared: Cleared,
    reply: ModelReply | None,
    usage: Usage,
) -> dict[str, Any] | None:
    return None if guard is None else guard.settle(request, cleared, reply, usage)


def prompt_text(request: ModelRequest) -> str:
    """Everything a request makes the model read, in order: system, then each message."""
    return "\n\n".join([request.system, *(m.content for m in request.messages)])


def prefix_share(previous: str, current: str) -> float:
    """The share of ``current``'s bytes that equal the start of ``previous`` (prompt caching).

    >>> prefix_share("rules|turn 1", "rules|turn 2")
    0.9166666666666666
    """
    a, b = previous.encode(), current.encode()
    n = 0
    limit = min(len(a), len(b))
    # compare in blocks first: prompts share long prefixes
    step = 4096
    while n + step <= limit and a[n : n + step] == b[n : n + step]:
        n += step
    while n < limit and a[n] == b[n]:
        n += 1
    return n / len(b) if b else 1.0
