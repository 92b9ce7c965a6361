"""Server-side sessions: a bounded, expiring, thread-safe store and per-session seq replay.

:class:`SessionStore` keeps at most ``max_sessions`` sessions. Adding one beyond the bound evicts
the least recently used session, and a session idle for longer than ``ttl_seconds`` expires (it
is dropped lazily, on the next access to the store). Both look like an unknown id afterwards.

:class:`SeqReplay` makes ``POST /api/step`` idempotent per session. A request with a ``seq``
already answered gets the stored response back and does not step again, so a client may resend
a step whose reply it lost. The last ``window`` responses are kept. A ``seq`` lower than the
highest one seen whose response is no longer (or was never) stored cannot be answered
faithfully and is refused with ``stale_seq``. ``seq`` null is never replayed.

Example:
    >>> store: SessionStore[str] = SessionStore(max_sessions=2, ttl_seconds=60.0)
    >>> a = store.add("first"); b = store.add("second"); c = store.add("third")
    >>> len(store), store.get(c)
    (2, 'third')
    >>> store.get(a)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maze_envs.agimaze.sessions.UnknownSessionError: unknown session id ...
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import orjson

T = TypeVar("T")

#: (HTTP status, JSON body) of one answered request.
Reply = tuple[int, dict[str, Any]]


class UnknownSessionError(KeyError):
    """No session with this id: never created, expired, or evicted by the bound."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return (
            f"unknown session id {self.session_id!r} (never started, expired after inactivity, "
            "or evicted because the server holds too many sessions); start a new one"
        )


class StaleSeqError(Exception):
    """A ``seq`` older than the replay window (or skipped earlier): no stored response."""

    def __init__(self, seq: int, highest: int) -> None:
        super().__init__(
            f"seq {seq} is older than the latest seq {highest} and its response is not stored; "
            f"send seq {highest} to get the latest response again, or a new seq > {highest}"
        )


class SessionStore(Generic[T]):
    """Thread-safe LRU map ``id -> value`` with a size bound and an inactivity TTL."""

    def __init__(
        self,
        max_sessions: int = 1000,
        ttl_seconds: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        if not ttl_seconds > 0:
            raise ValueError(f"ttl_seconds must be > 0, got {ttl_seconds}")
        self.max_sessions = max_sessions
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        # id -> (value, last access time); order = least recently used first.
        self._items: OrderedDict[str, tuple[T, float]] = OrderedDict()

    def _expire(self, now: float) -> None:
        deadline = now - self.ttl_seconds
        while self._items:
            oldest_id, (_, last_used) = next(iter(self._items.items()))
            if last_used > deadline:
                break
            del self._items[oldest_id]

    def add(self, value: T) -> str:
        """Store ``value`` under a fresh unguessable id, evicting the LRU session if full."""
        session_id = secrets.token_hex(16)
        with self._lock:
            now = self._clock()
            self._expire(now)
            while len(self._items) >= self.max_sessions:
                self._items.popitem(last=False)
            self._items[session_id] = (value, now)
        return session_id

    def get(self, session_id: str) -> T:
        """The session's value (marking it used); :class:`UnknownSessionError` if absent."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            try:
                value, _ = self._items.pop(session_id)
            except KeyError:
                raise UnknownSessionError(session_id) from None
            self._items[session_id] = (value, now)
            return value

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._items)


class SeqReplay:
    """Idempotent request handling by client ``seq`` (see the module docstring)."""

    def __init__(self, window: int = 64) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = window
        self.highest = -1
        # seq -> (status, JSON bytes): a replay is rebuilt from them, so no caller can alter it
        self._replies: OrderedDict[int, tuple[int, bytes]] = OrderedDict()

    def handle(self, seq: int | None, compute: Callable[[], Reply]) -> Reply:
        """Answer ``seq``: (a fresh copy of) the stored reply, ``compute()``, or StaleSeqError.

        Not thread-safe by itself: the caller holds the session's lock.
        """
        if seq is None:
            return compute()
        stored = self._replies.get(seq)
        if stored is not None:
            return stored[0], orjson.loads(stored[1])
        if seq < self.highest:
            raise StaleSeqError(seq, self.highest)
        reply = compute()
        self.highest = seq
        self._replies[seq] = (reply[0], orjson.dumps(reply[1]))
        while len(self._replies) > self.window:
            self._replies.popitem(last=False)
        return reply
