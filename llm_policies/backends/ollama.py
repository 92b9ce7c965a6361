"""Local models through Ollama's native chat API (``/api/chat``) with the official client.

The native API, unlike Ollama's OpenAI-compatible ``/v1`` (which pydantic-ai's ``ollama:`` route
uses), sets the context size per request. Every request carries ``options.num_ctx`` (8192 by
default), ``think`` (off by default), the temperature, seed and output cap, and ``keep_alive``.

* ``native`` mode: the JSON schema goes whole in ``format=`` (Ollama constrains decoding to it);
* ``json_object`` mode: ``format="json"`` (any JSON object; the schema is in the prompt);
* ``prompted`` mode: plain text.

There is no ``tool`` mode: the ``ollama`` client's ``Tool`` model keeps only ``type``, ``items``,
``description`` and ``enum`` of each property, so an ``anyOf`` (a nullable field, an optional
nested object) or a ``$ref`` would reach the model as ``{}``, while ``format=`` keeps the schema
whole. ``output_modes`` says so, and the policy refuses ``tool`` for Ollama when it is built.

The client does not retry; this backend does (:mod:`llm_policies.backends.retry`), reading
``Retry-After`` from the response headers. Ollama truncates a prompt that does not fit in
``num_ctx`` silently: the harness keeps prompts inside ``num_ctx`` before sending, and a reply
whose prompt and output used the whole context carries a ``context_warning`` notice
(``ModelReply.notices``), which the policy records once per game in the journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import threading
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Final

import httpx
import ollama

from llm_policies.accounting import price
from llm_policies.backends.base import (
    ModelError,
    ModelReply,
    ModelRequest,
    context_error,
    parse_spec,
)
from llm_policies.backends.retry import RETRIED_4XX, RetryPolicy, call_with_retries
from llm_policies.settings import ModelSettings, OutputMode, request_values
from maze_envs.policies.interface import Usage

# httpx's connection pool scans every connection for every request it places (its cost grows
# with the square of the calls in flight), so calls are spread over several small clients
CLIENT_SHARDS = 8

# the response of the attempt running in this task (headers for Retry-After)
_last_response: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "maze_envs_ollama_last_response", default=None
)


#: The request settings as Ollama names them (the options, and ``think`` beside them).
OPTION_NAMES: Final = {
    "temperature": "temperature",
    "seed": "seed",
    "max_output_tokens": "num_predict",
}


def request_body(name: str, request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of ``AsyncClient.chat`` for ``request``."""
    settings = request.settings
    options: dict[str, Any] = {"num_ctx": settings.num_ctx}
    options.update(request_values(settings, OPTION_NAMES))
    # a reasoning effort, when set, says whether to think; else the ``think`` setting does
    think = request_values(settings, {"reasoning_effort": "think"}).get("think", settings.think)
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages += [{"role": m.role, "content": m.content} for m in request.messages]
    body: dict[str, Any] = {
        "model": name,
        "messages": messages,
        "stream": False,
        "think": think,
        "options": options,
    }
    if request.output_mode == "tool":
        raise ValueError(
            "output mode 'tool' is not served by Ollama backends (the ollama client drops anyOf "
            "and $ref from tool schemas); use 'native' (the whole schema in format=) or 'prompted'"
        )
    if request.output_mode == "native":
        body["format"] = request.schema
    elif request.output_mode == "json_object":
        body["format"] = "json"
    if settings.keep_alive is not None:
        body["keep_alive"] = settings.keep_alive
    return body


def _retry_after() -> float | None:
    box = _last_response.get()
    value = (box or {}).get("headers", {}).get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:  # an HTTP date: not worth parsing for a local server
        return None


