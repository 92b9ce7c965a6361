"""Client of the AGI Maze HTTP API (standard library only).

:class:`AgiMazeClient` speaks the public API (see :mod:`maze_envs.agimaze.api.protocol`) to the real
service or to ``maze-envs agimaze serve``. It keeps one HTTP/1.1 connection open and reconnects
when it drops.

Deadline: ``timeout`` bounds each call as a whole (connecting, sending, every retry and backoff
wait, and reading the whole reply), not each socket read, so a server that drips its reply
byte by byte cannot hold a call longer than ``timeout`` seconds.

Retries never apply a step twice. A failed attempt (connection error, timeout, HTTP 502/503/504)
is resent with the *same* ``seq`` while the deadline allows; the server answers a repeated
``seq`` with its stored reply instead of stepping again. A 502/503/504 is recognised by its
status alone, before the body is read as JSON (proxies answer with HTML pages). A step sent with
``seq=None`` is never retried. Retrying ``/api/start`` may at worst leave an unused session on
the server.

Replies are checked against the documented fields: a 200 reply without them (``{}``, a list,
truncated JSON) is an :class:`AgiMazeProtocolError`, never an empty observation.

Errors:

* :class:`AgiMazeTimeoutError`: no complete answer before the call's deadline;
* :class:`AgiMazeConnectionError`: the server could not be reached, after every retry;
* :class:`AgiMazeAPIError`: an HTTP error answer (its ``status`` and JSON ``body`` are kept),
  except ``bad_action``, which :meth:`AgiMazeClient.step` returns as a body with an ``error`` key
  because agents treat it as an observation;
* :class:`AgiMazeProtocolError`: a reply that is not the JSON object the API documents.

Example (against a running server)::

    client = AgiMazeClient("http://127.0.0.1:8000")
    start = client.start("TRAINING/S0-keys/STAGE-01/0005.json", seed=0, agent="me")
    reply = client.step(start["id"], "up", seq=1)
"""

from __future__ import annotations

import http.client
import io
import json
import time
import urllib.parse
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Final

RETRY_STATUSES: Final = frozenset(
    {HTTPStatus.BAD_GATEWAY, HTTPStatus.SERVICE_UNAVAILABLE, HTTPStatus.GATEWAY_TIMEOUT}
)
#: Largest reply body read (real replies are a few KiB; a map of the largest board ~33 KiB).
MAX_REPLY_BYTES: Final = 1 << 20


class AgiMazeAPIError(RuntimeError):
    """The server answered with an HTTP error; ``status`` and the JSON ``body`` are kept."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class AgiMazeConnectionError(AgiMazeAPIError, ConnectionError):
    """The server could not be reached (refused, reset, DNS failure...)."""


class AgiMazeTimeoutError(AgiMazeAPIError, TimeoutError):
    """The server did not answer completely before the call's deadline."""


class AgiMazeProtocolError(AgiMazeAPIError, ValueError):
    """The reply is not the JSON object the API documents."""


# -- transport: an HTTP connection whose replies are read against a deadline -------------------


class _DeadlineReader(io.RawIOBase):
    """Reads a socket, each read waiting at most until the connection's current deadline.

    It reads through the socket's own unbuffered ``makefile`` object, which keeps the socket
    open while the reply is read even after ``http.client`` closes its connection (as the
    standard response does).
    """

    def __init__(self, sock: Any, connection: _DeadlineMixin) -> None:
        super().__init__()
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._connection = connection

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        remaining = self._connection.deadline - self._connection.clock()
        if remaining <= 0:
            raise TimeoutError("the call's deadline passed while reading the reply")
        self._sock.settimeout(remaining)
        result: int | None = self._raw.readinto(buffer)
        return result

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """The part of a socket :class:`http.client.HTTPResponse` uses (``makefile``)."""

    def __init__(self, sock: Any, connection: _DeadlineMixin) -> None:
        self._sock = sock
        self._connection = connection

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._connection))


class _DeadlineMixin:
    """Makes :class:`http.client.HTTPConnection` read replies against ``deadline``.

    ``http.client`` sets a socket timeout per read, so a dripped reply can take any time; the
    response class here reads through :class:`_DeadlineReader`, which shrinks the socket timeout
    to what is left of the call before every read.
    """

    deadline: float = float("inf")
    #: the clock of ``deadline`` (the client's)
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def _response(self, sock: Any, debuglevel: int = 0, method: str | None = None) -> Any:
        return http.client.HTTPResponse(
            _DeadlineSocket(sock, self),  # type: ignore[arg-type]
            debuglevel,
            method=method,
        )


