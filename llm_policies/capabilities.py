"""What a model server really does: output modes it honours, its context window, its tokenizer.

Servers that speak the same protocol differ. llama.cpp's server ignores ``tool_choice`` (the model
never sees the tools and writes prose), rejects ``response_format`` ``json_schema`` with HTTP 500
("Input should be 'text' or 'json_object'") and reads ``max_tokens`` but not
``max_completion_tokens``; Ollama cuts prompts longer than ``num_ctx`` silently. So the harness
asks each endpoint (model spec and base URL) once per process, and keeps the answers here:

* :meth:`Endpoint.pick_mode` (``output_mode="auto"``): one cheap request per candidate mode, best
  first (:data:`~llm_policies.settings.AUTO_MODES`: native JSON schema, then the schema as a
  grammar (llama.cpp), then ``json_object`` with the schema in the prompt, then prompted, which
  needs no probe). A mode *honoured* got a JSON object back (``grammar``: the one value its
  schema allows, which a server that ignores the schema would not write); *rejected* got an
  error that names the mode's feature (a configuration error, remembered: never sent again);
  *ignored* got an answer that is not JSON, or for ``grammar`` not the one allowed (the server
  dropped the feature); *inconclusive* got another lasting error (the mode is tried in play, where a
  rejection moves ``auto`` on to the next mode); *uncached* is a probe a read-only response cache
  does not hold (passed over). The first honoured or inconclusive mode is chosen, and the probes
  are recorded with every game that uses them.
* :meth:`Endpoint.first_request` / :meth:`Endpoint.answered`: the first request in an output
  mode to an endpoint goes alone (the agents of a turn ask at once); until it is answered the
  others wait, so a mode the server rejects costs one request and one configuration error, not
  one per agent;
* :meth:`Endpoint.discover`: the context window, from the ``context_window`` setting, Ollama's
  ``num_ctx``, llama.cpp's ``GET /props`` (``n_ctx``), an OpenAI-compatible ``GET /v1/models``
  that tells it (vLLM ``max_model_len``, LM Studio ``max_context_length``), genai-prices for
  hosted models; else it stays unknown until a context-length error names it
  (:meth:`Endpoint.learn_window`). Also the server's tokenizer, when it has one on HTTP
  (llama-cpp-python ``/extras/tokenize/count``, llama.cpp ``/tokenize``); the HTTP questions are
  :mod:`llm_policies.server_info`'s.
* :class:`~llm_policies.tokens.TokenRate`: prompt tokens per byte as this endpoint reports them.

Only local servers (``local=True``, Ollama) are asked over HTTP beyond the chat endpoint; hosted
APIs are probed for modes only when ``auto`` is asked for.

    >>> endpoint = Endpoint(("openai-chat:m", "http://127.0.0.1:8080/v1"))
    >>> endpoint.learn_window(2048, "error")
    >>> endpoint.context_window, endpoint.context_source
    (2048, 'error')
    >>> endpoint.reject("native", "HTTP 500: Input should be 'text' or 'json_object'")
    >>> endpoint.rejected("native")
    "HTTP 500: Input should be 'text' or 'json_object'"
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Final, Literal, TypeVar

from llm_policies.backends.base import ChatMessage, ModelBackend, ModelError, ModelRequest
from llm_policies.cache import CacheMiss
from llm_policies.server_info import Tokenizer, context_window, count_tokens_with, find_tokenizer
from llm_policies.settings import AUTO_MODES, ModelSettings, OutputMode
from llm_policies.tokens import TokenRate

T = TypeVar("T")

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


@dataclass(frozen=True)
class ModeChoice:
    """The output mode ``auto`` chose for an endpoint, and the probes behind the choice."""

    mode: OutputMode
    probes: tuple[ModeProbe, ...]

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "probes": [p.to_json() for p in self.probes]}


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


@dataclass
class Endpoint:
    """What is known about one model behind one base URL (see the module docstring)."""

    key: tuple[str, str | None]
    context_window: int | None = None
    context_source: str | None = None
    #: ``(kind, url)`` of the server's tokenizer: ``("llama-cpp-python", ".../count")``
    tokenizer: Tokenizer | None = None
    choice: ModeChoice | None = None
    #: modes a request was answered in (no longer gated, see :meth:`first_request`)
    confirmed: set[str] = field(default_factory=set)
    rate: TokenRate = field(default_factory=TokenRate)
    discovered: bool = False
    _rejected: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _pending: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = field(
        default_factory=dict, repr=False
    )
    _gates: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(
        default_factory=dict, repr=False
    )

    # --- what was learnt -------------------------------------------------------------------

    def learn_window(self, window: int, source: str) -> None:
        """The context window is ``window`` tokens (from ``source``); a smaller one wins."""
        with self._lock:
            if self.context_window is None or window < self.context_window:
                self.context_window, self.context_source = window, source

    def reject(self, mode: OutputMode, reason: str) -> None:
        """The server rejects output ``mode``: never send it again in this process."""
        with self._lock:
            self._rejected.setdefault(mode, reason[:400])

    def rejected(self, mode: OutputMode) -> str | None:
        """Why the server rejects ``mode`` (``None``: not known to reject it)."""
        return self._rejected.get(mode)

    def to_json(self) -> dict[str, Any]:
        """The endpoint's capabilities, for the game's record."""
        return {
            "model": self.key[0],
            "base_url": self.key[1],
            "context_window": self.context_window,
            "context_source": self.context_source,
            "tokenizer": self.tokenizer[0] if self.tokenizer else None,
            "rejected_modes": dict(self._rejected),
            "auto": self.choice.to_json() if self.choice else None,
        }

    # --- asking once -----------------------------------------------------------------------

    async def _once(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        """``await make()`` once per event loop for concurrent callers; a failure is not kept."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._pending.get(what)
            reuse = entry is not None and entry[0] is loop
            if reuse and entry is not None and entry[1].done() and entry[1].exception():
                reuse = False
            if reuse and entry is not None:
                task = entry[1]
            else:
                task = loop.create_task(make())  # type: ignore[arg-type]
                self._pending[what] = (loop, task)
        result: T = await asyncio.shield(task)
        return result

    async def pick_mode(self, backend: ModelBackend, settings: ModelSettings) -> ModeChoice:
        """The best output mode the server honours (probed once; see the module docstring).

        Raises :class:`~llm_policies.backends.base.ModelUnavailable` when the server cannot be
        reached (nothing is remembered then: the next decision asks again).
        """
        if self.choice is not None:
            return self.choice
        return await self._once("mode", lambda: self._probe_modes(backend, settings))

    async def first_request(self, mode: OutputMode) -> bool:
        """Wait while another decision's first request in ``mode`` is in flight.

        Returns True when the caller's request is now the first in ``mode`` (it must then call
        :meth:`answered`), False when the mode was answered already (or is rejected: check
        :meth:`rejected`).
        """
        while mode not in self.confirmed and mode not in self._rejected:
            loop = asyncio.get_running_loop()
            with self._lock:
                gate = self._gates.get(mode)
                if gate is None or gate[0] is not loop:
                    self._gates[mode] = (loop, asyncio.Event())
                    return True
                event = gate[1]
            await event.wait()
        return False

    def answered(self, mode: OutputMode, served: bool) -> None:
        """The first request in ``mode`` came back: ``served`` (the server took the mode) or
        not (an outage, a rejection: the next waiting request goes first)."""
        with self._lock:
            if served:
                self.confirmed.add(mode)
            gate = self._gates.pop(mode, None)
        if gate is not None:
            gate[1].set()

    async def _probe_modes(self, backend: ModelBackend, settings: ModelSettings) -> ModeChoice:
        served = getattr(backend, "output_modes", AUTO_MODES)
        probes: list[ModeProbe] = []
        chosen: OutputMode = "prompted"
        for mode in AUTO_MODES:
            if mode not in served:
                continue
            if mode == "prompted":
                break  # needs nothing of the server: the last resort
            if self.rejected(mode):
                probes.append(ModeProbe(mode, "rejected", self.rejected(mode) or ""))
                continue
            probe = await self._probe(backend, mode, settings)
            probes.append(probe)
            if probe.status == "rejected":
                self.reject(mode, probe.detail)
            if probe.status in ("honoured", "inconclusive"):
                chosen = mode
                break
        choice = ModeChoice(chosen, tuple(probes))
        self.choice = choice
        return choice

    async def _probe(
        self, backend: ModelBackend, mode: OutputMode, settings: ModelSettings
    ) -> ModeProbe:
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

    async def discover(self, backend: ModelBackend, settings: ModelSettings, local: bool) -> None:
        """Learn the context window and tokenizer once (see the module docstring)."""
        if self.discovered:
            return
        await self._once("discover", lambda: self._discover(backend, settings, local))

    async def _discover(self, backend: ModelBackend, settings: ModelSettings, local: bool) -> None:
        spec, base_url = self.key
        prefix = spec.partition(":")[0]
        if settings.context_window is not None:
            self.learn_window(settings.context_window, "option")
        elif prefix == "ollama":
            self.learn_window(settings.num_ctx, "num_ctx")
        elif local and base_url:
            told = await context_window(base_url, spec.partition(":")[2])
            if told is not None:
                self.learn_window(*told)
        if self.context_window is None:
            known = getattr(backend, "context_window", None)
            if isinstance(known, int) and known > 0:
                self.learn_window(known, "genai-prices")
        if local and base_url and prefix != "ollama" and self.tokenizer is None:
            self.tokenizer = await find_tokenizer(base_url)
        self.discovered = True

    async def count_exact(self, text: str) -> int | None:
        """Tokens of ``text`` by the server's tokenizer (``None`` without one, or on failure)."""
        if self.tokenizer is None:
            return None
        return await count_tokens_with(self.tokenizer, text)


class Endpoints:
    """The endpoints this process has talked to, by (model spec, base URL): "cached for the run".

    >>> endpoints = Endpoints()
    >>> endpoints.get("ollama:qwen3:8b", None) is endpoints.get("ollama:qwen3:8b", None)
    True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str | None], Endpoint] = {}

    def get(self, spec: str, base_url: str | None) -> Endpoint:
        key = (spec, base_url)
        with self._lock:
            endpoint = self._known.get(key)
            if endpoint is None:
                endpoint = self._known[key] = Endpoint(key)
            return endpoint

    def clear(self) -> None:
        """Forget every endpoint (tests; a server restarted with another configuration)."""
        with self._lock:
            self._known.clear()


#: The endpoints of this process (see :class:`Endpoints`).
ENDPOINTS = Endpoints()


def endpoint_of(backend: ModelBackend, settings: ModelSettings) -> Endpoint:
    """The :class:`Endpoint` of ``backend`` sending with ``settings``."""
    return ENDPOINTS.get(backend.spec, settings.base_url)
