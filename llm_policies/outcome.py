"""What one decision of an LLM policy came to, and its record as its attempts come in.

:class:`Outcome` is what :func:`llm_policies.harness.decide` returns: the values, or the status
(``fallback``, ``outage``) with why (:data:`FallbackReason`) and the error, and the record the
journal keeps. :class:`DecisionRecord` builds that record attempt by attempt (each call's raw
reply, quirks, usage, transport retries, cap breach, truncation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from llm_policies.backends.base import ModelReply
from llm_policies.guard import Cleared
from llm_policies.parsing import ParseResult
from llm_policies.settings import OutputMode
from maze_envs.policies.interface import Usage

__all__ = [
    "DecisionRecord",
    "FallbackReason",
    "Outcome",
    "Status",
    "mode_rejected_message",
    "truncation_message",
]

Status = Literal["ok", "fallback", "outage"]
#: Why a decision fell back: no usable reply after the re-asks; the last reply was cut at the
#: output cap before it was complete (raise ``max_output_tokens``); a prompt over the context
#: window; a configuration the server rejects (an output mode); a cap that the next request
#: would break (the request was not sent).
FallbackReason = Literal["unusable", "truncated", "context", "config", "cap"]


@dataclass
class Outcome:
    """What one decision came to: the values (ok), or the status and error, and its record.

    ``reason`` says why a ``fallback`` happened (:data:`FallbackReason`); ``quirks`` are the
    successful attempt's (a failed attempt's quirks are in the record's ``failed_quirks``);
    ``notices`` what the backend and the checks noticed (context warnings, cap breaches), for
    the game's record.
    """

    status: Status
    values: dict[str, Any] | None
    usage: Usage
    record: dict[str, Any]
    error: str | None = None
    quirks: Counter[str] = field(default_factory=Counter)
    notices: list[dict[str, Any]] = field(default_factory=list)
    reason: FallbackReason | None = None


def _raw(reply: ModelReply) -> dict[str, Any]:
    return {"text": reply.text, "tool_arguments": reply.tool_arguments}


def truncation_message(written: int, cap: int | None) -> str:
    """The error of a reply cut at the output cap, with what to change.

    >>> truncation_message(48, 48)
    'truncated: the reply was cut off at the output cap (48 tokens written, max_output_tokens=48) before it was complete; raise max_output_tokens'
    """  # noqa: E501
    where = f"max_output_tokens={cap}" if cap is not None else "the server's own limit"
    return (
        f"truncated: the reply was cut off at the output cap ({written} tokens written, {where}) "
        "before it was complete; raise max_output_tokens"
    )


def mode_rejected_message(mode: OutputMode, detail: str) -> str:
    """The configuration error of a server that rejects output ``mode``, with what to change.

    >>> print(mode_rejected_message("native", "x: status_code: 500, body: Input should be "
    ...                             "'text' or 'json_object'"))
    config: the server rejects output_mode='native' (Input should be 'text' or 'json_object');
    set output_mode=auto (probes the server and picks a mode it honours) or one of grammar,
    json_object, prompted
    """
    others = ", ".join(m for m in ("grammar", "json_object", "prompted") if m != mode)
    _, found, body = detail.partition("body: ")
    short = " ".join((body if found else detail).split())
    short = short if len(short) <= 200 else short[:200] + "..."
    return (
        f"config: the server rejects output_mode={mode!r} ({short}); set "
        f"output_mode=auto (probes the server and picks a mode it honours) or one of {others}"
    )


@dataclass
class DecisionRecord:
    """The record and totals of one decision as its attempts come in."""

    record: dict[str, Any]
    usage: Usage = field(default_factory=Usage)
    failed_quirks: Counter[str] = field(default_factory=Counter)
    notices: list[dict[str, Any]] = field(default_factory=list)
    cap_breaches: int = 0

    def add_attempt(
        self,
        reply: ModelReply,
        usage: Usage,
        result: ParseResult,
        error: str | None,
        cleared: Cleared,
        breach: dict[str, Any] | None,
        truncated: bool = False,
    ) -> None:
        self.usage = self.usage + usage
        self.notices.extend(reply.notices)
        entry: dict[str, Any] = {
            "raw": _raw(reply),
            "reply_model": reply.model,
            "provider_reply": reply.raw,
            "quirks": result.quirks,
            "error": error,
            "usage": usage.to_json(),
            "latency_s": reply.latency_s,
            "cached": reply.cached,
            "transport_retries": [a.to_json() for a in reply.retries],
            "finish_reason": reply.finish_reason,
        }
        if truncated:
            entry["error_kind"] = "truncated"
        if cleared.count is not None:
            entry["prompt_tokens_before"] = cleared.count.to_json()
        if breach is not None:
            entry["cap_breach"] = breach
            self.cap_breaches += 1
            self.notices.append({"kind": "cap_breach", **breach})
        self.record["attempts"].append(entry)

    def _outcome(
        self, status: Status, values: dict[str, Any] | None, retries: int, error: str | None
    ) -> Outcome:
        self.record.update(values=values, status=status, retries=retries)
        self.record.update(usage=self.usage.to_json(), failed_quirks=dict(self.failed_quirks))
        if self.cap_breaches:
            self.record["cap_breaches"] = self.cap_breaches
        return Outcome(status, values, self.usage, self.record, error, notices=self.notices)

    def ok(
        self,
        values: dict[str, Any],
        retries: int,
        quirks: Mapping[str, int],
        rejected: Mapping[str, str] | None = None,
    ) -> Outcome:
        self.record["quirks"] = dict(quirks)
        if rejected:  # salvaged: these fields were out of range and are not played
            self.record["rejected_fields"] = dict(rejected)
        outcome = self._outcome("ok", values, retries, None)
        outcome.quirks = Counter(quirks)
        return outcome

    def fail(
        self, reason: FallbackReason, error: str, *, retries: int | None = None, **detail: Any
    ) -> Outcome:
        self.record.update(error=error, fallback_reason=reason, quirks={}, **detail)
        tries = len(self.record["attempts"]) if retries is None else retries
        outcome = self._outcome("fallback", None, tries, error)
        outcome.reason = reason
        return outcome

    def outage(self, detail: dict[str, Any], message: str) -> Outcome:
        self.record.update(error=message, outage=detail, quirks={})
        return self._outcome("outage", None, len(self.record["attempts"]), message)
