"""Client of the AGI Maze HTTP API (standard library only), and the env's HTTP backend.

:class:`AgiMazeClient` speaks the public API (see :mod:`maze_envs.agimaze.protocol`) to the real
service or to ``maze-envs agimaze serve``. It keeps one HTTP/1.1 connection open and reconnects
when it drops.

Retries never apply a step twice. A failed request (connection error, timeout, HTTP 502/503/504)
is resent with the *same* ``seq``; the server answers a repeated ``seq`` with its stored response
instead of stepping again. A step sent with ``seq=None`` is therefore never retried. Retrying
``/api/start`` may at worst leave an unused session behind on the server.

Errors:

* :class:`AgiMazeTimeoutError`: no answer within ``timeout`` seconds, after every retry;
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
import json
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from maze_envs.agimaze.env import EpisodeStart, StepOutcome, ordered_actions, rejected_action
from maze_envs.agimaze.spaces import MAP_MAX_LENGTH, clean_text

RETRY_STATUSES = frozenset({502, 503, 504})


class AgiMazeAPIError(RuntimeError):
    """The server answered with an HTTP error; ``status`` and the JSON ``body`` are kept."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class AgiMazeConnectionError(AgiMazeAPIError, ConnectionError):
    """The server could not be reached (refused, reset, DNS failure...)."""


class AgiMazeTimeoutError(AgiMazeAPIError, TimeoutError):
    """The server did not answer within the client's timeout."""


class AgiMazeProtocolError(AgiMazeAPIError, ValueError):
    """The reply is not the JSON object the API documents."""


