"""Issue 20: a public client's whole benchmark runs against the server with bounded sessions.

A public client never ends a session: it plays each episode to its end (a win, or its
``max_steps`` spent) and starts the next. Finished sessions must make room for new ones (least
recently used first, their final replies still resendable); only sessions still in play are
protected, and ``server_full`` (503) means that many *unfinished* sessions. Everything runs
through the HTTP client against a real uvicorn server on loopback; nothing depends on timing
(threads are joined, deadlines are generous enough that only a hang reaches them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import uvicorn

from maze_envs.agimaze.api import AgiMazeAPIError, AgiMazeClient, HttpBackend
from maze_envs.agimaze.api.server import create_app
from maze_envs.agimaze.api.service import AgiMazeService
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.types import Bundle, BundleMeta, Labyrinth
from tests.agimaze.test_env import corridor, generated

CORRIDOR = "TEST/corridor.json"  # right x3 wins; max_steps 4
BUDGETED = "TEST/budgeted.json"  # a 5x5 labyrinth with a 30-step budget
#: generous: only a hung server reaches it
DEADLINE = 120.0


def labyrinths() -> dict[str, Labyrinth]:
    return {
        CORRIDOR: corridor(max_steps=4),
        BUDGETED: generated(4).model_copy(update={"max_steps": 30}),
    }


LABYRINTHS = labyrinths()


def resolver(path: str, rng: np.random.Generator | None) -> tuple[str, Bundle]:
    if path not in LABYRINTHS:
        raise AssertionError(f"unexpected path {path}")
    return path, Bundle(labyrinth=LABYRINTHS[path], meta=BundleMeta(path=path))


@contextmanager
def serving(service: AgiMazeService) -> Iterator[str]:
    """The base URL of a uvicorn server over ``service`` on a free loopback port."""
    config = uvicorn.Config(create_app(service), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + DEADLINE
    while not server.started:  # a start-up poll, not a synchronisation of the test's logic
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            pytest.fail("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=DEADLINE)


def public_client(base_url: str) -> AgiMazeClient:
    # retries=0: a 503 would surface at once instead of being retried away
    return AgiMazeClient(base_url, timeout=DEADLINE, retries=0)


def play_episode(client: AgiMazeClient, path: str, rng: np.random.Generator) -> dict:
    """One episode as the public random agent plays it: uniform actions, seq 1, 2, ..., until
    ``done`` or ``max_steps`` steps; the session is never closed. Returns the final reply and
    what identifies it (id, last seq, last action)."""
    start = client.start(path, seed=int(rng.integers(1 << 30)), agent="random")
    actions, budget = start["actions"], start["task_meta"]["max_steps"]
    seq, reply, action = 0, {}, ""
    while seq < budget and not reply.get("done"):
        seq += 1
        action = actions[int(rng.integers(len(actions)))]
        reply = client.step(start["id"], action, seq)
    return {"id": start["id"], "seq": seq, "action": action, "reply": reply}


def test_more_episodes_than_max_sessions_played_to_their_end_never_get_503() -> None:
    """24 episodes (wins and spent budgets) through a server of 4 sessions: no 503, and the
    final step of an evicted session can still be resent with its seq."""
    service = AgiMazeService(resolver=resolver, max_sessions=4)
    rng = np.random.default_rng(0)
    with serving(service) as url:
        client = public_client(url)
        episodes = []
        for n in range(24):
            if n % 3 == 0:  # a win in three steps
                start = client.start(CORRIDOR, seed=n, agent="scripted")
                for seq in (1, 2, 3):
                    reply = client.step(start["id"], "right", seq)
                assert reply["done"] is True
                episodes.append({"id": start["id"], "seq": 3, "action": "right", "reply": reply})
            else:  # random play until the win or the budget
                episodes.append(play_episode(client, BUDGETED if n % 3 == 1 else CORRIDOR, rng))
            assert len(service.sessions) <= 4 and service.sessions.retired <= 4
        spent = [e for e in episodes if not e["reply"]["done"]]
        assert spent and len(spent) < len(episodes)  # both ways of finishing were played
        # the newest evicted sessions still answer a resend of their final step, unchanged
        for episode in episodes[-8:-4]:
            again = client.step(episode["id"], episode["action"], episode["seq"])
            assert again == episode["reply"]
        # and a new step of an evicted session is refused as game over, naming why
        retired = episodes[-8:-4]
        won = next(e for e in retired if e["reply"]["done"])
        lost = next(e for e in retired if not e["reply"]["done"])
        with pytest.raises(AgiMazeAPIError, match=r"game_over.*was won") as refused:
            client.step(won["id"], "left", won["seq"] + 1)
        assert refused.value.status == 409
        with pytest.raises(AgiMazeAPIError, match=r"game_over.*spent its step budget \((\d+) of"):
            client.step(lost["id"], "left", lost["seq"] + 1)
        snapshot = client.session(lost["id"])  # an evicted session still has its snapshot
        assert snapshot["id"] == lost["id"] and snapshot["steps"] == lost["seq"]
        client.close()


def test_the_env_over_http_plays_more_episodes_than_max_sessions() -> None:
    """AgiMazeEnv's HTTP backend (a 5x budget) never closes a session either."""
    service = AgiMazeService(resolver=resolver, max_sessions=2)
    with serving(service) as url:
        backend = HttpBackend(url, retries=0, timeout=DEADLINE)
        env = AgiMazeEnv(path=CORRIDOR, backend=backend)
        ends = []
        for episode in range(6):
            env.reset(seed=episode)
            while True:
                *_, terminated, truncated, info = env.step_name("left" if episode % 2 else "right")
                if terminated or truncated:
                    ends.append((terminated, info["steps"]))
                    break
        env.close()
    assert ends == [(True, 3), (False, 20)] * 3
    assert len(service.sessions) == 2


