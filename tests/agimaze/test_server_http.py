"""Request bodies over real sockets: size limits, slow and missing bodies, clients that leave.

No assertion depends on the machine's speed: the body timeout only has to pass (a slow machine
makes a dripped body slower still), and every wait for the server is bounded by
:data:`GENEROUS` seconds, which only a hang reaches.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator

import pytest
import uvicorn

from maze_envs.agimaze.api.server import create_app
from tests.agimaze.test_server import CORRIDOR, make_service

BODY_TIMEOUT = 0.5
#: seconds to wait for the server before calling it hung
GENEROUS = 60.0


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    """uvicorn on a free loopback port; its loggers propagate, so caplog sees them."""
    app = create_app(make_service(), body_timeout=BODY_TIMEOUT)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, log_level="info")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + GENEROUS
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield "127.0.0.1", port
    finally:
        server.should_exit = True
        thread.join(timeout=GENEROUS)


def connect(address: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(address, timeout=GENEROUS)
    return sock


def head(path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: test", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_reply(sock: socket.socket) -> tuple[int, dict[str, str], dict]:
    """Status, headers and JSON body of one reply (read until the body is complete)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a reply: {data!r}"
        data += chunk
    top, rest = data.split(b"\r\n\r\n", 1)
    status_line, *header_lines = top.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside the reply body"
        rest += chunk
    return int(status_line.split()[1]), headers, json.loads(rest[:length])


def closed_by_peer(sock: socket.socket) -> bool:
    sock.settimeout(GENEROUS)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return False


def test_a_declared_50_mb_body_is_refused_before_anything_is_read(
    address: tuple[str, int],
) -> None:
    with connect(address) as sock:
        sock.sendall(head("/api/start", {"Content-Length": str(50 * 1024 * 1024)}))
        status, headers, body = read_reply(sock)  # no body was sent at all
        # 413 for the declared size, not 408: refused before waiting for any byte
        assert status == 413 and body["error"] == "body_too_large"
        assert body["detail"] == (
            "request body of 52428800 bytes declared; at most 16384 bytes are accepted"
        )
        assert headers["connection"] == "close" and closed_by_peer(sock)


def test_a_streamed_50_mb_body_is_cut_at_the_limit(address: tuple[str, int]) -> None:
    """Chunked, so no Content-Length: the server stops reading past 16 KiB (peak memory)."""
    chunk = b"x" * 65536
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    tracemalloc.start()
    try:
        with connect(address) as sock:
            sock.sendall(head("/api/step", {"Transfer-Encoding": "chunked"}))
            sock.settimeout(0.05)
            reply = b""
            while sent < 50 * 1024 * 1024 and not reply:
                try:
                    sock.sendall(frame)
                    sent += len(chunk)
                except (BrokenPipeError, ConnectionResetError, TimeoutError):
                    break
                try:
                    reply = sock.recv(65536, socket.MSG_PEEK)
                except TimeoutError:
                    continue
            sock.settimeout(GENEROUS)
            status, _, body = read_reply(sock)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 413 and body["detail"] == (
        "request body over 16384 bytes; at most 16384 bytes are accepted"
    )
    assert sent < 50 * 1024 * 1024  # refused long before the end
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB while a body streamed in"


def test_a_dripped_body_times_out_with_408(address: tuple[str, int]) -> None:
    payload = json.dumps({"path": CORRIDOR, "agent": "slow"}).encode()
    with connect(address) as sock:
        sock.sendall(head("/api/start", {"Content-Length": str(len(payload))}))
        began = time.monotonic()
        sock.settimeout(0.05)
        reply = b""
        for byte in payload:  # one byte every 50 ms: far slower than the timeout allows
            try:
                sock.sendall(bytes([byte]))
                reply = sock.recv(65536, socket.MSG_PEEK)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            if reply:
                break
        sock.settimeout(GENEROUS)
        status, headers, body = read_reply(sock)
        elapsed = time.monotonic() - began
    assert status == 408 and body["error"] == "body_timeout"
    assert body["detail"].startswith(f"the request body did not arrive within {BODY_TIMEOUT:g} s")
    assert elapsed >= BODY_TIMEOUT  # never before its time
    assert headers["connection"] == "close"


def test_a_declared_but_missing_body_gets_an_answer(address: tuple[str, int]) -> None:
    with connect(address) as sock:
        sock.sendall(head("/api/step", {"Content-Length": "80"}))
        status, _, body = read_reply(sock)
    assert status == 408
    assert body["detail"] == (
        f"the request body did not arrive within {BODY_TIMEOUT:g} s (0 of 80 bytes received)"
    )


def test_a_client_leaving_mid_upload_logs_one_line(
    address: tuple[str, int], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with connect(address) as sock:
        sock.sendall(head("/api/start", {"Content-Length": "1000"}) + b'{"path": "TRA')
    deadline = time.monotonic() + GENEROUS
    ours = "maze_envs.agimaze.api.server"
    while not any(r.name == ours for r in caplog.records):  # the server's own pace
        assert time.monotonic() < deadline, "the server logged nothing"
        time.sleep(0.02)
    assert start_once(address)[0] == 200  # answered after it: the server went on
    lines = [r for r in caplog.records if r.name == ours]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    # the 13 bytes may or may not have been handed over before the server saw the hang-up
    assert re.search(
        r"disconnected during the body of POST /api/start \((0|13) of 1000 bytes received\)",
        lines[0].getMessage(),
    )
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert all(r.exc_info is None for r in caplog.records)


def start_once(address: tuple[str, int]) -> tuple[int, dict]:
    payload = json.dumps({"path": CORRIDOR, "agent": "ok"}).encode()
    with connect(address) as sock:
        sock.sendall(head("/api/start", {"Content-Length": str(len(payload))}) + payload)
        status, _, body = read_reply(sock)
    return status, body


def test_the_server_still_serves_after_all_that(address: tuple[str, int]) -> None:
    status, body = start_once(address)
    assert status == 200 and body["text"] == "Game has started."
