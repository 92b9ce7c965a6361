"""The HTTP backend under faults: no step is ever applied twice and the counts never drift.

Against :mod:`tests.agimaze.faults` (dropped connections, delays past the deadline, 5xx pages
from a proxy, truncated, non-object, empty and dripped replies), before and after the server
applies a step. Time is the fault server's fake clock: no test waits on, or depends on, the
wall clock (deadlines are generous, and a late server moves the fake clock past them).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from maze_envs.agimaze.api import (
    AgiMazeAPIError,
    AgiMazeClient,
    AgiMazeProtocolError,
    AgiMazeTimeoutError,
    HttpBackend,
)
from maze_envs.agimaze.env import AgiMazeEnv
from tests.agimaze.faults import (
    FAULTS,
    GENEROUS,
    FakeClock,
    RecordingService,
    fault_server,
    scripted,
    server_steps,
)
from tests.agimaze.test_server import CORRIDOR, MAZE, offline_labyrinths, resolver


def service() -> RecordingService:
    return RecordingService(resolver=resolver)


def remote(
    url: str,
    clock: FakeClock,
    path: str = CORRIDOR,
    *,
    retries: int = 0,
    max_steps: int | None = None,
    actions: list[str] | str | None = None,
) -> AgiMazeEnv:
    # the backend's client runs on the fault server's clock (its waits between retries too)
    client = client_on(url, clock, retries=retries)
    env = AgiMazeEnv(
        path=path,
        backend=HttpBackend(url, actions=actions, client=client),
        max_steps=max_steps,
    )
    assert isinstance(env.backend, HttpBackend) and env.backend.client is client
    return env


def client_on(
    url: str, clock: FakeClock, timeout: float = GENEROUS, retries: int = 3
) -> AgiMazeClient:
    return AgiMazeClient(url, timeout=timeout, retries=retries, sleep=clock.advance, clock=clock)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failed_step_retried_by_the_user_is_applied_once(fault: str) -> None:
    svc = service()
    clock = FakeClock()
    with fault_server(svc, scripted([fault]), clock) as (url, injected):
        env = remote(url, clock)
        env.reset(seed=0)
        with pytest.raises(AgiMazeAPIError):
            env.step_name("right")  # retries=0: the fault reaches the env
        assert injected == [fault]
        obs, _, _, _, info = env.step_name("right")  # the user tries again
        assert (
            obs["text"] == "You went right and stepped on a tile with a key. You pick up the key."
        )
        assert info["steps"] == 1 == server_steps(svc, env.backend.session_id)  # type: ignore[attr-defined]
        obs, _, _, _, info = env.step_name("right")
        assert info["steps"] == 2 == server_steps(svc, env.backend.session_id)  # type: ignore[attr-defined]
        assert [seq for _, seq, _ in svc.applied] == [1, 2]


@pytest.mark.parametrize("fault", ["drop_before", "drop_after", "empty_after", "html_502_after"])
def test_another_action_after_a_failure_first_settles_the_failed_step(fault: str) -> None:
    """The lost step is resent with its seq, counted, then the new action goes with the next."""
    svc = service()
    clock = FakeClock()
    with fault_server(svc, scripted([fault]), clock) as (url, _):
        env = remote(url, clock)
        env.reset(seed=0)
        with pytest.raises(AgiMazeAPIError):
            env.step_name("right")
        obs, _, _, _, info = env.step_name("left")  # a different action: right, then left
        assert info["steps"] == 2 == server_steps(svc, env.backend.session_id)  # type: ignore[attr-defined]
        assert obs["text"] == "You went left and stepped on an empty tile."
        assert [(seq, action) for _, seq, action in svc.applied] == [(1, "right"), (2, "left")]


def test_a_lost_winning_step_ends_the_episode() -> None:
    svc = service()
    clock = FakeClock()
    with fault_server(svc, scripted([None, None, "drop_after"]), clock) as (url, _):
        env = remote(url, clock)
        env.reset(seed=0)
        env.step_name("right")
        env.step_name("right")
        with pytest.raises(AgiMazeAPIError):
            env.step_name("right")  # the win was applied; its reply lost
        obs, reward, terminated, _, info = env.step_name("up")  # "up" is not played: game over
        assert terminated and reward == 1.0 and info["solved"] and info["steps"] == 3
        assert obs["text"] == "You leave the labyrinth with the treasure."
        assert [action for *_, action in svc.applied] == ["right", "right", "right"]


def test_a_definite_error_answer_is_not_resent() -> None:
    svc = service()
    clock = FakeClock()
    with fault_server(svc, scripted([]), clock) as (url, _):
        env = remote(url, clock)
        env.reset(seed=0)
        svc.sessions = type(svc.sessions)(clock=lambda: 1e9)  # every session is now unknown
        with pytest.raises(AgiMazeAPIError, match="unknown_session") as info:
            env.step_name("right")
        assert info.value.status == 404
        assert env.backend._pending is None  # type: ignore[attr-defined]


def test_gateway_pages_are_retried_by_status_before_decoding() -> None:
    svc = service()
    plan = scripted(["html_503_before", "html_502_after", "html_504_after"])
    clock = FakeClock()
    with fault_server(svc, plan, clock) as (url, injected):
        env = remote(url, clock, retries=3)
        env.reset(seed=0)
        obs, _, _, _, info = env.step_name("right")  # three HTML pages, then the stored reply
        assert injected == ["html_503_before", "html_502_after", "html_504_after"]
        assert "pick up the key" in obs["text"] and info["steps"] == 1
        assert [seq for _, seq, _ in svc.applied] == [1]
    with fault_server(service(), scripted(["html_503_before"] * 3), clock) as (url, _):
        client = client_on(url, clock, retries=1)
        sid = client.start(CORRIDOR, seed=0)["id"]
        with pytest.raises(AgiMazeAPIError) as failure:
            client.step(sid, "right", 1)
        assert failure.value.status == 503 and not isinstance(failure.value, AgiMazeProtocolError)
        assert "HTTP 503 after 2 attempt(s)" in str(failure.value)


@pytest.mark.parametrize("fault", ["empty_after", "non_object_after", "garbage_after"])
def test_replies_without_the_documented_fields_are_protocol_errors(fault: str) -> None:
    clock = FakeClock()
    with fault_server(service(), scripted([fault]), clock) as (url, _):
        client = client_on(url, clock)
        sid = client.start(CORRIDOR, seed=0)["id"]
        with pytest.raises(AgiMazeProtocolError):
            client.step(sid, "right", 1)
        assert client.step(sid, "right", 1)["inventory"] == {"key": True}  # the stored reply


def test_the_timeout_is_a_deadline_for_the_whole_call() -> None:
    """A reply dripped byte by byte (each byte a second apart on the fake clock, well inside
    the 60 s timeout) still times out when the whole call passes 60 s, with no retry left."""
    clock = FakeClock()
    with fault_server(service(), scripted(["drip_after"] * 4), clock) as (url, injected):
        client = client_on(url, clock, retries=3)
        sid = client.start(CORRIDOR, seed=0)["id"]
        began = clock()
        with pytest.raises(AgiMazeTimeoutError, match=r"within 60 s \(1 attempt"):
            client.step(sid, "right", 1)
        assert injected == ["drip_after"]  # one attempt: the deadline left no time to retry
        assert clock() - began >= GENEROUS  # no socket read waited: the call's clock ran out


def test_gym_make_starts_no_session() -> None:
    svc = service()
    clock = FakeClock()
    with fault_server(svc, scripted([]), clock) as (url, _):
        env = remote(url, clock)
        assert len(svc.sessions) == 0 and env.action_names == ["up", "down", "left", "right"]
        env.reset(seed=0)
        assert len(svc.sessions) == 1


def test_actions_come_from_the_path_or_the_argument() -> None:
    svc = service()
    clock = FakeClock()
    with fault_server(svc, scripted([]), clock) as (url, _):
        grenades = remote(url, clock, path="EXTENDED/grenades/STAGE-01-4x4")
        assert grenades.action_names[4:] == ["bomb_up", "bomb_down", "bomb_left", "bomb_right"]
        assert remote(url, clock, path="EXTENDED").action_space.n == 12
        chosen = remote(url, clock, actions=["right", "up"])
        assert chosen.action_names == ["up", "right"] and chosen.action_space.n == 2
        assert len(svc.sessions) == 0
        with pytest.raises(ValueError, match="list of action names"):
            remote(url, clock, actions="up")
        with pytest.raises(ValueError, match="plays pack paths"):
            AgiMazeEnv(labyrinth=offline_labyrinths()[CORRIDOR], backend=HttpBackend(url))


def test_random_faults_never_apply_a_step_twice_nor_let_counts_drift() -> None:
    """Random play under a 30 % fault rate (every kind, before and after applying)."""
    rng = random.Random(11)
    faulty = [True]

    def plan() -> str | None:
        return rng.choice(FAULTS) if faulty[0] and rng.random() < 0.3 else None

    svc = service()
    clock = FakeClock()
    with fault_server(svc, plan, clock) as (url, injected):
        env = remote(url, clock, path=MAZE, retries=2, max_steps=30)
        env.reset(seed=3)
        session = env.backend.session_id  # type: ignore[attr-defined]
        actions = np.random.default_rng(5).integers(env.action_space.n, size=130)
        failures = successes = episodes = 0
        for action in actions:
            try:
                _, _, terminated, truncated, info = env.step(action)
            except AgiMazeAPIError:
                failures += 1
                continue
            successes += 1
            assert info["steps"] == server_steps(svc, session)
            if terminated or truncated:
                episodes += 1
                env.reset(seed=episodes)
                session = env.backend.session_id  # type: ignore[attr-defined]
        faulty[0] = False  # settle: one clean step resolves anything still pending
        obs, _, _, _, info = env.step(0)
        steps = server_steps(svc, session)
        assert info["steps"] == steps
    assert failures >= 10 and successes >= 60
    assert set(injected) == set(FAULTS), set(FAULTS) - set(injected)
    applied = [(sid, seq) for sid, seq, _ in svc.applied]
    assert len(applied) == len(set(applied)), "a seq was applied twice"
    # the last session's applied actions, replayed on the local engine, end in the same place
    mine = [a for sid, _, a in svc.applied if sid == id(svc.sessions.get(session))]
    assert len(mine) == steps
    local = AgiMazeEnv(labyrinth=offline_labyrinths()[MAZE], max_steps=30)
    local.reset(seed=0)
    replayed = [local.step_name(name)[0]["text"] for name in mine]
    assert replayed[-1] == obs["text"]