class _HTTPConnection(_DeadlineMixin, http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.response_class = self._response  # type: ignore[assignment]


class _HTTPSConnection(_DeadlineMixin, http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.response_class = self._response  # type: ignore[assignment]


# -- reply checks ------------------------------------------------------------------------------


def _decode(method: str, url: str, status: int, raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise AgiMazeProtocolError(
            f"{method} {url}: HTTP {status} reply is not JSON: {raw[:200]!r}", status, raw
        ) from None
    if not isinstance(body, dict):
        raise AgiMazeProtocolError(
            f"{method} {url}: HTTP {status} reply is not a JSON object: {str(body)[:200]}",
            status,
            body,
        )
    return body


def _require(where: str, body: dict[str, Any], fields: dict[str, type | tuple[type, ...]]) -> None:
    """Raise AgiMazeProtocolError unless every field of ``fields`` is in ``body`` with its type."""
    for name, kind in fields.items():
        value = body.get(name)
        # bool is an int subclass: a documented int field must not accept true/false
        wrong_bool = isinstance(value, bool) and kind is int
        if name not in body or not isinstance(value, kind) or wrong_bool:
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            shown = json.dumps(body)[:200]
            raise AgiMazeProtocolError(
                f"{where} reply lacks the documented field {name!r} ({names}): {shown}",
                200,
                body,
            )


def _retryable_failure(where: str, status: int, raw: bytes, tried: str) -> AgiMazeAPIError:
    """The error of a 502/503/504 answer: its JSON body when it has one (``server_full`` says
    how many sessions are unfinished and when to retry), else the raw page."""
    try:
        body: Any = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        detail = body.get("detail", "")
        return AgiMazeAPIError(
            f"{where}: HTTP {status} {body['error']} after {tried}: {detail}", status, body
        )
    text = raw[:200].decode("utf-8", "replace")
    return AgiMazeAPIError(f"{where}: HTTP {status} after {tried}: {text}", status, raw)


def str_list(value: Any) -> list[str]:
    """The strings of a JSON list (nothing for anything else)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class AgiMazeClient:
    """Minimal client of the AGI Maze API with keep-alive, a deadline per call and safe retries.

    Args:
        base_url: ``http://host:port`` or ``https://host`` (a path prefix is kept).
        timeout: the deadline of each call, in seconds (all attempts and waits included).
        retries: extra attempts after a failure that may be retried (see the module docstring),
            made only while the deadline allows.
        backoff: seconds before the first retry; doubled for each further one.
        sleep: the function used to wait between retries (injectable for tests).
        clock: the time source of the deadline (injectable for tests: a fake clock makes a
            deadline pass without waiting; each socket wait is still bounded by what is left
            of the deadline on that clock).
    """

    def __init__(
        self,
        base_url: str,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.25,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in {"http", "https"} or not parsed.hostname:
            raise ValueError(
                f"base_url must look like http://host:port or https://host, got {base_url!r}"
            )
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        if not (isinstance(backoff, (int, float)) and backoff >= 0):
            raise ValueError(f"backoff must be a number of seconds >= 0, got {backoff!r}")
        self.base_url = base_url.rstrip("/")
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = parsed.port
        self._prefix = parsed.path.rstrip("/")
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = float(backoff)
        self._sleep = sleep
        self._clock = clock
        self._conn: _HTTPConnection | _HTTPSConnection | None = None

    # -- public API ---------------------------------------------------------------------------

    def description(self) -> str:
        """The service's rule text (``GET /api/description``)."""
        body = self._call("GET", "/api/description", None, retry=True)
        _require("/api/description", body, {"description": str})
        return str(body["description"])

    def start(self, path: str, seed: int | None = None, agent: str = "maze-envs") -> dict[str, Any]:
        """Start a session (``POST /api/start``); the reply carries ``id``, ``actions``, ``text``.

        Raises AgiMazeProtocolError when the reply lacks them or lists no action name.
        """
        payload = {"path": path, "seed": seed, "client": "api", "agent": agent}
        body = self._call("POST", "/api/start", payload, retry=True)
        _require("/api/start", body, {"id": str, "actions": list, "text": str})
        if not body["id"] or not str_list(body["actions"]):
            raise AgiMazeProtocolError(
                f"/api/start reply for {path!r} has no session id or lists no action names: "
                f"{json.dumps(body)[:200]}",
                200,
                body,
            )
        if "formal" in body:
            _require("/api/start", body, {"formal": dict})
        return body

    def step(self, session_id: str, action: str, seq: int | None) -> dict[str, Any]:
        """One step (``POST /api/step``). A ``bad_action`` answer is returned, not raised.

        Any other reply lacking ``text``, ``done`` or ``formal`` is an AgiMazeProtocolError.
        """
        payload = {"id": session_id, "action": action, "seq": seq}
        body = self._call("POST", "/api/step", payload, retry=seq is not None)
        if body.get("error") != "bad_action":
            _require("/api/step", body, {"text": str, "done": bool, "formal": dict})
        return body

    def session(self, session_id: str) -> dict[str, Any]:
        """Snapshot of a session (``GET /api/session?id=...``)."""
        query = urllib.parse.urlencode({"id": session_id})
        body = self._call("GET", f"/api/session?{query}", None, retry=True)
        _require("/api/session", body, {"actions": list, "inventory": dict})
        return body

    def close(self) -> None:
        """Close the kept-alive connection (a later call reconnects)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- transport ----------------------------------------------------------------------------

    def _connection(self, remaining: float) -> _HTTPConnection | _HTTPSConnection:
        if self._conn is None:
            cls = _HTTPSConnection if self._scheme == "https" else _HTTPConnection
            self._conn = cls(self._host, self._port, timeout=remaining)
        conn = self._conn
        conn.timeout = remaining  # used when (re)connecting
        if conn.sock is not None:
            conn.sock.settimeout(remaining)  # bounds sending (sendall's timeout is its total)
        return conn

    def _once(self, method: str, path: str, data: bytes | None, deadline: float) -> tuple[int, Any]:
        """One HTTP exchange: (status, raw reply bytes), read in full before ``deadline``."""
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise TimeoutError("no time left")
        conn = self._connection(remaining)
        conn.deadline = deadline
        conn.clock = self._clock
        try:
            conn.request(method, self._prefix + path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read(MAX_REPLY_BYTES + 1)
            if len(raw) > MAX_REPLY_BYTES:
                raise http.client.HTTPException(f"reply longer than {MAX_REPLY_BYTES} bytes")
            if response.length:  # a body cut short by the server (Content-Length not reached)
                raise http.client.IncompleteRead(raw, response.length)
        except BaseException:
            self.close()  # the connection state is unknown: never reuse it
            raise
        if response.will_close:
            self.close()
        return response.status, raw

    def _call(
        self, method: str, path: str, payload: dict[str, Any] | None, *, retry: bool
    ) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode()
        url = self.base_url + path
        deadline = self._clock() + self.timeout
        attempts = 1 + (self.retries if retry else 0)
        failure: AgiMazeAPIError | None = None
        attempt = 0
        while attempt < attempts:
            if attempt:
                wait = self.backoff * 2 ** (attempt - 1)
                if self._clock() + wait >= deadline:
                    break  # no time left for another attempt
                self._sleep(wait)
            attempt += 1
            tried = f"{attempt} attempt(s)"
            try:
                status, raw = self._once(method, path, data, deadline)
            except TimeoutError:
                failure = AgiMazeTimeoutError(
                    f"{method} {url}: no complete answer within {self.timeout:g} s "
                    f"({tried}); raise timeout= or check the server"
                )
                continue
            except (OSError, http.client.HTTPException) as exc:
                failure = AgiMazeConnectionError(
                    f"{method} {url}: cannot reach the server ({exc.__class__.__name__}: {exc}) "
                    f"after {tried}"
                )
                continue
            if status in RETRY_STATUSES:  # by status alone: proxies send HTML bodies
                failure = _retryable_failure(f"{method} {url}", status, raw, tried)
                continue
            body = _decode(method, url, status, raw)
            bad_action = status == HTTPStatus.BAD_REQUEST and body.get("error") == "bad_action"
            if status >= HTTPStatus.BAD_REQUEST and not bad_action:
                detail = body.get("detail", body)
                raise AgiMazeAPIError(
                    f"{method} {url}: HTTP {status} {body.get('error', 'error')}: {detail}",
                    status,
                    body,
                )
            return body
        if failure is None:  # the deadline passed before the first attempt could be made
            failure = AgiMazeTimeoutError(f"{method} {url}: no time left within {self.timeout} s")
        raise failure
