"""Server-side sessions: a bounded, expiring, thread-safe store and per-session seq replay.

:class:`SessionStore` keeps at most ``max_sessions`` sessions. A session expires once it has
gone ``ttl_seconds`` without a request (idle for ``ttl_seconds`` or more: it is dropped lazily,
on the next access to the store) and then looks like an unknown id. A session used within its
expiry window is never dropped to make room: when the bound is full of such sessions, a new
start is refused with :class:`SessionLimitError` (HTTP 503 ``server_full``, with the seconds
until the next expiry), so no client can push the others' games out by starting new ones.

:class:`SeqReplay` makes ``POST /api/step`` idempotent per session. A request with a ``seq``
already answered gets the stored response back and does not step again, so a client may resend
a step whose reply it lost. The last ``window`` responses are kept (seqs ``highest - window +
1`` .. ``highest`` when seqs are consecutive), each as the exact JSON bytes sent (about 0.5 KiB,
not a JSON encoder's buffer). A ``seq`` lower than the highest one seen whose response is no
longer (or was never) stored cannot be answered faithfully and is refused with ``stale_seq``.
A stored ``seq`` resent with a *different* action is refused with ``seq_conflict`` (a client
bug that would otherwise get an answer to the wrong question). ``seq`` null is never replayed.

Example:
    >>> clock = iter([0.0, 1.0, 2.0, 3.0]).__next__
    >>> store: SessionStore[str] = SessionStore(max_sessions=2, ttl_seconds=60.0, clock=clock)
    >>> a = store.add("first"); b = store.add("second")
    >>> store.add("third")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maze_envs.agimaze.sessions.SessionLimitError: the server holds 2 active sessions, ...
    >>> store.get(a)
    'first'
"""

from __future__ import annotations

import math
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
    """No session with this id: never created, or expired after inactivity."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return (
            f"unknown session id {self.session_id!r} (never started, or expired after "
            "inactivity); start a new one"
        )


class SessionLimitError(Exception):
    """The store is full of sessions active within their expiry window: no new one fits."""

    def __init__(self, limit: int, retry_after: float) -> None:
        self.limit = limit
        #: seconds until the least recently used session expires (at the earliest)
        self.retry_after = retry_after
        super().__init__(
            f"the server holds {limit} active sessions, its limit; active sessions are never "
            f"evicted, so try again in {math.ceil(retry_after)} s (when the least recently used "
            "one expires) or ask the operator to raise --max-sessions"
        )


class StaleSeqError(Exception):
    """A ``seq`` older than the replay window (or skipped earlier): no stored response."""

    def __init__(self, seq: int, highest: int) -> None:
        super().__init__(
            f"seq {seq} is older than the latest seq {highest} and its response is not stored; "
            f"send seq {highest} to get the latest response again, or a new seq > {highest}"
        )


class SeqConflictError(Exception):
    """A stored ``seq`` resent with another action than the one it answered."""

    def __init__(self, seq: int, first: str, again: str) -> None:
        super().__init__(
            f"seq {seq} was already used for action {first!r}, resent with {again!r}; a retry "
            f"must resend the same action, and a new step needs a new seq"
        )


class SessionStore(Generic[T]):
    """Thread-safe map ``id -> value`` with a size bound and an inactivity TTL (no eviction)."""

    def __init__(
        self,
        max_sessions: int = 1000,
        ttl_seconds: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
        if not (isinstance(ttl_seconds, (int, float)) and ttl_seconds > 0):
            raise ValueError(f"ttl_seconds must be > 0, got {ttl_seconds!r}")
        self.max_sessions = max_sessions
        self.ttl_seconds = float(ttl_seconds)
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
        """Store ``value`` under a fresh unguessable id; SessionLimitError when full."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            if len(self._items) >= self.max_sessions:
                _, (_, oldest) = next(iter(self._items.items()))
                raise SessionLimitError(self.max_sessions, oldest + self.ttl_seconds - now)
            session_id = secrets.token_hex(16)
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

    __slots__ = ("_replies", "highest", "window")

    def __init__(self, window: int = 64) -> None:
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an int >= 1, got {window!r}")
        self.window = window
        self.highest = -1
        # seq -> (status, action, exact JSON bytes): a replay is rebuilt from them, so no caller
        # can alter it, and each costs its length (orjson's own buffer is 4 KiB or more).
        self._replies: OrderedDict[int, tuple[int, str, bytes]] = OrderedDict()

    def handle(self, seq: int | None, action: str, compute: Callable[[], Reply]) -> Reply:
        """Answer ``seq``: (a fresh copy of) the stored reply, or ``compute()``.

        Raises StaleSeqError or SeqConflictError. Not thread-safe by itself: the caller holds
        the session's lock.
        """
        if seq is None:
            return compute()
        stored = self._replies.get(seq)
        if stored is not None:
            status, first, raw = stored
            if first != action:
                raise SeqConflictError(seq, first, action)
            return status, orjson.loads(raw)
        if seq < self.highest:
            raise StaleSeqError(seq, self.highest)
        reply = compute()
        self.highest = seq
        # bytes(memoryview(...)) copies into an object of exactly the JSON's size
        self._replies[seq] = (reply[0], action, bytes(memoryview(orjson.dumps(reply[1]))))
        while len(self._replies) > self.window:
            self._replies.popitem(last=False)
        return reply

    def stored_bytes(self) -> int:
        """JSON bytes held for replays (for the memory benchmark)."""
        return sum(len(raw) for _, _, raw in self._replies.values())