class Clock:
    """The server's time, set by the test between requests (requests are sequential)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_max_sessions_unfinished_sessions_in_play_get_503_and_none_is_evicted() -> None:
    # the clock stands still: every session had a request within the idle limit
    service = AgiMazeService(resolver=resolver, max_sessions=3, clock=Clock())
    with serving(service) as url:
        client = public_client(url)
        finished = client.start(CORRIDOR, seed=0, agent="a")["id"]
        for seq in (1, 2, 3):
            client.step(finished, "right", seq)  # won: evictable
        playing = [client.start(BUDGETED, seed=n, agent="a")["id"] for n in range(3)]
        for sid in playing:
            client.step(sid, "up", 1)  # in play, well within the budget of 30
        assert service.sessions.unfinished == 3
        for _ in range(3):
            with pytest.raises(AgiMazeAPIError) as full:
                client.start(BUDGETED, seed=9, agent="greedy")
            assert full.value.status == 503 and full.value.body["error"] == "server_full"
            assert full.value.body["unfinished"] == 3 and full.value.body["retry_after"] == 1
            assert "3 unfinished sessions" in full.value.body["detail"]
            assert "every one had a request within the last 1 s" in full.value.body["detail"]
        for sid in playing:  # none was evicted: each plays on from where it was
            assert client.session(sid)["steps"] == 1
            client.step(sid, "down", 2)
            assert client.session(sid)["steps"] == 2
        client.close()


def test_sixteen_parallel_public_clients_never_get_503() -> None:
    """16 clients, each playing episodes to their end, against 16 session slots: each holds at
    most one unfinished session, so a start always finds a finished one to evict."""
    clients, episodes_each = 16, 6
    service = AgiMazeService(resolver=resolver, max_sessions=clients)
    failures: list[str] = []
    finals: list[dict] = []

    def run(index: int, url: str) -> None:
        client = public_client(url)
        rng = np.random.default_rng(index)
        try:
            for n in range(episodes_each):
                finals.append(play_episode(client, BUDGETED if n % 2 else CORRIDOR, rng))
        except AgiMazeAPIError as exc:
            failures.append(f"client {index}: {exc}")
        finally:
            client.close()

    with serving(service) as url:
        threads = [threading.Thread(target=run, args=(i, url)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=DEADLINE)
        assert not any(thread.is_alive() for thread in threads), "a client hung"
    assert failures == []
    assert len(finals) == clients * episodes_each
    assert len(service.sessions) <= clients and service.sessions.unfinished == 0


def test_a_runner_that_stops_every_episode_after_one_step_is_never_refused() -> None:
    """Issue 23: the public runner with --max-steps 1 leaves every session unfinished; at
    episode max_sessions + 1 it got 503 server_full for the rest of the hour. Now a full server
    evicts the least recently used unfinished session idle past the limit (1 s), so 3 x
    max_sessions episodes run without a refusal, while sessions still in play are kept."""
    clock = Clock()
    service = AgiMazeService(resolver=resolver, max_sessions=4, clock=clock)
    with serving(service) as url:
        client = public_client(url)
        ids = []
        for n in range(12):
            clock.now += 0.3  # a runner doing about three episodes a second
            start = client.start(BUDGETED, seed=n, agent="random")
            client.step(start["id"], "up", 1)
            ids.append(start["id"])
        assert service.sessions.unfinished == 4 and service.sessions.evicted_idle == 8
        # the newest four are kept; the first is gone, and a request for it says why
        for sid in ids[-4:]:
            assert client.session(sid)["steps"] == 1
        with pytest.raises(AgiMazeAPIError) as gone:
            client.step(ids[0], "up", 2)
        assert gone.value.status == 404 and gone.value.body["reason"] == "evicted_idle"
        assert "was evicted unfinished" in gone.value.body["detail"]
        assert "past the idle limit of 1 s" in gone.value.body["detail"]
        client.close()


def test_every_404_says_what_happened() -> None:
    clock = Clock()
    service = AgiMazeService(resolver=resolver, max_sessions=1, ttl_seconds=60.0, clock=clock)
    with serving(service) as url:
        client = public_client(url)
        with pytest.raises(AgiMazeAPIError) as never:
            client.step("0" * 32, "up", 1)
        assert never.value.status == 404 and never.value.body["reason"] == "unknown"
        assert "no session with this id was started on this server" in never.value.body["detail"]
        old = client.start(BUDGETED, seed=0, agent="a")["id"]
        clock.now = 60.0  # a minute without a request: expired
        client.start(BUDGETED, seed=1, agent="a")
        with pytest.raises(AgiMazeAPIError) as expired:
            client.session(old)
        assert expired.value.body["reason"] == "expired"
        assert "had had no request for 60 s (the server's --ttl)" in expired.value.body["detail"]
        client.close()
