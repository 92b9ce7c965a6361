"""A loopback HTTP server speaking the four model protocols, run by uvicorn in a thread.

One server answers every protocol at its usual path (``/v1/chat/completions``,
``/v1/responses``, ``/v1/messages``, ``/api/chat``), so ``server.openai_base_url`` (``.../v1``),
``server.url`` (Anthropic, Ollama) all point at it. Each request takes the next scripted step
(see :mod:`tests.llm.servers.script`) and is recorded in ``server.requests``.

``server.behave_like_llama_cpp(LlamaCpp(...))`` makes its Chat Completions endpoint behave like
llama.cpp's server (:mod:`tests.llm.servers.llamacpp`: tools ignored, ``json_schema`` refused
with HTTP 500, ``max_tokens`` honoured and ``max_completion_tokens`` not, context-length errors,
``/props`` and a tokenizer); requests to those side routes go to ``server.info_requests``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.llm.servers import llamacpp
from tests.llm.servers.llamacpp import LlamaCpp
from tests.llm.servers.protocols import render_error, render_reply
from tests.llm.servers.script import (
    Hang,
    Held,
    HttpError,
    RawBody,
    RecordedRequest,
    Reply,
    Responder,
    Script,
    Stall,
    Step,
    protocol_of,
)
from tests.llm.servers.streams import STREAM_MEDIA_TYPES, render_stream

PATHS = ("/v1/chat/completions", "/v1/responses", "/v1/messages", "/api/chat")


class LoopbackServer:
    """Scripted model server on ``127.0.0.1:<ephemeral port>``; use as a context manager."""

    def __init__(self) -> None:
        self.script = Script()
        self.llama: LlamaCpp | None = None
        self.info_requests: list[RecordedRequest] = []
        #: Ollama's ``/api/tags``: model name -> digest (none listed by default)
        self.ollama_models: dict[str, str] = {}
        #: ``GET /v1/models``' answer when set (a vLLM or LM Studio model list)
        self.model_list: dict[str, Any] | None = None
        #: ``GET /server_info``'s answer when set (a vLLM started with ``VLLM_SERVER_DEV_MODE=1``)
        self.server_info: dict[str, Any] | None = None
        #: model requests being answered now, and the most at once since the last reset
        self.in_flight = 0
        self.most_in_flight = 0
        #: requests whose client closed the connection before its answer (a passed deadline)
        self.disconnected = 0
        #: How many requests a :class:`Held` step has held (released or not).
        self.held = 0
        self._closing = threading.Event()
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only when the listening
        # socket says TCP; without it Nagle holds each reply's body for the client's delayed ACK
        # (about 40 ms a request)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        routes = [Route(path, self._handle, methods=["POST"]) for path in PATHS]
        routes.append(Route("/api/version", self._version, methods=["GET"]))
        routes.append(Route("/api/tags", self._tags, methods=["GET"]))
        for path in ("/props", "/v1/models", "/server_info", "/tokenize", "/extras/tokenize/count"):
            routes.append(Route(path, self._info, methods=["GET", "POST"]))
        app = Starlette(routes=routes)
        config = uvicorn.Config(
            app,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            backlog=512,
            limit_concurrency=None,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    # --- life cycle ------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the loopback model server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._closing.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests use --------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL for Anthropic and Ollama clients."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI clients (they append ``/chat/completions``, ``/responses``)."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.script.requests

    def push(self, *steps: Step) -> None:
        """Answer the next requests with ``steps``, in order."""
        self.script.push(steps)

    def extend(self, steps: Iterable[Step]) -> None:
        self.script.push(steps)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer requests beyond the scripted steps with ``responder(request)``."""
        self.script.responder = responder

    def reset(self) -> None:
        """Forget the script, the responder, the request logs and any llama.cpp behaviour."""
        self.script.clear()
        self.info_requests.clear()
        self.llama = None
        self.ollama_models = {}
        self.model_list = None
        self.server_info = None
        self.most_in_flight = self.disconnected = 0
        self.held = 0

    def behave_like_llama_cpp(self, server: LlamaCpp | None = None) -> None:
        """Answer Chat Completions the way llama.cpp's server does (see the module docstring)."""
        self.llama = server if server is not None else LlamaCpp()

    def bodies(self, protocol: str | None = None) -> list[Any]:
        """The JSON bodies received (of one protocol)."""
        return [r.body for r in self.requests if protocol is None or r.protocol == protocol]

    # --- serving ---------------------------------------------------------------------------

    async def _version(self, request: Request) -> Response:
        return JSONResponse({"version": "0.12.0"})

    async def _tags(self, request: Request) -> Response:
        """Ollama's model list: each model's name and digest."""
        self.info_requests.append(
            RecordedRequest(request.method, request.url.path, dict(request.headers), b"", None)
        )
        listed = [{"name": n, "model": n, "digest": d} for n, d in self.ollama_models.items()]
        return JSONResponse({"models": listed})

    async def _info(self, request: Request) -> Response:
        """llama.cpp's side routes: ``/props``, ``/v1/models``, the tokenizers (404 otherwise)."""
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        path = request.url.path
        self.info_requests.append(RecordedRequest(request.method, path, headers, raw, body))
        llama = self.llama
        answer: Any = None
        if path == "/v1/models" and self.model_list is not None:
            answer = self.model_list
        elif path == "/server_info":
            answer = self.server_info
        elif llama is not None and path == "/props" and llama.props:
            answer = llamacpp.props(llama)
        elif llama is not None and path == "/v1/models":
            answer = llamacpp.models(llama)
        elif llama is not None:
            answer = llamacpp.tokenize(llama, path, body)
        if answer is None:
            return JSONResponse({"detail": "Not Found"}, 404)
        return JSONResponse(answer)

    async def _wait(self, seconds: float, request: Request | None = None) -> None:
        """Sleep up to ``seconds``, ending early when the server shuts down or the client
        closes the connection (counted in :attr:`disconnected`)."""
        end = time.monotonic() + seconds
        while not self._closing.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return
            if request is not None and await request.is_disconnected():
                self.disconnected += 1
                return
            await asyncio.sleep(min(0.05, left))

    async def _handle(self, request: Request) -> Response:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await self._serve(request)
        finally:
            self.in_flight -= 1

    async def _serve(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        recorded = RecordedRequest(
            request.method,
            request.url.path,
            {k.lower(): v for k, v in request.headers.items()},
            raw,
            body,
        )
        protocol = protocol_of(recorded.path)
        llama = self.llama if protocol == "openai-chat" and isinstance(body, dict) else None
        if llama is not None and isinstance(body, dict):
            refused = llamacpp.refusal(body, llama)
            if refused is not None:  # refused before the model runs: no scripted step used
                self.script.record(recorded)
                return await self._answer(protocol, refused, body, False, request)
            seen = RecordedRequest(
                recorded.method,
                recorded.path,
                recorded.headers,
                recorded.raw,
                llamacpp.without_tools(body),
            )
            step = self.script.next_step(recorded, seen)
            if isinstance(step, Reply):
                step = llamacpp.as_served(step, body)
            return await self._answer(protocol, step, body, False, request)
        step = self.script.next_step(recorded)
        stream = (
            isinstance(body, dict)
            and body.get("stream") is not False
            and (
                body.get("stream") is True
                or protocol == "ollama"  # Ollama streams unless told not to
            )
        )
        return await self._answer(protocol, step, body, stream, request)

    def _error(
        self,
        protocol: str,
        status: int,
        message: str,
        retry_after: Any = None,
        code: str | None = None,
    ) -> Response:
        headers = {} if retry_after is None else {"retry-after": str(retry_after)}
        body = render_error(protocol, status, message, code)
        return JSONResponse(body, status, headers=headers)

    async def _answer(
        self, protocol: str, step: Step, body: Any, stream: bool, request: Request | None = None
    ) -> Response:
        if isinstance(step, Reply):
            if step.delay_s:
                await self._wait(step.delay_s, request)
            try:
                if stream:
                    chunks = render_stream(protocol, step, body)
                    return StreamingResponse(iter(chunks), media_type=STREAM_MEDIA_TYPES[protocol])
                return JSONResponse(render_reply(protocol, step, body))
            except ValueError as error:
                return self._error(protocol, 400, f"loopback script error: {error}")
        if isinstance(step, HttpError):
            return self._error(protocol, step.status, step.message, step.retry_after, step.code)
        if isinstance(step, Hang):
            await self._wait(step.seconds, request)
            if step.then is None:
                return self._error(protocol, 504, "the scripted hang ended without a reply")
            return await self._answer(protocol, step.then, body, stream, request)
        if isinstance(step, Held):
            self.held += 1
            while not step.gate.is_set() and not self._closing.is_set():
                await asyncio.sleep(0.02)
            return await self._answer(protocol, step.then, body, stream, request)
        if isinstance(step, Stall):
            # streamed: half of the events; not streamed: half of the JSON body (chunked)
            if stream:
                chunks = render_stream(protocol, step.reply, body)
                media_type = STREAM_MEDIA_TYPES[protocol]
            else:
                whole = json.dumps(render_reply(protocol, step.reply, body)).encode()
                chunks = [whole[: len(whole) // 2], whole[len(whole) // 2 :]]
                media_type = "application/json"
            half = max(1, len(chunks) // 2)

            async def stalled() -> AsyncIterator[bytes]:
                for chunk in chunks[:half]:
                    yield chunk
                await self._wait(step.seconds)
                for chunk in chunks[half:]:
                    yield chunk

            return StreamingResponse(stalled(), media_type=media_type)
        if isinstance(step, RawBody):
            return Response(step.body, step.status, media_type=step.content_type)
        raise TypeError(f"unknown scripted step {step!r}")


@contextlib.contextmanager
def serve() -> Iterator[LoopbackServer]:
    """A started loopback server, stopped on exit."""
    server = LoopbackServer().start()
    try:
        yield server
    finally:
        server.stop()
