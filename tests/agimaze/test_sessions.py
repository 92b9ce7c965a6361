"""Session store and seq replay: exact boundaries of expiry, the bound and the replay window."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from maze_envs.agimaze.api.service import AgiMazeService
from maze_envs.agimaze.api.sessions import (
    SeqConflictError,
    SeqReplay,
    SessionLimitError,
    SessionStore,
    StaleSeqError,
    UnknownSessionError,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_expiry_happens_at_exactly_the_ttl() -> None:
    clock = Clock()
    store: SessionStore[str] = SessionStore(max_sessions=4, ttl_seconds=10.0, clock=clock)
    sid = store.add("game")
    clock.now = 9.875  # idle 9.875 s: alive, and the get restarts its window
    assert store.get(sid) == "game"
    clock.now = 19.75  # idle 9.875 s again
    assert store.get(sid) == "game"
    clock.now = 29.75  # idle exactly 10 s: gone
    with pytest.raises(UnknownSessionError) as info:
        store.get(sid)
    assert info.value.reason == "expired"
    assert "expired 0 s ago: it had had no request for 10 s (the server's --ttl)" in str(info.value)
    assert len(store) == 0


def test_a_store_full_of_sessions_in_play_refuses_and_evicts_none() -> None:
    """Unfinished sessions each used within the idle limit are never evicted: the start is
    refused, and retry_after is the time until the least recently used one may be."""
    clock = Clock()
    store: SessionStore[int] = SessionStore(
        max_sessions=2, ttl_seconds=100.0, idle_seconds=5.0, clock=clock
    )
    first = store.add(1)
    clock.now = 4.0
    second = store.add(2)
    clock.now = 4.5  # first idle 4.5 s: under the 5 s limit
    with pytest.raises(SessionLimitError) as info:
        store.add(3)
    assert info.value.limit == 2 and info.value.unfinished == 2
    assert info.value.retry_after == pytest.approx(0.5)
    text = str(info.value)
    assert "2 unfinished sessions" in text and "within the last 5 s (the idle limit" in text
    assert "try again in 1 s" in text
    assert store.get(first) == 1 and store.get(second) == 2  # both kept (and now used)
    assert store.evicted_idle == 0


def test_an_idle_unfinished_session_makes_room_least_recently_used_first() -> None:
    """The issue's case: a client that stops each episode before its end (--max-steps 1)
    leaves unfinished sessions; once idle past the limit they make room, oldest first."""
    clock = Clock()
    store: SessionStore[str] = SessionStore(
        max_sessions=3, ttl_seconds=100.0, idle_seconds=2.0, clock=clock
    )
    old, middle = store.add("old"), store.add("middle")
    clock.now = 1.0
    playing = store.add("playing")
    clock.now = 2.0  # old and middle idle exactly 2 s; playing 1 s
    newer = store.add("newer")  # evicts old (the least recently used), not middle
    assert store.evicted_idle == 1 and store.get(middle) == "middle"  # middle now used at t=2
    clock.now = 3.5  # playing idle 2.5 s, middle and newer 1.5 s
    store.add("newest")
    assert store.get(middle) == "middle" and store.get(newer) == "newer"
    with pytest.raises(UnknownSessionError) as info:
        store.get(playing)
    assert info.value.reason == "evicted_idle"
    assert "evicted unfinished 0 s ago: the server was full (3 sessions)" in str(info.value)
    assert "no request for 2.5 s, past the idle limit of 2 s" in str(info.value)
    with pytest.raises(UnknownSessionError, match="evicted unfinished 4 s ago"):
        clock.now = 5.5
        store.get(old)


def test_finished_sessions_make_room_before_idle_unfinished_ones() -> None:
    clock = Clock()
    store: SessionStore[str] = SessionStore(
        max_sessions=2, ttl_seconds=100.0, idle_seconds=1.0, clock=clock
    )
    idle, won = store.add("idle"), store.add("won")
    store.finish(won)
    clock.now = 50.0  # both idle long past the limit
    store.add("new")
    assert store.get(idle) == "idle" and store.evicted_idle == 0  # the finished one went
    assert store.retired == 1


def test_a_gone_session_says_what_happened_and_a_stranger_was_never_started() -> None:
    clock = Clock()
    store: SessionStore[str] = SessionStore(
        max_sessions=1, ttl_seconds=10.0, idle_seconds=1.0, clock=clock, max_retired=1, max_gone=2
    )
    with pytest.raises(UnknownSessionError) as info:
        store.get("f" * 32)
    assert info.value.reason == "unknown"
    assert "no session with this id was started on this server" in str(info.value)
    a = store.add("a")
    store.finish(a)
    b = store.add("b")  # a: retired (its stand-in answers)
    store.finish(b)
    store.add("c")  # b retired; a's stand-in dropped (max_retired 1)
    with pytest.raises(UnknownSessionError) as info:
        store.get(a)
    assert info.value.reason == "evicted_finished"
    assert "had finished (won, or out of steps) and was evicted to make room" in str(info.value)
    for n in range(3):  # more endings than max_gone remembers: a is forgotten
        clock.now += 11
        store.add(f"x{n}")
    with pytest.raises(UnknownSessionError) as info:
        store.get(a)
    assert info.value.reason == "unknown"
    assert "or it ended before the last 2 ended sessions the server remembers" in str(info.value)


def test_finished_sessions_make_room_least_recently_used_first() -> None:
    clock = Clock()
    store: SessionStore[str] = SessionStore(max_sessions=3, ttl_seconds=100.0, clock=clock)
    playing = store.add("playing")
    old, recent = store.add("old"), store.add("recent")
    store.finish(recent)
    store.finish(old)
    store.finish(old)  # idempotent
    clock.now = 1.0
    store.get(old)  # used after recent: recent is now the least recently used finished one
    clock.now = 2.0
    new = store.add("new")
    assert (store.unfinished, len(store), store.retired) == (2, 3, 1)
    assert store.get(recent) == "recent"  # retired, but its stand-in still answers
    newer = store.add("newer")  # evicts old, the only finished live session
    assert {store.get(i) for i in (playing, new, newer, old)} == {"playing", "new", "newer", "old"}
    with pytest.raises(SessionLimitError) as info:  # three unfinished in play: none evicted
        store.add("one too many")
    assert info.value.unfinished == 3
    assert store.get(playing) == "playing"


def test_retired_stand_ins_are_bounded_and_expire() -> None:
    clock = Clock()
    store: SessionStore[str] = SessionStore(
        max_sessions=1, ttl_seconds=10.0, clock=clock, retire=str.upper, max_retired=2
    )
    ids = []
    for name in ("a", "b", "c", "d"):
        ids.append(store.add(name))
        store.finish(ids[-1])
    assert store.retired == 2 and len(store) == 1
    with pytest.raises(UnknownSessionError):
        store.get(ids[0])  # the oldest stand-in made room for newer ones
    assert [store.get(i) for i in ids[1:]] == ["B", "C", "d"]  # stand-ins from retire
    clock.now = 10.0
    assert store.retired == 0 and len(store) == 0  # everything expires after the TTL


def test_store_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="max_sessions"):
        SessionStore(max_sessions=0)
    with pytest.raises(ValueError, match="ttl_seconds"):
        SessionStore(ttl_seconds=0)
    with pytest.raises(ValueError, match="max_retired"):
        SessionStore(max_retired=-1)
    with pytest.raises(ValueError, match="idle_seconds must be > 0 and at most ttl_seconds"):
        SessionStore(ttl_seconds=5.0, idle_seconds=6.0)
    with pytest.raises(ValueError, match="idle_seconds"):
        SessionStore(idle_seconds=0)
    with pytest.raises(ValueError, match="max_gone"):
        SessionStore(max_gone=-1)
    with pytest.raises(ValueError, match="window"):
        SeqReplay(window=0)


def reply(seq: int) -> tuple[int, dict]:
    return 200, {"text": f"step {seq}", "done": False}


def test_replay_window_keeps_exactly_the_last_replies() -> None:
    replay = SeqReplay(window=3)
    computed: list[int] = []
    for seq in range(1, 6):
        replay.handle(seq, "up", lambda s=seq: (computed.append(s), reply(s))[1])
    assert computed == [1, 2, 3, 4, 5]
    for seq in (3, 4, 5):  # the window: replayed, never recomputed
        assert replay.handle(seq, "up", lambda: pytest.fail("recomputed")) == reply(seq)
    with pytest.raises(StaleSeqError, match="seq 2 is older than the latest seq 5"):
        replay.handle(2, "up", lambda: pytest.fail("recomputed"))
    assert replay.handle(9, "up", lambda: reply(9)) == reply(9)  # gaps are fine
    with pytest.raises(StaleSeqError):
        replay.handle(7, "up", lambda: reply(7))  # skipped, never answered
    assert replay.handle(None, "up", lambda: reply(0)) == reply(0)  # null is never stored
    assert replay.handle(None, "up", lambda: reply(1)) == reply(1)


def test_a_stored_seq_resent_with_another_action_is_a_conflict() -> None:
    replay = SeqReplay()
    replay.handle(1, "up", lambda: reply(1))
    with pytest.raises(SeqConflictError, match="seq 1 was already used for action 'up'"):
        replay.handle(1, "down", lambda: reply(2))
    assert replay.handle(1, "up", lambda: reply(3)) == reply(1)


def test_replayed_replies_are_fresh_objects() -> None:
    replay = SeqReplay()
    first = replay.handle(1, "up", lambda: (200, {"events": ["moved"]}))
    first[1]["events"].append("tampered")
    again = replay.handle(1, "up", lambda: reply(0))
    assert again == (200, {"events": ["moved"]}) and again[1] is not first[1]


def test_a_stored_step_costs_its_json_not_an_encoder_buffer() -> None:
    """~0.5 KiB of JSON per stored step (orjson's own result holds a 4 KiB buffer)."""
    service = AgiMazeService()
    start = json.dumps({"path": "TRAINING/S1-rivers/STAGE-06/0000.json", "agent": "m"})
    sid = service.start(start.encode())[1]["id"]
    session = service.sessions.get(sid)
    steps = 64
    requests = [
        json.dumps({"id": sid, "action": ("up", "left", "down", "right")[i % 4], "seq": i + 1})
        for i in range(steps)
    ]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for request in requests:
            assert service.step(request.encode())[0] == 200
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    per_step = grown / steps
    json_per_step = session.replay.stored_bytes() / steps
    assert 300 < json_per_step < 1024
    assert per_step < 1.5 * 1024, f"{per_step:.0f} bytes per stored step"
