"""Server-side sessions: a bounded, expiring, thread-safe store and per-session seq replay.

:class:`SessionStore` keeps at most ``max_sessions`` live sessions. A live session is either
*unfinished* (still in play) or *finished* (won, or its step budget spent: the store is told by
:meth:`SessionStore.finish`). Only unfinished sessions are protected:

* When a start finds the store full, the least recently used *finished* session is evicted to
  make room. It is not forgotten at once: ``retire`` turns it into a small stand-in (the
  service keeps its last replies and a snapshot), kept among at most ``max_retired`` retired
  sessions, least recently used dropped first. So a client that lost the reply to its final
  step can still resend it with the same ``seq`` long after the session made room.
* Only when every live session is unfinished is a start refused, with
  :class:`SessionLimitError` (HTTP 503 ``server_full``, saying how many are unfinished and the
  seconds until the next expiry): no client can push the others' games out by starting new ones.
* Any session (unfinished, finished or retired) expires once it has gone ``ttl_seconds``
  without a request (dropped lazily, on the next access to the store) and then looks like an
  unknown id.

Memory is therefore bounded by ``max_sessions`` live sessions plus ``max_retired`` stand-ins,
whatever the clients do (the figures per session are in the service's docstring).

Lock order: the store's lock, then a session's own lock (``retire`` may take it); nothing
calls the store while holding a session's lock.

:class:`SeqReplay` makes ``POST /api/step`` idempotent per session. A request with a ``seq``
already answered gets the stored response back and does not step again, so a client may resend
a step whose reply it lost. The last ``window`` responses are kept (seqs ``highest - window +
1`` .. ``highest`` when seqs are consecutive), each as the exact JSON bytes sent (about 0.5 KiB,
not a JSON encoder's buffer). A ``seq`` lower than the highest one seen whose response is no
longer (or was never) stored cannot be answered faithfully and is refused with ``stale_seq``.
A stored ``seq`` resent with a *different* action is refused with ``seq_conflict`` (a client
bug that would otherwise get an answer to the wrong question). ``seq`` null is never replayed.

Example:
    >>> clock = iter(float(t) for t in range(100)).__next__
    >>> store: SessionStore[str] = SessionStore(max_sessions=2, ttl_seconds=60.0, clock=clock)
    >>> a = store.add("first"); b = store.add("second")
    >>> store.add("third")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maze_envs.agimaze.api.sessions.SessionLimitError: the server holds 2 unfinished sessions ...
    >>> store.finish(a)  # "first" is won: it may make room now
    >>> c = store.add("third")
    >>> store.get(b), store.get(c), store.unfinished
    ('second', 'third', 2)
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
    """Every live session is unfinished: no new one fits (finished ones would have been evicted)."""

    def __init__(self, limit: int, unfinished: int, retry_after: float) -> None:
        self.limit = limit
        #: sessions still in play (neither won nor out of steps); equal to ``limit`` when raised
        self.unfinished = unfinished
        #: seconds until the least recently used unfinished session expires (at the earliest)
        self.retry_after = retry_after
        super().__init__(
            f"the server holds {unfinished} unfinished sessions (neither won nor out of "
            f"steps), its limit of {limit}; finished sessions make room for new ones but "
            f"unfinished ones are never evicted, so try again in {math.ceil(retry_after)} s "
            "(when the least recently used unfinished one expires), play some to their end, or "
            "ask the operator to raise --max-sessions"
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
    """Thread-safe map ``id -> value``: a bound on live sessions, finished ones evictable, a TTL.

    Args:
        max_sessions: live sessions (unfinished and finished) kept at most.
        ttl_seconds: idle seconds after which any session expires.
        clock: the time source (injectable for tests).
        retire: makes the stand-in kept for an evicted finished session (called with the
            store's lock held); ``None`` keeps the value itself.
        max_retired: evicted sessions kept as stand-ins at most (default ``max_sessions``).
    """

    def __init__(
        self,
        max_sessions: int = 1000,
        ttl_seconds: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        retire: Callable[[T], T] | None = None,
        max_retired: int | None = None,
    ) -> None:
        if not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
        if not (isinstance(ttl_seconds, (int, float)) and ttl_seconds > 0):
            raise ValueError(f"ttl_seconds must be > 0, got {ttl_seconds!r}")
        if max_retired is None:
            max_retired = max_sessions
        if not isinstance(max_retired, int) or max_retired < 0:
            raise ValueError(f"max_retired must be an int >= 0, got {max_retired!r}")
        self.max_sessions = max_sessions
        self.max_retired = max_retired
        self.ttl_seconds = float(ttl_seconds)
        self._clock = clock
        self._retire = retire
        self._lock = threading.Lock()
        # id -> (value, last access time), each least recently used first: sessions in play,
        # finished live sessions (evictable), and stand-ins of evicted finished sessions.
        self._playing: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._finished: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._retired: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._groups = (self._playing, self._finished, self._retired)

    def _expire(self, now: float) -> None:
        deadline = now - self.ttl_seconds
        for group in self._groups:
            while group:
                oldest_id, (_, last_used) = next(iter(group.items()))
                if last_used > deadline:
                    break
                del group[oldest_id]

    def _make_room(self, now: float) -> None:
        """Evict the least recently used finished sessions until a new one fits."""
        while len(self._playing) + len(self._finished) >= self.max_sessions:
            if not self._finished:
                _, (_, oldest) = next(iter(self._playing.items()))
                unfinished = len(self._playing)
                raise SessionLimitError(
                    self.max_sessions, unfinished, oldest + self.ttl_seconds - now
                )
            session_id, (value, last_used) = self._finished.popitem(last=False)
            if self.max_retired:
                stand_in = value if self._retire is None else self._retire(value)
                self._retired[session_id] = (stand_in, last_used)
                while len(self._retired) > self.max_retired:
                    self._retired.popitem(last=False)

    def add(self, value: T) -> str:
        """Store ``value`` (unfinished) under a fresh unguessable id.

        Evicts finished sessions to make room; SessionLimitError when every live one is
        unfinished.
        """
        with self._lock:
            now = self._clock()
            self._expire(now)
            self._make_room(now)
            session_id = secrets.token_hex(16)
            self._playing[session_id] = (value, now)
        return session_id

    def get(self, session_id: str) -> T:
        """The value or retired stand-in of ``session_id`` (marked used); UnknownSessionError."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            for group in self._groups:
                found = group.pop(session_id, None)
                if found is not None:
                    group[session_id] = (found[0], now)
                    return found[0]
            raise UnknownSessionError(session_id)

    def finish(self, session_id: str) -> None:
        """Mark a live session finished (won, or its budget spent): evictable from now on.

        Idempotent; an id that expired meanwhile is ignored.
        """
        with self._lock:
            found = self._playing.pop(session_id, None)
            if found is not None:
                self._finished[session_id] = found

    @property
    def unfinished(self) -> int:
        """Live sessions still in play (the ones a full server never evicts)."""
        with self._lock:
            self._expire(self._clock())
            return len(self._playing)

    @property
    def retired(self) -> int:
        """Evicted finished sessions kept as stand-ins."""
        with self._lock:
            self._expire(self._clock())
            return len(self._retired)

    def __len__(self) -> int:
        """Live sessions (unfinished and finished; retired stand-ins not included)."""
        with self._lock:
            self._expire(self._clock())
            return len(self._playing) + len(self._finished)


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

    def tail(self, keep: int) -> SeqReplay:
        """A new replay holding only the last ``keep`` replies (the same ``highest``).

        What a retired session keeps: its final step can still be resent with its ``seq``.
        """
        short = SeqReplay(window=keep)
        short.highest = self.highest
        for seq, stored in list(self._replies.items())[-keep:]:
            short._replies[seq] = stored
        return short

    def stored_bytes(self) -> int:
        """JSON bytes held for replays (for the memory benchmark)."""
        return sum(len(raw) for _, _, raw in self._replies.values())
