"""A fault-injecting loopback HTTP/1.1 server over :class:`AgiMazeService`, for client tests.

Each ``POST /api/step`` takes the next fault of the server's plan (a callable returning a fault
name or None). Faults either hit before the step is applied (the server never sees it) or
after (the step is applied, the reply is lost or broken):

* ``drop_before`` / ``drop_after``: the connection is cut without a reply;
* ``delay_before`` / ``delay_after``: the server is late: the client's deadline passes before
  the step is applied / before the reply comes;
* ``html_503_before`` / ``html_502_after`` / ``html_504_after``: a proxy's HTML error page;
* ``truncated_after``: half of the JSON, then the connection is cut;
* ``non_object_after``: ``[1, 2]``; ``empty_after``: ``{}``; ``garbage_after``: not JSON;
* ``drip_after``: the reply byte by byte, :data:`DRIP_SECONDS` apart, each byte well inside
  the deadline but the whole far past it.

Time is a :class:`FakeClock` shared with the client (``AgiMazeClient(clock=...)``): a late
server *advances* it past the client's deadline instead of sleeping, then sends part of a reply
so the client looks at its clock and gives up. Nothing waits on the wall clock, so the faults
hit the same way on a loaded machine; clients use deadlines of :data:`GENEROUS` seconds, which
only a hang can reach in real time. A late server applies a ``delay_before`` step only once the
client has hung up (an event, not a pause).

:class:`RecordingService` records every step the engine really applied, so a test can check
that none was applied twice and that the env's count equals the server's.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import orjson

from maze_envs.agimaze.api.protocol import StepRequest
from maze_envs.agimaze.api.service import AgiMazeService, GameSession
from maze_envs.agimaze.api.sessions import Reply

#: client deadlines in the fault tests: real seconds only a hang reaches
GENEROUS = 60.0
#: how far a late server moves the clock: past any client deadline of the tests
LATE = 1000.0
#: fake seconds between two dripped bytes (a reply is a few hundred bytes)
DRIP_SECONDS = 1.0
BEFORE = ("drop_before", "delay_before", "html_503_before")
AFTER = (
    "drop_after",
    "delay_after",
    "html_502_after",
    "html_504_after",
    "truncated_after",
    "non_object_after",
    "empty_after",
    "garbage_after",
    "drip_after",
)
FAULTS = BEFORE + AFTER
HTML = b"<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>"


class FakeClock:
    """A monotonic clock that moves only when told (thread-safe)."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward (also the client's ``sleep``)."""
        with self._lock:
            self._now += max(0.0, seconds)


class RecordingService(AgiMazeService):
    """An AgiMazeService that records (session id, seq, action) of every applied step."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.applied: list[tuple[int, int | None, str]] = []
        self._lock = threading.Lock()

    def _play(self, session: GameSession, request: StepRequest) -> Reply:  # type: ignore[override]
        before = session.engine.steps
        reply = AgiMazeService._play(session, request)
        if session.engine.steps > before:
            with self._lock:
                self.applied.append((id(session), request.seq, request.action))
        return reply


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the real server
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK
    service: ClassVar[AgiMazeService]
    next_fault: ClassVar[Callable[[], str | None]]
    injected: ClassVar[list[str]]
    clock: ClassVar[FakeClock]

    def log_message(self, *args: object) -> None:
        return None

    def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _drop(self) -> None:
        self.close_connection = True
        with suppress(OSError):  # already gone
            self.connection.shutdown(socket.SHUT_RDWR)

    def _late(self, status: int, head: bytes = b"") -> None:
        """The client's deadline passes: the clock jumps, then part of a reply wakes it up."""
        self.clock.advance(LATE)
        self.wfile.write(f"HTTP/1.1 {status} OK\r\n".encode() + head)
        self.wfile.flush()

    def _await_hang_up(self) -> None:
        """Block until the client closes the connection (it does when it gives up)."""
        self.connection.settimeout(GENEROUS)
        with suppress(OSError):
            while self.connection.recv(65536):
                pass

    def do_GET(self) -> None:
        if self.path.startswith("/api/session"):
            sid = self.path.split("id=", 1)[-1]
            status, body = self.service.snapshot(sid)
        else:
            status, body = self.service.description()
        self._send(status, orjson.dumps(body))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/api/step":
            status, body = self.service.start(raw)
            self._send(status, orjson.dumps(body))
            return
        fault = self.next_fault()
        if fault is not None:
            self.injected.append(fault)
        try:
            self._step(raw, fault)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up: fine
            self.close_connection = True

    def _step(self, raw: bytes, fault: str | None) -> None:
        if fault == "drop_before":
            return self._drop()
        if fault == "html_503_before":
            return self._send(503, HTML, "text/html")
        if fault == "delay_before":  # the step is applied after the client gave up
            self._late(200)
            self._await_hang_up()
            self.service.step(raw)
            return self._drop()
        status, body = self.service.step(raw)
        data = orjson.dumps(body)
        if fault == "drop_after":
            return self._drop()
        if fault == "delay_after":
            self._late(status)
            self._await_hang_up()
            return self._drop()
        if fault in ("html_502_after", "html_504_after"):
            return self._send(502 if fault == "html_502_after" else 504, HTML, "text/html")
        if fault == "truncated_after":
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            return self._drop()
        if fault == "non_object_after":
            return self._send(200, b"[1, 2]")
        if fault == "empty_after":
            return self._send(200, b"{}")
        if fault == "garbage_after":
            return self._send(200, data[: len(data) // 2])  # a complete reply of broken JSON
        if fault == "drip_after":
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.flush()
            for i in range(len(data) - 2):
                self.clock.advance(DRIP_SECONDS)
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
            # the last bytes lag far behind: one more after the clock jumped (so a client
            # blocked reading wakes up and looks at it), and the very last never comes
            self.clock.advance(LATE)
            self.wfile.write(data[-2:-1])
            self.wfile.flush()
            self._await_hang_up()
            return self._drop()
        return self._send(status, data)


@contextmanager
def fault_server(
    service: AgiMazeService, next_fault: Callable[[], str | None], clock: FakeClock | None = None
) -> Iterator[tuple[str, list[str]]]:
    """(base URL, list of injected faults) of a fault server running for the ``with`` block.

    ``clock`` is the one the late faults advance (give the client the same one).
    """
    injected: list[str] = []
    handler = type(
        "Handler",
        (_Handler,),
        {
            "service": service,
            "next_fault": staticmethod(next_fault),
            "injected": injected,
            "clock": clock or FakeClock(),
        },
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", injected
    finally:
        server.shutdown()
        server.server_close()


def scripted(faults: list[str | None]) -> Callable[[], str | None]:
    """A plan that injects ``faults`` in order, then none."""
    queue = list(faults)

    def next_fault() -> str | None:
        return queue.pop(0) if queue else None

    return next_fault


def server_steps(service: AgiMazeService, session_id: str | None) -> int:
    assert session_id is not None
    return service.sessions.get(session_id).engine.steps


__all__ = [
    "FAULTS",
    "GENEROUS",
    "FakeClock",
    "RecordingService",
    "fault_server",
    "scripted",
    "server_steps",
]
