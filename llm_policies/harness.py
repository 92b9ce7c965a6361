"""The harness of the LLM policies: its settings, and one decision (call, parse, retry, record).

Every choice that changed how models played in the Maze Escape study is a field of
:class:`HarnessSettings`, validated, and reported by ``policy.harness()`` for the game's meta in
the journal. :func:`decide` is the loop both policies share:

1. send the request (the backend retries 429/5xx/timeouts itself);
2. parse the raw reply with the named quirk rules (:mod:`llm_policies.parsing`);
3. on an unusable reply, re-ask with the reason, up to ``parse_retries`` times;
4. give back the values, or ``fallback`` (still unusable) or ``outage`` (the model could not be
   reached: :class:`~llm_policies.backends.base.ModelUnavailable`, or any other backend failure),
   with a record of every attempt for the journal. It never raises because of a model.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llm_policies.accounting import price
from llm_policies.backends.base import (
    ChatMessage,
    ModelBackend,
    ModelError,
    ModelReply,
    ModelRequest,
)
from llm_policies.history import HistoryKind
from llm_policies.parsing import ParseResult, parse_reply
from llm_policies.prompts import load
from llm_policies.schema import Check, ReplySchema
from llm_policies.settings import ModelSettings, OutputMode
from maze_envs.policies.interface import Usage

log = logging.getLogger(__name__)

Status = Literal["ok", "fallback", "outage"]


class HarnessSettings(BaseModel):
    """Every harness choice of an LLM policy (recorded with each game).

    Attributes:
        prompt_version: Maze Escape: a rung of the ladder (``llm_policies.prompts``) or
            ``"latest"``; AGI Maze: ``"v1"`` (``"latest"`` means it too).
        wording: the observation wording version of :mod:`maze_envs.text` (None: newest).
        output_mode: ``"tool"``, ``"native"`` or ``"prompted"``.
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
    output_mode: OutputMode = "tool"
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


@dataclass
class Outcome:
    """What one decision came to: the values (ok), or the status and error, and its record."""

    status: Status
    values: dict[str, Any] | None
    usage: Usage
    record: dict[str, Any]
    error: str | None = None
    quirks: Counter[str] = field(default_factory=Counter)


def _raw(reply: ModelReply) -> dict[str, Any]:
    return {"text": reply.text, "tool_arguments": reply.tool_arguments}


def _assistant_echo(reply: ModelReply) -> str:
    # what the model sent, so the retry message can point at it
    if reply.tool_arguments is not None:
        return reply.tool_arguments
    return reply.text or ""


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
    check_values: Callable[[dict[str, Any]], str | None] | None = None,
    previous_messages: Sequence[ChatMessage] | None = None,
    cache_key_extra: str = "",
) -> Outcome:
    """One decision; see the module docstring. ``check_values`` rejects parsed values
    (e.g. an action the labyrinth does not offer right now) with a reason for the retry."""
    retry_text = load("escape/reply.toml")["retry"]["invalid"]
    conversation = list(messages)
    usage = Usage()
    quirks: Counter[str] = Counter()
    attempts: list[dict[str, Any]] = []
    record: dict[str, Any] = {
        "model": backend.spec,
        "system": blob(system),
        "messages": encode_messages(messages, previous_messages),
        "schema_name": schema.name,
        "schema": blob(schema.schema_text),
        "fields": list(schema.fields),
        "output_mode": harness.output_mode,
        "attempts": attempts,
    }
    error: str | None = None
    for attempt in range(harness.parse_retries + 1):
        request = ModelRequest(
            system=system,
            messages=tuple(conversation),
            output_mode=harness.output_mode,
            schema=schema.json_schema,
            schema_name=schema.name,
            settings=settings,
            cache_key_extra=cache_key_extra,
        )
        try:
            reply = await backend.complete(request)
        except ModelError as exc:
            return _outage(record, usage, quirks, exc.to_json(), str(exc))
        except Exception as exc:  # a backend bug must not end the game either
            log.exception("backend %s failed unexpectedly", backend.spec)
            return _outage(
                record, usage, quirks, {"error": type(exc).__name__, "message": str(exc)}, repr(exc)
            )
        call_usage = priced(backend, reply)
        usage = usage + call_usage
        result: ParseResult = parse_reply(
            reply.text, reply.tool_arguments, schema, harness.output_mode
        )
        quirks.update(result.quirks)
        error = result.error
        if result.values is not None and check_values is not None:
            error = check_values(result.values)
        attempts.append(
            {
                "raw": _raw(reply),
                "reply_model": reply.model,
                "provider_reply": reply.raw,
                "quirks": result.quirks,
                "error": error,
                "usage": call_usage.to_json(),
                "latency_s": reply.latency_s,
                "cached": reply.cached,
                "transport_retries": [a.to_json() for a in reply.retries],
            }
        )
        if error is None and result.values is not None:
            record.update(values=result.values, status="ok", retries=attempt)
            record.update(quirks=dict(quirks), usage=usage.to_json())
            return Outcome("ok", result.values, usage, record, None, quirks)
        if attempt < harness.parse_retries:
            conversation += [
                ChatMessage("assistant", _assistant_echo(reply) or "(empty reply)"),
                ChatMessage("user", retry_text.format(error=error)),
            ]
    record.update(values=None, status="fallback", retries=harness.parse_retries, error=error)
    record.update(quirks=dict(quirks), usage=usage.to_json())
    return Outcome("fallback", None, usage, record, error, quirks)


def _outage(
    record: dict[str, Any],
    usage: Usage,
    quirks: Counter[str],
    detail: dict[str, Any],
    message: str,
) -> Outcome:
    record.update(values=None, status="outage", error=message, outage=detail)
    record.update(quirks=dict(quirks), usage=usage.to_json(), retries=len(record["attempts"]))
    return Outcome("outage", None, usage, record, message, quirks)


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


def json_text(value: Any) -> str:
    """Compact JSON with the keys as given (for assistant echoes in a history)."""
    return json.dumps(value, ensure_ascii=False)