def classify(error: Exception) -> ModelError | None:
    """An ``ollama``/``httpx`` failure as a :class:`ModelError` (``None``: not a model failure)."""
    message = f"{type(error).__name__}: {error}"
    if isinstance(error, ollama.ResponseError):
        status = error.status_code
        if status == HTTPStatus.TOO_MANY_REQUESTS:
            return ModelError(
                message,
                kind="rate_limit",
                retryable=True,
                status=status,
                retry_after=_retry_after(),
            )
        if status >= HTTPStatus.INTERNAL_SERVER_ERROR or status in RETRIED_4XX:
            return ModelError(
                message, kind="server", retryable=True, status=status, retry_after=_retry_after()
            )
        context = context_error(status, message)
        if context is not None:
            return context
        if status == HTTPStatus.NOT_FOUND:
            message += " (is the model pulled? ollama pull <model>)"
        return ModelError(message, kind="refused", status=status)
    if isinstance(error, httpx.TimeoutException):
        return ModelError(message, kind="timeout", retryable=True)
    if isinstance(error, ConnectionError | httpx.TransportError):
        return ModelError(message, kind="connection", retryable=True)
    if isinstance(error, ValueError | TypeError | KeyError | AttributeError):
        # a body that is not JSON (JSONDecodeError), not an object (TypeError) or not a chat
        # reply (pydantic's ValidationError is a ValueError)
        return ModelError(message, kind="protocol", retryable=True)
    return None


@dataclass
class _Pool:
    """HTTP clients of one event loop, with the calls in flight on each."""

    loop: asyncio.AbstractEventLoop | None
    clients: list[ollama.AsyncClient] = field(default_factory=list)
    in_flight: list[int] = field(default_factory=list)
    users: int = 0


