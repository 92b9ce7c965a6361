"""A fault-injecting loopback HTTP/1.1 server over :class:`AgiMazeService`, for client tests.

Each ``POST /api/step`` takes the next fault of the server's plan (a callable returning a fault
name or None). Faults either hit before the step is applied (the server never sees it) or
after (the step is applied, the reply is lost or broken):

* ``drop_before`` / ``drop_after``: the connection is cut without a reply;
* ``delay_before`` / ``delay_after``: the server waits :data:`DELAY` seconds (past the client's
  deadline) before applying / before replying;
* ``html_503_before`` / ``html_502_after`` / ``html_504_after``: a proxy's HTML error page;
* ``truncated_after``: half of the JSON, then the connection is cut;
* ``non_object_after``: ``[1, 2]``; ``empty_after``: ``{}``; ``garbage_after``: not JSON;
* ``drip_after``: the reply one byte every :data:`DRIP_SECONDS` (far past the deadline).

:class:`RecordingService` records every step the engine really applied, so a test can check
that none was applied twice and that the env's count equals the server's.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import orjson

from maze_envs.agimaze.protocol import StepRequest
from maze_envs.agimaze.service import AgiMazeService, GameSession
from maze_envs.agimaze.sessions import Reply

DELAY = 0.45
DRIP_SECONDS = 0.05
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
    service: ClassVar[AgiMazeService]
    next_fault: ClassVar[Callable[[], str | None]]
    injected: ClassVar[list[str]]

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
        if fault == "delay_before":
            time.sleep(DELAY)
        status, body = self.service.step(raw)
        data = orjson.dumps(body)
        if fault == "drop_after":
            return self._drop()
        if fault == "delay_after":
            time.sleep(DELAY)
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
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(DRIP_SECONDS)
            return None
        return self._send(status, data)


@contextmanager
def fault_server(
    service: AgiMazeService, next_fault: Callable[[], str | None]
) -> Iterator[tuple[str, list[str]]]:
    """(base URL, list of injected faults) of a fault server running for the ``with`` block."""
    injected: list[str] = []
    handler = type(
        "Handler",
        (_Handler,),
        {"service": service, "next_fault": staticmethod(next_fault), "injected": injected},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
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


__all__ = ["FAULTS", "RecordingService", "fault_server", "scripted", "server_steps"]
