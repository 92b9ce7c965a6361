"""Model settings: what a backend sends with every request, recorded with each game.

One frozen pydantic model for every backend (hosted models through pydantic-ai, local ones through
Ollama), so a game's settings are one JSON object in the journal and the cache key of a request.

    >>> settings = ModelSettings(temperature=0.2, max_output_tokens=400)
    >>> settings.num_ctx, settings.think, settings.timeout_s
    (8192, False, 60.0)
    >>> ModelSettings(temperature=5)
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelSettings
    temperature
      Input should be less than or equal to 2 ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

OutputMode = Literal["tool", "native", "grammar", "json_object", "prompted"]
"""How the reply object is asked for: a tool call, the provider's native JSON-schema output, the
schema as a grammar that constrains decoding (llama.cpp's ``response_format: {"type":
"json_object", "schema": ...}``), the server's JSON mode (``response_format: json_object``,
Ollama ``format: "json"``), or JSON written in plain text as the prompt asks; in the last three
the schema is in the prompt too."""

OUTPUT_MODES: tuple[OutputMode, ...] = ("tool", "native", "grammar", "json_object", "prompted")

HarnessOutputMode = Literal["auto", "tool", "native", "grammar", "json_object", "prompted"]
"""An output mode as a harness setting: one of :data:`OUTPUT_MODES`, or ``"auto"`` (probe the
server once and take the best mode it really honours)."""

#: The modes ``auto`` tries, best first (:mod:`llm_policies.capabilities`).
AUTO_MODES: tuple[OutputMode, ...] = ("native", "grammar", "json_object", "prompted")

ReasoningEffort = Literal["none", "low", "medium", "high"]

# Settings that change how a request travels or where it goes, but not what the model answers:
# left out of the response-cache key, so a rerun with a longer timeout, or the same model behind
# another port or proxy, still reuses the recorded replies.
TRANSPORT_ONLY_FIELDS: frozenset[str] = frozenset(
    {"timeout_s", "retries", "keep_alive", "base_url", "context_window", "slots"}
)


class ModelSettings(BaseModel):
    """Sampling, transport and local-model settings of one model for one game.

    Attributes:
        temperature: sampling temperature (0 to 2); ``None`` leaves the provider's default.
        max_output_tokens: cap on the reply's tokens; ``None`` leaves the provider's default.
        seed: sampling seed, for providers that honour one (OpenAI, Ollama).
        reasoning_effort: ``"none"`` turns thinking off; ``"low"``/``"medium"``/``"high"`` ask for
            that much reasoning where the model supports it; ``None`` leaves the model's default.
        timeout_s: deadline of one call (the whole request and reply, not one socket read).
        retries: how many times a rate-limited (429), failing (5xx), timed-out, unreadable or
            stalled call is retried, with exponential backoff and jitter, before the model counts
            as unavailable.
        num_ctx: Ollama context size in tokens, set on every request (8192 by default); also the
            context window the harness keeps prompts inside for Ollama models.
        context_window: the server's context size in tokens, when you know it (a llama.cpp
            ``--ctx-size``, a vLLM ``--max-model-len``); ``None`` asks the server where it can
            tell (llama.cpp ``/props``, vLLM ``/v1/models``) or learns it from its first
            context-length error. Prompts are kept inside it (see docs/llm.md, "Context").
        keep_alive: Ollama keep-alive of the loaded model (``"5m"``, ``"-1"``...).
        think: Ollama thinking (off by default).
        base_url: where the backend sends its requests (an OpenAI-compatible server, a proxy, a
            remote Ollama host); ``None`` uses the provider's environment variable or default.
        slots: requests a local server serves at once (a llama.cpp ``--parallel``, Ollama's
            ``OLLAMA_NUM_PARALLEL``); ``None`` asks the server where it tells (llama.cpp
            ``/props`` ``total_slots``; llama-cpp-python serves one; vLLM's ``/server_info``
            ``max_num_seqs`` in its development mode, else no limit; Ollama does not say over
            HTTP: 1, its default). The requests of a run to the server never exceed it, so
            none waits out its deadline in the server's queue (see docs/llm.md, "Capacity").
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    seed: int | None = None
    reasoning_effort: ReasoningEffort | None = None
    timeout_s: float = Field(default=60.0, gt=0.0)
    retries: int = Field(default=4, ge=0, le=20)
    num_ctx: int = Field(default=8192, ge=256)
    context_window: int | None = Field(default=None, ge=256)
    keep_alive: str | None = None
    think: bool = False
    base_url: str | None = None
    slots: int | None = Field(default=None, ge=1)

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise ValueError(
                f"base_url must be an http:// or https:// URL with a host, got {value!r} "
                "(for example 'http://localhost:8000/v1')"
            )
        return value

    def cache_fields(self) -> dict[str, object]:
        """The settings that can change a reply (the response cache's part of the key)."""
        return self.model_dump(mode="json", exclude=set(TRANSPORT_ONLY_FIELDS))


#: The settings that go out with each request (the sampling ones), in the order they are sent.
REQUEST_FIELDS: tuple[str, ...] = ("temperature", "max_output_tokens", "seed", "reasoning_effort")
#: The request settings under the OpenAI API's names, which Inspect's ``GenerateConfig`` and
#: verifiers' sampling arguments use too.
OPENAI_NAMES: Final = {
    "temperature": "temperature",
    "max_output_tokens": "max_tokens",
    "seed": "seed",
    "reasoning_effort": "reasoning_effort",
}
#: Wire names of the reasoning effort that take thinking on or off: ``"none"`` goes as ``False``.
_THINKING_NAMES = frozenset({"thinking", "think"})


def request_values(settings: ModelSettings, names: Mapping[str, str]) -> dict[str, Any]:
    """The one mapping from model settings to a request: each of :data:`REQUEST_FIELDS` that
    ``names`` maps (setting -> the wire's field) and that is set, under the wire's name; a
    setting left at ``None`` is not sent (the provider's default). A reasoning effort sent as
    ``thinking``/``think`` is ``False`` for ``"none"``, else the effort.

    Every backend builds its request from it (pydantic-ai's model settings, Ollama's options,
    Inspect's ``GenerateConfig``).

    >>> request_values(ModelSettings(temperature=0.2, reasoning_effort="none"),
    ...                {"temperature": "temperature", "reasoning_effort": "thinking"})
    {'temperature': 0.2, 'thinking': False}
    """
    unknown = set(names) - set(REQUEST_FIELDS)
    if unknown:
        raise ValueError(
            f"not request settings: {sorted(unknown)}; choose among {', '.join(REQUEST_FIELDS)}"
        )
    out: dict[str, Any] = {}
    for field in REQUEST_FIELDS:
        wire = names.get(field)
        value = getattr(settings, field)
        if wire is None or value is None:
            continue
        if field == "reasoning_effort" and wire in _THINKING_NAMES:
            value = False if value == "none" else value
        out[wire] = value
    return out


def settings_values(values: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """:func:`request_values` read backwards: the model settings that a framework's sampling
    ``values`` (under the wire's ``names``) set; a reasoning effort this project does not name
    (``minimal``...) is left out.

    >>> settings_values({"max_tokens": 64, "seed": None, "reasoning_effort": "xhigh"}, OPENAI_NAMES)
    {'max_output_tokens': 64}
    """
    out: dict[str, Any] = {}
    for field, wire in names.items():
        value = values.get(wire)
        if value is None:
            continue
        if field == "reasoning_effort" and value not in get_args(ReasoningEffort):
            continue
        out[field] = value
    return out
