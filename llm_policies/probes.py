"""Probing what output modes a model server honours: one cheap request per mode.

A probe asks for nothing JSON-shaped itself ("Say hello."), so a server that ignores the mode's
feature answers in prose. A mode is *honoured* when a JSON object comes back (``grammar``: the
one value its probe schema allows, which a server that ignores the schema would not make a model
write unasked); *rejected* when the error names the mode's feature (``json_schema``,
``response_format``, ``tools``...); *ignored* when the reply is prose (or, for ``grammar``, not
the one allowed value); *inconclusive* on another lasting error; *uncached* when a read-only
response cache does not hold the probe. :mod:`llm_policies.capabilities` runs the probes once
per endpoint and run and keeps the choice.

    >>> json_object_in('<think>{"no": 1}</think> sure: {"ok": true}')
    {'ok': True}
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final, Literal

from llm_policies.backends.base import ChatMessage, ModelBackend, ModelError, ModelRequest
from llm_policies.cache import CacheMiss
from llm_policies.settings import ModelSettings, OutputMode

ProbeStatus = Literal["honoured", "ignored", "rejected", "inconclusive", "uncached"]
#: The reply schema of a mode probe: tiny, so the probe costs a few tokens.
PROBE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
#: The grammar probe's schema: one value, which only a server that constrains decoding to the
#: schema makes a model write unasked.
GRAMMAR_PROBE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["grammar-ok"]}},
    "required": ["answer"],
    "additionalProperties": False,
}
GRAMMAR_PROBE_ANSWER: Final = {"answer": "grammar-ok"}
PROBE_OUTPUT_TOKENS: Final = 48
# what an HTTP error body says when the server rejects a request feature of an output mode
_MODE_FEATURES: Final = re.compile(
    r"json_schema|json_object|response_format|tool_choice|\btools?\b|grammar|"
    r"Input should be 'text'|structured output|invalid format",
    re.IGNORECASE,
)
_THINK: Final = re.compile(r"<(think|thinking)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class ModeProbe:
    """What one probe request of an output mode found."""

    mode: OutputMode
    status: ProbeStatus
    detail: str
    latency_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "status": self.status,
            "detail": self.detail,
            "latency_s": round(self.latency_s, 6),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModeProbe:
        return cls(
            data["mode"],
            data["status"],
            data["detail"],
            float(data.get("latency_s", 0.0)),
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
        )


@dataclass(frozen=True)
class ModeChoice:
    """The output mode ``auto`` chose for an endpoint, and the probes behind the choice."""

    mode: OutputMode
    probes: tuple[ModeProbe, ...]

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "probes": [p.to_json() for p in self.probes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModeChoice:
        return cls(data["mode"], tuple(ModeProbe.from_json(p) for p in data["probes"]))


def is_mode_rejection(error: ModelError, mode: OutputMode) -> bool:
    """Whether ``error`` is the server refusing the request feature of output ``mode``.

    A permanent rejection (an HTTP 4xx, or a 5xx reporting a validation error) whose body names the
    feature (``json_schema``, ``response_format``, ``tools``...) of a mode that sends one.

    >>> error = ModelError("status_code: 500, body: Input should be 'text' or 'json_object'",
    ...                    kind="refused", status=500, permanent=True)
    >>> is_mode_rejection(error, "native"), is_mode_rejection(error, "prompted")
    (True, False)
    """
    if mode == "prompted" or error.kind not in ("refused", "config"):
        return False
    if error.kind == "config":
        return True
    return bool(
        error.permanent
        or (
            error.status is not None
            and HTTPStatus.BAD_REQUEST <= error.status < HTTPStatus.INTERNAL_SERVER_ERROR
        )
    ) and (bool(_MODE_FEATURES.search(error.message)))


def json_object_in(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (after any ``<think>`` block), or ``None``.

    >>> json_object_in('<think>{"no": 1}</think> sure: {"ok": true}')
    {'ok': True}
    >>> json_object_in("Hello there!") is None
    True
    """
    if not text:
        return None
    text = _THINK.sub("", text)
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None


def _probe_system(mode: OutputMode) -> str:
    if mode in ("json_object", "prompted"):
        return (
            "Answer with exactly one JSON object and nothing else. It must follow this JSON "
            f"schema:\n{json.dumps(PROBE_SCHEMA)}"
        )
    return "You are a helpful assistant."


def probe_request(mode: OutputMode, settings: ModelSettings) -> ModelRequest:
    """The cheap request that probes output ``mode`` (it asks for nothing JSON-shaped itself:
    a server that ignores the mode's feature answers in prose)."""
    return ModelRequest(
        system=_probe_system(mode),
        messages=(ChatMessage("user", "Say hello."),),
        output_mode=mode,
        schema=GRAMMAR_PROBE_SCHEMA if mode == "grammar" else PROBE_SCHEMA,
        schema_name="probe",
        settings=settings.model_copy(
            update={
                "max_output_tokens": PROBE_OUTPUT_TOKENS,
                "temperature": 0.0,
                "retries": min(settings.retries, 2),
            }
        ),
        cache_key_extra="capability-probe",
    )


async def probe_mode(backend: ModelBackend, mode: OutputMode, settings: ModelSettings) -> ModeProbe:
    """Send output ``mode``'s probe and say what came back (see the module docstring).

    Raises :class:`~llm_policies.backends.base.ModelUnavailable` when the server cannot be
    reached.
    """
    started = time.perf_counter()
    try:
        reply = await backend.complete(probe_request(mode, settings))
    except CacheMiss:
        # a read-only cache without this probe (a rejected probe is not cached): the server
        # is not asked, and the mode is passed over
        return ModeProbe(mode, "uncached", "not in the read-only response cache")
    except ModelError as error:
        if is_mode_rejection(error, mode):
            return ModeProbe(mode, "rejected", error.message[:400])
        if error.kind in ("refused", "config", "context") or error.permanent:
            return ModeProbe(mode, "inconclusive", error.message[:400])
        raise
    latency = time.perf_counter() - started
    tokens = (reply.usage.input_tokens, reply.usage.output_tokens)
    said = reply.text if reply.text else reply.tool_arguments
    if mode == "tool" and reply.tool_arguments is None:
        excerpt = (reply.text or "")[:120]
        return ModeProbe(
            mode,
            "ignored",
            f"no tool call came back (the server ignores tool_choice): {excerpt!r}",
            latency,
            *tokens,
        )
    found = json_object_in(said)
    if mode == "grammar" and found is not None and found != GRAMMAR_PROBE_ANSWER:
        excerpt = (said or "")[:120]
        return ModeProbe(
            mode,
            "ignored",
            f"the schema did not constrain the reply: {excerpt!r}",
            latency,
            *tokens,
        )
    if found is not None:
        return ModeProbe(mode, "honoured", "a JSON object came back", latency, *tokens)
    excerpt = (said or "")[:120]
    return ModeProbe(
        mode, "ignored", f"the reply was not a JSON object: {excerpt!r}", latency, *tokens
    )