class SharedClients:
    """The client pools shared by the Ollama backends of one host and timeout.

    Making an ``ollama.AsyncClient`` costs tens of milliseconds of CPU (its HTTP client's TLS
    context), and the runner makes one backend per agent per game, so backends that own their
    clients share a pool per (host, timeout) in the running event loop: at most
    :data:`CLIENT_SHARDS` clients, each call on the least busy one. A pool belongs to one loop
    (connections do); a backend on another loop gets a new pool. The last backend of a pool to
    close closes its clients.

    >>> pools, loop, key = SharedClients(), asyncio.new_event_loop(), ("http://gpu:11434", 60.0)
    >>> pool = pools.acquire(key, loop)
    >>> pools.acquire(key, loop) is pool
    True
    >>> pools.release(key, pool), pools.release(key, pool), len(pools)
    (False, True, 0)
    >>> loop.close()
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[tuple[str | None, float], _Pool] = {}

    def acquire(self, key: tuple[str | None, float], loop: asyncio.AbstractEventLoop) -> _Pool:
        with self._lock:
            pool = self._pools.get(key)
            if pool is None or pool.loop is not loop:
                pool = self._pools[key] = _Pool(loop)
            pool.users += 1
            return pool

    def release(self, key: tuple[str | None, float], pool: _Pool) -> bool:
        """One user fewer; True when it was the last (the caller then closes the clients)."""
        with self._lock:
            pool.users -= 1
            if pool.users > 0:
                return False
            if self._pools.get(key) is pool:
                del self._pools[key]
            return True

    def __len__(self) -> int:
        return len(self._pools)


#: The client pools of this process's Ollama backends (see :class:`SharedClients`).
SHARED_CLIENTS = SharedClients()


class OllamaBackend:
    """One model served by Ollama (``OLLAMA_HOST`` or ``settings.base_url``, else localhost).

    Args:
        spec: ``"ollama:<model>"``, e.g. ``"ollama:qwen3:8b"``.
        settings: the game's model settings.
        client: an ``ollama.AsyncClient`` of your own (then you close it).
        retry: backoff shape and jitter seed.
        local: cost 0, ``"local"`` (set ``False`` for a paid remote host).
    """

    output_modes: tuple[OutputMode, ...] = ("native", "json_object", "prompted")

    def __init__(
        self,
        spec: str,
        settings: ModelSettings,
        *,
        client: ollama.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        local: bool = True,
    ) -> None:
        prefix, self.model = parse_spec(spec)
        if prefix != "ollama":
            raise ValueError(f"OllamaBackend serves 'ollama:<model>' specs, got {spec!r}")
        if client is not None and not isinstance(client, ollama.AsyncClient):
            raise TypeError(
                f"client must be an ollama.AsyncClient, got {type(client).__module__}."
                f"{type(client).__name__}"
            )
        self.spec = spec
        self.settings = settings
        self.local = local
        self.retry = retry or RetryPolicy()
        self._rng = self.retry.rng()
        self._owns_client = client is None
        self._key = (settings.base_url, settings.timeout_s)
        # your own client: a pool of one, never shared; else the shared pool of the loop
        self._pool: _Pool | None = None if client is None else _Pool(None, [client], [0], 1)

    @property
    def owns_transport(self) -> bool:
        """Whether requests go where the settings say (not through a client of the caller's)."""
        return self._owns_client

    def _make_client(self) -> ollama.AsyncClient:
        async def remember(response: httpx.Response) -> None:
            box = _last_response.get()
            if box is not None:
                box["status"] = response.status_code
                box["headers"] = {k.lower(): v for k, v in response.headers.items()}

        return ollama.AsyncClient(
            host=self.settings.base_url,
            timeout=self.settings.timeout_s,
            event_hooks={"response": [remember]},
        )

    def _shard(self) -> tuple[_Pool, int]:
        """The pool of the running event loop and its least busy client (made when needed).

        Connections belong to the event loop that opened them, so a backend that owns its
        clients takes the running loop's shared pool (a synchronous ``act`` runs each turn on a
        fresh loop).
        """
        pool = self._pool
        if self._owns_client:
            loop = asyncio.get_running_loop()
            if pool is None or pool.loop is not loop:
                if pool is not None:  # another loop's clients: dropped, not closed from here
                    SHARED_CLIENTS.release(self._key, pool)
                pool = self._pool = SHARED_CLIENTS.acquire(self._key, loop)
        assert pool is not None
        if not pool.clients or (
            self._owns_client and min(pool.in_flight) > 0 and len(pool.clients) < CLIENT_SHARDS
        ):
            pool.clients.append(self._make_client())
            pool.in_flight.append(0)
        return pool, min(range(len(pool.clients)), key=pool.in_flight.__getitem__)

    def _context_notices(
        self, request: ModelRequest, reply: ollama.ChatResponse
    ) -> tuple[dict[str, Any], ...]:
        """A ``context_warning`` when prompt and reply used the whole ``num_ctx``."""
        num_ctx = request.settings.num_ctx
        used = (reply.prompt_eval_count or 0) + (reply.eval_count or 0)
        if used < num_ctx:
            return ()
        return (
            {
                "kind": "context_warning",
                "message": f"{self.spec}: prompt and reply used {used} tokens, the whole "
                f"num_ctx={num_ctx}: Ollama probably cut the prompt; raise num_ctx",
                "used": used,
                "num_ctx": num_ctx,
            },
        )

    async def complete(self, request: ModelRequest) -> ModelReply:
        body = request_body(self.model, request)

        async def attempt() -> tuple[ollama.ChatResponse, float]:
            _last_response.set({})
            pool, shard = self._shard()
            client = pool.clients[shard]
            pool.in_flight[shard] += 1
            started = time.perf_counter()
            try:
                response = await client.chat(**body)
            finally:
                if shard < len(pool.in_flight) and pool.clients[shard] is client:
                    pool.in_flight[shard] -= 1
            return response, time.perf_counter() - started

        (response, latency), failures = await call_with_retries(
            attempt,
            what=self.spec,
            settings=request.settings,
            policy=self.retry,
            rng=self._rng,
            classify=classify,
        )
        message = response.message
        calls = message.tool_calls or []
        tool_arguments = (
            json.dumps(dict(calls[0].function.arguments), ensure_ascii=False) if calls else None
        )
        usage = price(
            self.spec,
            Usage(
                input_tokens=response.prompt_eval_count or 0,
                output_tokens=response.eval_count or 0,
                requests=1,
                latency_s=latency,
            ),
            local=self.local,
        )
        return ModelReply(
            text=message.content if message.content or not calls else None,
            tool_arguments=tool_arguments,
            usage=usage,
            model=response.model or self.model,
            latency_s=latency,
            raw=response.model_dump(mode="json", exclude_none=True),
            retries=failures,
            notices=self._context_notices(request, response),
            finish_reason=response.done_reason,
        )

    async def aclose(self) -> None:
        pool = self._pool
        if not self._owns_client or pool is None:
            return  # a client of your own is yours to close
        self._pool = None
        if not SHARED_CLIENTS.release(self._key, pool):
            return  # other backends still send through these clients
        for client in pool.clients:
            # its event loop may be gone already: then there is nothing left to close on it
            with contextlib.suppress(RuntimeError):
                await client.close()
        pool.clients.clear()
        pool.in_flight.clear()
