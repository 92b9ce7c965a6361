"""What a model server really does: output modes it honours, its context window, its tokenizer,
the model it serves and how many requests it serves at once.

Servers that speak the same protocol differ. llama.cpp's server ignores ``tool_choice`` (the model
never sees the tools and writes prose), rejects ``response_format`` ``json_schema`` with HTTP 500
("Input should be 'text' or 'json_object'") and reads ``max_tokens`` but not
``max_completion_tokens``; Ollama cuts prompts longer than ``num_ctx`` silently;
llama-cpp-python serves one request at a time. So the harness asks each endpoint (model spec and
base URL) once per run, and keeps the answers here:

* :meth:`Endpoint.discover`: whether the server answers at all (a local server, or one behind a
  ``base_url``: no connection stops the run before its first game), the context window (the
  ``context_window`` setting, Ollama's ``num_ctx``, llama.cpp's ``GET /props``, an
  OpenAI-compatible ``GET /v1/models`` that tells it, genai-prices for hosted models; else it
  stays unknown until a context-length error names it, :meth:`Endpoint.learn_window`), the
  model the server serves (:attr:`Endpoint.identity`: a file, a digest, an id; the response
  cache's key), the requests it serves at once (:attr:`Endpoint.slots`) and its tokenizer.
  The HTTP questions, and where each server answers them, are
  :mod:`llm_policies.server_info`'s.
* :meth:`Endpoint.slot`: at most ``slots`` requests in flight to a local server (the run's
  share of it in this process), so that no request spends its deadline in the server's queue;
  a request whose deadline passes is cancelled, which closes its connection (a server that
  checks, like llama-cpp-python before it starts a queued request, then drops it).
* :meth:`Endpoint.pick_mode` (``output_mode="auto"``): the probes of :mod:`llm_policies.probes`,
  best first (:data:`~llm_policies.settings.AUTO_MODES`); the first honoured or inconclusive
  mode is chosen, and the probes are recorded with every game that uses them.
* :meth:`Endpoint.first_request` / :meth:`Endpoint.answered`: the first request in an output
  mode to an endpoint goes alone (the agents of a turn ask at once); until it is answered the
  others wait, so a mode the server rejects costs one request and one configuration error, not
  one per agent;
* :class:`~llm_policies.tokens.TokenRate`: prompt tokens per byte as this endpoint reports them.

Once per run: ``maze-envs bench`` asks every endpoint of the run before its first game (the
policies' ``prepare_run``), and hands what it learnt (:meth:`Endpoints.snapshot`) to every
worker process (:meth:`Endpoints.adopt`), so agents, games and workers share one discovery; a
worker that learns more later (a window from a refusal) shares it with its own games.

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
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from llm_policies.backends.base import ModelBackend
from llm_policies.probes import ModeChoice, ModeProbe, is_mode_rejection, probe_mode
from llm_policies.server_info import (
    ServerInfo,
    Tokenizer,
    ask,
    count_tokens_with,
    describe_compatible,
    describe_ollama,
)
from llm_policies.settings import AUTO_MODES, ModelSettings, OutputMode
from llm_policies.tokens import TokenRate

__all__ = [
    "ENDPOINTS",
    "Endpoint",
    "Endpoints",
    "ModeChoice",
    "ModeProbe",
    "endpoint_of",
    "is_mode_rejection",
]

T = TypeVar("T")


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
    #: the kind of server (``llama.cpp``, ``llama-cpp-python``, ``vllm``, ``ollama``)
    server: str | None = None
    #: the model the server says it serves (a file path, a digest, an id)
    identity: str | None = None
    #: requests the server serves at once (``None``: no limit), and where that came from
    slots: int | None = None
    slots_source: str | None = None
    #: processes of the run sharing the slots (each gets its share, at least one)
    share: int = 1
    #: why the server could not be reached when the run began (``None``: it answered)
    unreachable: str | None = None
    #: a request of this run got an answer from the server (any answer, errors included)
    answered_once: bool = False
    _rejected: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _pending: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = field(
        default_factory=dict, repr=False
    )
    _gates: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(
        default_factory=dict, repr=False
    )
    _limits: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = field(
        default_factory=dict, repr=False
    )

    # --- what was learnt -------------------------------------------------------------------

    def learn_window(self, window: int, source: str) -> None:
        """The context window is ``window`` tokens (from ``source``); a smaller one wins."""
        with self._lock:
            if self.context_window is None or window < self.context_window:
                self.context_window, self.context_source = window, source

    def reject(self, mode: OutputMode, reason: str) -> None:
        """The server rejects output ``mode``: never send it again in this run."""
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
            "server": self.server,
            "served_model": self.identity,
            "context_window": self.context_window,
            "context_source": self.context_source,
            "slots": self.slots,
            "slots_source": self.slots_source,
            "tokenizer": self.tokenizer[0] if self.tokenizer else None,
            "rejected_modes": dict(self._rejected),
            "auto": self.choice.to_json() if self.choice else None,
        }

    # --- one run's knowledge, handed to its workers ------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything learnt, as plain data (:meth:`Endpoints.adopt` installs it elsewhere)."""
        with self._lock:
            return {
                **self.to_json(),
                "tokenizer": list(self.tokenizer) if self.tokenizer else None,
                "confirmed": sorted(self.confirmed),
                "tokens_per_byte": self.rate.tokens_per_byte,
                "discovered": self.discovered,
                "unreachable": self.unreachable,
            }

    def adopt(self, data: dict[str, Any], share: int) -> None:
        """Take what another process learnt (:meth:`snapshot`); ``share``: processes sharing
        the server's slots."""
        with self._lock:
            if data.get("context_window") is not None:
                window, source = int(data["context_window"]), str(data["context_source"])
                if self.context_window is None or window < self.context_window:
                    self.context_window, self.context_source = window, source
            tokenizer = data.get("tokenizer")
            self.tokenizer = (tokenizer[0], tokenizer[1]) if tokenizer else self.tokenizer
            if data.get("auto") and self.choice is None:
                self.choice = ModeChoice.from_json(data["auto"])
            self.confirmed.update(data.get("confirmed") or ())
            for mode, reason in (data.get("rejected_modes") or {}).items():
                self._rejected.setdefault(mode, reason)
            self.server = data.get("server") or self.server
            self.identity = data.get("served_model") or self.identity
            self.slots, self.slots_source = data.get("slots"), data.get("slots_source")
            self.discovered = self.discovered or bool(data.get("discovered"))
            self.unreachable = data.get("unreachable")
            self.share = max(1, share)
            self._limits.clear()
        if data.get("tokens_per_byte"):
            self.rate.learn_ratio(float(data["tokens_per_byte"]))

    # --- capacity ------------------------------------------------------------------------------

    @property
    def limit(self) -> int | None:
        """Requests this process may have in flight to the server (``None``: no limit)."""
        if self.slots is None:
            return None
        return max(1, self.slots // self.share)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the server's slots (this process's share) while a request is in
        flight; with no known limit, hold nothing."""
        limit = self.limit
        if limit is None:
            yield
            return
        loop = asyncio.get_running_loop()
        with self._lock:
            semaphore = self._limits.get(loop)
            if semaphore is None:
                if len(self._limits) > 8:  # loops of finished synchronous act() calls
                    self._limits = {k: v for k, v in self._limits.items() if not k.is_closed()}
                semaphore = self._limits[loop] = asyncio.Semaphore(limit)
        async with semaphore:
            yield

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
            async with self.slot():
                probe = await probe_mode(backend, mode, settings)
            self.answered_once = True
            probes.append(probe)
            if probe.status == "rejected":
                self.reject(mode, probe.detail)
            if probe.status in ("honoured", "inconclusive"):
                chosen = mode
                break
        choice = ModeChoice(chosen, tuple(probes))
        self.choice = choice
        return choice

    async def discover(
        self, backend: ModelBackend, settings: ModelSettings, local: bool, reach: bool = False
    ) -> None:
        """Learn once what the server tells (see the module docstring); ``reach``: also ask a
        server that is not local whether it answers at all (a run's start)."""
        if self.discovered:
            return
        await self._once("discover", lambda: self._discover(backend, settings, local, reach))

    async def _discover(
        self, backend: ModelBackend, settings: ModelSettings, local: bool, reach: bool
    ) -> None:
        spec, base_url = self.key
        prefix, _, name = spec.partition(":")
        info: ServerInfo | None = None  # None: the server was not asked
        if not getattr(backend, "owns_transport", True):
            pass  # a client of the caller's sends the requests: its address is not ours to ask
        elif local and prefix == "ollama":
            info = await describe_ollama(base_url, name)
        elif local and base_url:
            info = await describe_compatible(base_url, name)
        elif reach and base_url and prefix not in ("scripted", "stand-in"):
            # a server of someone else's behind a base URL (a proxy): only whether it answers
            answer = await ask("GET", f"{base_url.rstrip('/')}/models")
            info = ServerInfo(reachable=answer.error is None, error=answer.error)
        if info is not None and not info.reachable:
            self.unreachable = info.error or "no connection"
            return  # asked again at the next discovery: the server may come up
        if info is not None:
            self.unreachable = None
        info = info or ServerInfo()
        if settings.context_window is not None:
            self.learn_window(settings.context_window, "option")
        elif prefix == "ollama":
            self.learn_window(settings.num_ctx, "num_ctx")
        elif info.window is not None:
            self.learn_window(*info.window)
        if self.context_window is None:
            known = getattr(backend, "context_window", None)
            if isinstance(known, int) and known > 0:
                self.learn_window(known, "genai-prices")
        self.server, self.identity, self.tokenizer = info.kind, info.identity, info.tokenizer
        if settings.slots is not None:
            self.slots, self.slots_source = settings.slots, "option"
        elif info.slots is not None:
            self.slots, self.slots_source = info.slots
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

    def snapshot(self, keys: list[tuple[str, str | None]] | None = None) -> list[dict[str, Any]]:
        """What is known of the endpoints ``keys`` (all when ``None``), as plain data."""
        with self._lock:
            known = [e for k, e in self._known.items() if keys is None or k in keys]
        return [endpoint.snapshot() for endpoint in known]

    def adopt(self, snapshots: list[dict[str, Any]], share: int = 1) -> None:
        """Install what another process learnt (a run's discovery, in a worker); ``share``:
        the processes of the run that share each server's slots."""
        for data in snapshots:
            self.get(data["model"], data["base_url"]).adopt(data, share)


#: The endpoints of this process (see :class:`Endpoints`).
ENDPOINTS = Endpoints()


def endpoint_of(backend: ModelBackend, settings: ModelSettings) -> Endpoint:
    """The :class:`Endpoint` of ``backend`` sending with ``settings``."""
    return ENDPOINTS.get(backend.spec, settings.base_url)