class AgiMazeClient:
    """Minimal client of the AGI Maze API with keep-alive and seq-safe retries.

    Args:
        base_url: ``http://host:port`` or ``https://host`` (a path prefix is kept).
        timeout: seconds to wait for each answer.
        retries: extra attempts after a failure that may be retried (see the module docstring).
        backoff: seconds before the first retry; doubled for each further one.
        sleep: the function used to wait between retries (injectable for tests).
    """

    def __init__(
        self,
        base_url: str,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.25,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in {"http", "https"} or not parsed.hostname:
            raise ValueError(
                f"base_url must look like http://host:port or https://host, got {base_url!r}"
            )
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        if not backoff >= 0:
            raise ValueError(f"backoff must be >= 0 seconds, got {backoff}")
        self.base_url = base_url.rstrip("/")
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = parsed.port
        self._prefix = parsed.path.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self._conn: http.client.HTTPConnection | None = None

    # -- public API ---------------------------------------------------------------------------

    def description(self) -> str:
        """The service's rule text (``GET /api/description``)."""
        body = self._call("GET", "/api/description", None, retry=True)
        text = body.get("description")
        if not isinstance(text, str):
            raise AgiMazeProtocolError(f"/api/description reply has no description text: {body}")
        return text

    def start(self, path: str, seed: int | None = None, agent: str = "maze-envs") -> dict[str, Any]:
        """Start a session (``POST /api/start``); the reply carries ``id`` and ``actions``."""
        payload = {"path": path, "seed": seed, "client": "api", "agent": agent}
        body = self._call("POST", "/api/start", payload, retry=True)
        for field in ("id", "actions", "text"):
            if field not in body:
                raise AgiMazeProtocolError(f"/api/start reply lacks {field!r}: {body}")
        return body

    def step(self, session_id: str, action: str, seq: int | None) -> dict[str, Any]:
        """One step (``POST /api/step``). A ``bad_action`` answer is returned, not raised."""
        payload = {"id": session_id, "action": action, "seq": seq}
        return self._call("POST", "/api/step", payload, retry=seq is not None)

    def session(self, session_id: str) -> dict[str, Any]:
        """Snapshot of a session (``GET /api/session?id=...``)."""
        query = urllib.parse.urlencode({"id": session_id})
        return self._call("GET", f"/api/session?{query}", None, retry=True)

    def close(self) -> None:
        """Close the kept-alive connection (a later call reconnects)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- transport ----------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = (
                http.client.HTTPSConnection
                if self._scheme == "https"
                else http.client.HTTPConnection
            )
            self._conn = cls(self._host, self._port, timeout=self.timeout)
        return self._conn

    def _once(self, method: str, path: str, data: bytes | None) -> tuple[int, bytes]:
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        conn = self._connection()
        try:
            conn.request(method, self._prefix + path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
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
        attempts = 1 + (self.retries if retry else 0)
        failure: AgiMazeAPIError | None = None
        for attempt in range(attempts):
            if attempt:
                self._sleep(self.backoff * 2 ** (attempt - 1))
            try:
                status, raw = self._once(method, path, data)
            except TimeoutError:
                failure = AgiMazeTimeoutError(
                    f"{method} {url}: no answer within {self.timeout} s "
                    f"({attempt + 1} attempt(s)); raise timeout= or check the server"
                )
                continue
            except (OSError, http.client.HTTPException) as exc:
                failure = AgiMazeConnectionError(
                    f"{method} {url}: cannot reach the server ({exc.__class__.__name__}: {exc}) "
                    f"after {attempt + 1} attempt(s)"
                )
                continue
            body = _decode(method, url, status, raw)
            if status in RETRY_STATUSES:
                failure = AgiMazeAPIError(f"{method} {url}: HTTP {status} {body}", status, body)
                continue
            if status >= 400 and not (status == 400 and body.get("error") == "bad_action"):
                detail = body.get("detail", body)
                raise AgiMazeAPIError(
                    f"{method} {url}: HTTP {status} {body.get('error', 'error')}: {detail}",
                    status,
                    body,
                )
            return body
        assert failure is not None  # the loop ran at least once and only continues on failure
        raise failure


def _decode(method: str, url: str, status: int, raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise AgiMazeProtocolError(
            f"{method} {url}: HTTP {status} reply is not JSON: {raw[:200]!r}", status, raw
        ) from None
    if not isinstance(body, dict):
        raise AgiMazeProtocolError(
            f"{method} {url}: HTTP {status} reply is not a JSON object: {body!r}", status, body
        )
    return body


class HttpBackend:
    """The :class:`~maze_envs.agimaze.env.AgiMazeEnv` backend that plays over the HTTP API.

    Each episode is one session: ``POST /api/start`` with the pack path, the seed drawn from the
    env's reset seed, ``client="api"`` and the agent name, then one ``POST /api/step`` per action
    with ``seq`` 1, 2, 3, ... A ``bad_action`` answer becomes an observation (see the env's
    Action Space). Texts are passed through :func:`~maze_envs.agimaze.spaces.clean_text`.
    """

    def __init__(
        self,
        base_url: str,
        path: str,
        *,
        agent: str = "maze-envs",
        timeout: float = 30.0,
        retries: int = 3,
        client: AgiMazeClient | None = None,
    ) -> None:
        self.client = client or AgiMazeClient(base_url, timeout=timeout, retries=retries)
        self.path = path
        self.agent = agent
        self.open_map = path.startswith("TUTORIAL")
        self.session_id: str | None = None
        self._seq = 0
        self._map = ""
        self._inventory: dict[str, Any] = {}

    def probe(self) -> tuple[list[str], bool]:
        """Start a throw-away session to learn the action list; returns (actions, open_map)."""
        body = self.client.start(self.path, None, self.agent)
        actions = ordered_actions(_str_list(body.get("actions")))
        if not actions:
            raise AgiMazeProtocolError(
                f"/api/start reply for {self.path!r} lists no action names: {body.get('actions')!r}"
            )
        return actions, self.open_map

    def start(self, seed: int) -> EpisodeStart:
        body = self.client.start(self.path, seed, self.agent)
        self.session_id = str(body["id"])
        self._seq = 0
        meta = body.get("task_meta")
        max_steps = meta.get("max_steps") if isinstance(meta, dict) else None
        info = body.get("info")
        name = info.get("path") if isinstance(info, dict) else None
        formal = self._formal(body)
        return EpisodeStart(
            name=name if isinstance(name, str) else self.path,
            actions=_str_list(body.get("actions")),
            max_steps=max_steps if type(max_steps) is int and max_steps > 0 else None,
            open_map=self.open_map,
            text=clean_text(body.get("text")),
            formal=formal,
            map=self._remember_map(body),
        )

    def step(self, action: str) -> StepOutcome:
        if self.session_id is None:
            raise RuntimeError("HttpBackend.step before start")
        self._seq += 1
        body = self.client.step(self.session_id, action, self._seq)
        if body.get("error") == "bad_action":
            return rejected_action(action, _str_list(body.get("allowed")), dict(self._inventory))
        return StepOutcome(
            clean_text(body.get("text")),
            self._formal(body),
            body.get("done") is True,
            self._remember_map(body),
        )

    def render(self) -> str:
        return self._map

    def close(self) -> None:
        self.client.close()

    def _remember_map(self, body: dict[str, Any]) -> str | None:
        self._map = clean_text(body.get("map"), MAP_MAX_LENGTH)
        return self._map if self.open_map else None

    def _formal(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply's formal dict with every field of the documented type (defaults if not)."""
        raw = body.get("formal")
        formal: dict[str, Any] = raw if isinstance(raw, dict) else {}
        inventory = body.get("inventory", formal.get("inventory"))
        self._inventory = inventory if isinstance(inventory, dict) else {}
        status, observe = formal.get("status"), formal.get("observe")
        details = formal.get("details")
        return {
            "status": status if isinstance(status, str) else "blocked",
            "observe": observe if isinstance(observe, str) else "other",
            "events": _str_list(formal.get("events", body.get("events"))),
            "inventory": dict(self._inventory),
            "details": details if isinstance(details, dict) else {},
        }


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
