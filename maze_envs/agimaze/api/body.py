"""Reading HTTP request bodies with a size cap and a deadline (the AGI Maze server's bodies).

:class:`BodyReader` reads an ASGI request body and refuses it as soon as it is known to be too
large (by ``Content-Length`` before reading anything, or by the bytes received so far), or when
it has not fully arrived ``timeout`` seconds after reading began (a dripped body, or one that is
declared and never sent). A client that disconnects mid-body is reported as :class:`ClientGone`.

Why not ``asyncio.timeout`` per request: it costs more than the rest of reading a small body
(a timer handle scheduled and cancelled each time, about a fifth of a step request's time on the
server). One checker callback per event loop, run every ``timeout / 4`` seconds while some body
is being read, cancels the readers past their deadline instead; the reader turns that
cancellation into :class:`BodyError` ``body_timeout``. The cancellation is always delivered at
the reader's own ``await`` (the only point where the checker can run), so it never leaks out.

Example:
    >>> import asyncio
    >>> from starlette.requests import Request
    >>> async def receive():
    ...     return {"type": "http.request", "body": b'{"a": 1}', "more_body": False}
    >>> request = Request({"type": "http", "headers": [(b"content-length", b"8")]}, receive)
    >>> asyncio.run(BodyReader(max_bytes=64, timeout=1.0).read(request))
    b'{"a": 1}'
"""

from __future__ import annotations

import asyncio
from typing import Any


class BodyError(Exception):
    """A body refused: ``code`` is the API error code, ``detail`` says why."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class ClientGone(Exception):
    """The client disconnected before its body was complete (nobody to answer)."""

    def __init__(self, received: int, declared: str | None) -> None:
        super().__init__(f"{received} of {declared or 'unknown'} bytes received")
        self.received = received
        self.declared = declared


class BodyReader:
    """Reads request bodies of at most ``max_bytes`` bytes within ``timeout`` seconds."""

    def __init__(self, max_bytes: int, timeout: float) -> None:
        if not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be an int >= 1, got {max_bytes!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.max_bytes = max_bytes
        self.timeout = float(timeout)
        self._interval = min(self.timeout / 4, 0.25)
        #: reader task -> loop time by which its body must be complete
        self._deadlines: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._checking: dict[asyncio.AbstractEventLoop, asyncio.TimerHandle] = {}

    async def read(self, request: Any) -> bytes:
        """The whole body of ``request`` (a Starlette Request); BodyError or ClientGone."""
        declared = request.headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise BodyError("bad_request", "the Content-Length header is not a byte count")
            if int(declared) > self.max_bytes:
                raise BodyError(
                    "body_too_large",
                    f"request body of {int(declared)} bytes declared; at most {self.max_bytes} "
                    "bytes are accepted",
                )
        receive = request.receive
        task = asyncio.current_task()
        if task is not None:
            self._watch(task)
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientGone(size, declared)
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_bytes:  # stop reading: never hold more than the limit
                    raise BodyError(
                        "body_too_large",
                        f"request body over {self.max_bytes} bytes; at most {self.max_bytes} "
                        "bytes are accepted",
                    )
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        except asyncio.CancelledError:
            if task is None or task not in self._expired:
                raise  # not ours: a shutdown or a caller's cancellation
            self._expired.discard(task)
            task.uncancel()
            raise BodyError(
                "body_timeout",
                f"the request body did not arrive within {self.timeout:g} s "
                f"({size} of {declared or 'unknown'} bytes received)",
            ) from None
        finally:
            if task is not None:
                self._deadlines.pop(task, None)
        return b"".join(chunks)

    def _watch(self, task: asyncio.Task[Any]) -> None:
        loop = task.get_loop()
        self._deadlines[task] = loop.time() + self.timeout
        if loop not in self._checking:
            self._checking[loop] = loop.call_later(self._interval, self._check, loop)

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        pending = False
        for task, deadline in list(self._deadlines.items()):
            if task.get_loop() is not loop:
                continue
            if now >= deadline and task not in self._expired:
                self._expired.add(task)
                task.cancel()
            else:
                pending = True
        if pending:
            self._checking[loop] = loop.call_later(self._interval, self._check, loop)
        else:  # idle: the next read starts checking again
            del self._checking[loop]
