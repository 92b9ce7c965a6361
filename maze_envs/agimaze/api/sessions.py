"""Server-side sessions: a bounded, expiring, thread-safe store and per-session seq replay.

:class:`SessionStore` keeps at most ``max_sessions`` live sessions. A live session is either
*unfinished* (still in play) or *finished* (won, or its step budget spent: the store is told by
:meth:`SessionStore.finish`). Only unfinished sessions are protected:

* When a start finds the store full, the least recently used *finished* session is evicted to
  make room. It is not forgotten at once: ``retire`` turns it into a small stand-in (the
  service keeps its last replies and a snapshot), kept among at most ``max_retired`` retired
  sessions, least recently used dropped first. So a client that lost the reply to its final
  step can still resend it with the same ``seq`` long after the session made room.
* With no finished session to evict, the least recently used *unfinished* session is evicted
  when it has gone ``idle_seconds`` (:data:`IDLE_SECONDS`, 1 s, by default) without a request:
  a client that stopped playing an episode before its end (a run capped below the budget, a
  cost cap) leaves sessions nobody will finish, and they must not fill the server. A session in
  play (a request within the last ``idle_seconds``) is never evicted: only when every live
  session is unfinished and was used that recently is a start refused, with
  :class:`SessionLimitError` (HTTP 503 ``server_full``, saying how many are unfinished and the
  seconds until the least recently used one may be evicted). The price: on a server that is
  full of sessions in play, a client that thinks longer than ``idle_seconds`` between two steps
  may lose its session to a new start (the least recently used goes first); raise
  ``max_sessions`` (or ``idle_seconds``) for many slow clients at once.
* Any session (unfinished, finished or retired) expires once it has gone ``ttl_seconds``
  without a request (dropped lazily, on the next access to the store).
* A session that is gone is remembered (its id and why, :class:`Gone`; at most ``max_gone``,
  oldest dropped first), so a request for it says what happened
  (:class:`UnknownSessionError`): evicted unfinished after being idle, expired, or finished and
  evicted long ago, or never started on this server.

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
    >>> now = [0.0]
    >>> store: SessionStore[str] = SessionStore(
    ...     max_sessions=2, ttl_seconds=60.0, idle_seconds=5.0, clock=lambda: now[0])
    >>> a = store.add("first"); b = store.add("second")
    >>> store.add("third")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maze_envs.agimaze.api.sessions.SessionLimitError: the server holds 2 unfinished sessions ...
    >>> store.finish(a)  # "first" is won: it may make room now
    >>> c = store.add("third")
    >>> store.get(b), store.get(c), store.unfinished
    ('second', 'third', 2)
    >>> now[0] = 3.0; _ = store.get(c)  # "third" is in play; "second" idle since t=0
    >>> now[0] = 5.0; d = store.add("fourth")  # "second" idle 5 s: evicted unfinished
    >>> store.get(b)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maze_envs.agimaze.api.sessions.UnknownSessionError: session '...' was evicted unfinished ...
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Generic, Literal, NamedTuple, TypeVar

import orjson

T = TypeVar("T")

#: (HTTP status, JSON body) of one answered request.
Reply = tuple[int, dict[str, Any]]

#: Seconds without a request after which an unfinished session may be evicted to make room
#: (only when the store is full and no finished session is left to evict).
IDLE_SECONDS: Final = 1.0
#: Why a session is gone.
GoneReason = Literal["evicted_idle", "expired", "evicted_finished"]


class Gone(NamedTuple):
    """What the store remembers of a session that is gone."""

    reason: GoneReason
    #: when it went (the store's clock)
    at: float
    #: seconds it had gone without a request then
    idle: float


class UnknownSessionError(KeyError):
    """No session with this id: it is gone (``gone`` says why) or was never started here."""

    def __init__(
        self,
        session_id: str,
        gone: Gone | None = None,
        *,
        now: float = 0.0,
        limits: dict[str, float] | None = None,
        forgot: bool = False,
    ) -> None:
        super().__init__(session_id)
        self.session_id = session_id
        self.gone = gone
        #: ``evicted_idle``, ``expired``, ``evicted_finished``, or ``unknown`` (never started
        #: here, or ended before what the store remembers)
        self.reason: str = gone.reason if gone is not None else "unknown"
        self._now = now
        self._limits = limits or {}
        self._forgot = forgot

    def __str__(self) -> str:
        sid, gone, limits = self.session_id, self.gone, self._limits
        if gone is None:
            how = (
                "no session with this id was started on this server, or it ended before the "
                f"last {int(limits.get('max_gone', 0)):,} ended sessions the server remembers"
                if self._forgot
                else "no session with this id was started on this server (since it started)"
            )
            return f"unknown session id {sid!r}: {how}; start one with POST /api/start"
        ago = f"{max(0.0, self._now - gone.at):.0f} s ago"
        if gone.reason == "evicted_idle":
            what = (
                f"was evicted unfinished {ago}: the server was full ({int(limits['max_sessions'])}"
                f" sessions) and it had had no request for {gone.idle:.1f} s, past the idle "
                f"limit of {limits['idle_seconds']:g} s (the server's --idle-evict)"
            )
        elif gone.reason == "expired":
            what = (
                f"expired {ago}: it had had no request for {limits['ttl_seconds']:g} s (the "
                "server's --ttl)"
            )
        else:
            what = (
                f"had finished (won, or out of steps) and was evicted to make room; its last "
                f"replies were dropped {ago}, after {int(limits['max_retired']):,} newer "
                "evictions"
            )
        return f"session {sid!r} {what}; start a new session"


class SessionLimitError(Exception):
    """Every live session is unfinished and in play: no new one fits (finished and idle ones
    would have been evicted)."""

    def __init__(self, limit: int, unfinished: int, retry_after: float, idle: float) -> None:
        self.limit = limit
        #: sessions still in play (neither won nor out of steps); equal to ``limit`` when raised
        self.unfinished = unfinished
        #: seconds until the least recently used unfinished session may be evicted (at the
        #: earliest: a request for it meanwhile keeps it)
        self.retry_after = retry_after
        super().__init__(
            f"the server holds {unfinished} unfinished sessions (neither won nor out of "
            f"steps), its limit of {limit}, and every one had a request within the last "
            f"{idle:g} s (the idle limit, --idle-evict); finished sessions, and unfinished ones "
            f"idle past that limit, make room for new ones, so try again in "
            f"{max(1, math.ceil(retry_after))} s, or ask the operator to raise --max-sessions"
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
        idle_seconds: idle seconds after which an unfinished session may be evicted when the
            store is full and holds no finished session (:data:`IDLE_SECONDS`).
        max_gone: sessions that are gone remembered at most, to say why (default ten times
            ``max_sessions``; about 200 bytes each).
    """

    def __init__(
        self,
        max_sessions: int = 1000,
        ttl_seconds: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        retire: Callable[[T], T] | None = None,
        max_retired: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        max_gone: int | None = None,
    ) -> None:
        if not isinstance(max_sessions, int) or max_sessions < 1:
            raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
        if not (isinstance(ttl_seconds, (int, float)) and ttl_seconds > 0):
            raise ValueError(f"ttl_seconds must be > 0, got {ttl_seconds!r}")
        if not (isinstance(idle_seconds, (int, float)) and 0 < idle_seconds <= ttl_seconds):
            raise ValueError(
                f"idle_seconds must be > 0 and at most ttl_seconds ({ttl_seconds!r}), got "
                f"{idle_seconds!r}"
            )
        if max_retired is None:
            max_retired = max_sessions
        if not isinstance(max_retired, int) or max_retired < 0:
            raise ValueError(f"max_retired must be an int >= 0, got {max_retired!r}")
        if max_gone is None:
            max_gone = 10 * max_sessions
        if not isinstance(max_gone, int) or max_gone < 0:
            raise ValueError(f"max_gone must be an int >= 0, got {max_gone!r}")
        self.max_sessions = max_sessions
        self.max_retired = max_retired
        self.max_gone = max_gone
        self.ttl_seconds = float(ttl_seconds)
        self.idle_seconds = float(idle_seconds)
        self._clock = clock
        self._retire = retire
        self._lock = threading.Lock()
        # id -> (value, last access time), each least recently used first: sessions in play,
        # finished live sessions (evictable), and stand-ins of evicted finished sessions.
        self._playing: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._finished: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._retired: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._groups = (self._playing, self._finished, self._retired)
        # id -> why it is gone, oldest first; and whether any record was dropped
        self._gone: OrderedDict[str, Gone] = OrderedDict()
        self._forgot = False
        #: unfinished sessions evicted after going idle (for the server's operator and tests)
        self.evicted_idle = 0

    def _remember(self, session_id: str, reason: GoneReason, now: float, last: float) -> None:
        if not self.max_gone:
            self._forgot = True
            return
        self._gone.pop(session_id, None)
        self._gone[session_id] = Gone(reason, now, now - last)
        while len(self._gone) > self.max_gone:
            self._gone.popitem(last=False)
            self._forgot = True

    def _expire(self, now: float) -> None:
        deadline = now - self.ttl_seconds
        for group in self._groups:
            while group:
                oldest_id, (_, last_used) = next(iter(group.items()))
                if last_used > deadline:
                    break
                del group[oldest_id]
                self._remember(oldest_id, "expired", last_used + self.ttl_seconds, last_used)

    def _make_room(self, now: float) -> None:
        """Evict the least recently used finished sessions, then unfinished ones idle past
        ``idle_seconds``, until a new one fits."""
        while len(self._playing) + len(self._finished) >= self.max_sessions:
            if self._finished:
                session_id, (value, last_used) = self._finished.popitem(last=False)
                if self.max_retired:
                    stand_in = value if self._retire is None else self._retire(value)
                    self._retired[session_id] = (stand_in, last_used)
                    while len(self._retired) > self.max_retired:
                        dropped, (_, used) = self._retired.popitem(last=False)
                        self._remember(dropped, "evicted_finished", now, used)
                else:
                    self._remember(session_id, "evicted_finished", now, last_used)
                continue
            session_id, (_, oldest) = next(iter(self._playing.items()))
            if now - oldest < self.idle_seconds:
                raise SessionLimitError(
                    self.max_sessions,
                    len(self._playing),
                    oldest + self.idle_seconds - now,
                    self.idle_seconds,
                )
            del self._playing[session_id]
            self._remember(session_id, "evicted_idle", now, oldest)
            self.evicted_idle += 1

    def _unknown(self, session_id: str, now: float) -> UnknownSessionError:
        limits = {
            "max_sessions": self.max_sessions,
            "ttl_seconds": self.ttl_seconds,
            "idle_seconds": self.idle_seconds,
            "max_retired": self.max_retired,
            "max_gone": self.max_gone,
        }
        return UnknownSessionError(
            session_id, self._gone.get(session_id), now=now, limits=limits, forgot=self._forgot
        )

    def add(self, value: T) -> str:
        """Store ``value`` (unfinished) under a fresh unguessable id.

        Evicts finished sessions, then unfinished ones idle past ``idle_seconds``, to make
        room; SessionLimitError when every live one is unfinished and in play.
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
            raise self._unknown(session_id, now)

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
