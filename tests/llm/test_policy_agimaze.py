"""The AGI Maze LLM policy: full episodes, the history policies, the sliding window, the
labyrinth set, bad actions, fallbacks and outages, with scripted models (no network)."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import gymnasium as gym
import pytest

import maze_envs  # noqa: F401  (registers the environments)
from llm_policies.backends.base import ModelRequest
from llm_policies.policy import AgiMazeLLMPolicy
from maze_envs.agimaze.planner import solve
from maze_envs.agimaze.set_env import SOLVED_MESSAGE
from tests.llm.harness_support import FakeBackend, Raw, last_user, outage, play_agimaze

TUTORIAL = "TUTORIAL/STAGE-01/0000.json"


def _plan(path: str) -> list[str]:
    env = gym.make("maze_envs/AgiMaze-v0", path=path)
    env.reset(seed=0)
    plan = solve(env.unwrapped.backend.labyrinth)
    assert plan is not None
    return plan


def _planned(plan: list[str], extra: dict[str, Any] | None = None) -> Any:
    steps = iter(plan)

    def reply(request: ModelRequest) -> dict[str, Any]:
        if "waiting for the start action" in last_user(request):
            return {"action": "start", **(extra or {})}
        return {"action": next(steps), **(extra or {})}

    return reply


@pytest.mark.parametrize("mode", ["tool", "native", "prompted"])
def test_a_full_episode_is_solved_in_the_planned_steps(mode: str) -> None:
    plan = _plan(TUTORIAL)
    env = gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)
    backend = FakeBackend(_planned(plan))
    policy = AgiMazeLLMPolicy(backend, output_mode=mode)
    decisions, info = asyncio.run(play_agimaze(env, policy, seed=0))
    assert info["solved"] and info["steps"] == len(plan) and info["rhae"] == 1.0
    assert [d.action for d in decisions] == plan
    assert all(d.status == "ok" for d in decisions)
    requests = backend.requests
    assert len({r.system for r in requests}) == 1
    # no window: every request starts with the previous request's messages (cache friendly)
    for before, after in itertools.pairwise(requests):
        assert after.messages[: len(before.messages) - 1] == before.messages[:-1]
        assert len(after.messages) == len(before.messages) + 2
    first = requests[0]
    lab = env.unwrapped.backend.labyrinth  # the bundle's own board, start and budget
    assert f"Board: {lab.rows} rows by {lab.cols} columns." in first.system
    assert f"You start at (row, col) = ({lab.start[0]}, {lab.start[1]})." in first.system
    assert "Coordinates: a position is (row, col)" in first.system
    budget = info["budget"]
    assert last_user(first).startswith(f"Step 0 of {budget}.\nResult: Game has started.")


def test_observations_history_keeps_bare_actions() -> None:
    plan = _plan(TUTORIAL)
    backend = FakeBackend(_planned(plan))
    policy = AgiMazeLLMPolicy(backend, history="observations")
    asyncio.run(play_agimaze(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL), policy, seed=0))
    last = backend.requests[-1]
    assistants = [m.content for m in last.messages if m.role == "assistant"]
    assert assistants == [json.dumps({"action": a}) for a in plan[:-1]]
    assert list(last.schema["properties"]) == ["action"]


def test_planning_history_keeps_each_plan_beside_its_action() -> None:
    plan = _plan(TUTORIAL)
    backend = FakeBackend(_planned(plan, {"plan": "get the key first"}))
    policy = AgiMazeLLMPolicy(backend, history="planning", order="check_first")
    asyncio.run(play_agimaze(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL), policy, seed=0))
    last = backend.requests[-1]
    assert list(last.schema["properties"]) == ["plan", "action"]
    assistants = [m.content for m in last.messages if m.role == "assistant"]
    assert assistants[0] == json.dumps({"plan": "get the key first", "action": plan[0]})
    assert "With every action, write plan" in last.system


def test_world_model_history_is_clean_and_the_state_comes_last() -> None:
    plan = _plan(TUTORIAL)
    counter = iter(range(100))

    def reply(request: ModelRequest) -> dict[str, Any]:
        n = next(counter)
        return {"state": f"description {n}", "action": plan[n]}

    backend = FakeBackend(reply)
    policy = AgiMazeLLMPolicy(backend, history="world_model")
    asyncio.run(play_agimaze(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL), policy, seed=0))
    first, last = backend.requests[0], backend.requests[-1]
    assert last_user(first).endswith(
        "Your state description from the previous step:\n(none yet: this is your first step)"
    )
    n = len(backend.requests) - 1
    assert last_user(last).endswith(
        f"Your state description from the previous step:\ndescription {n - 1}"
    )
    assistants = [m.content for m in last.messages if m.role == "assistant"]
    assert assistants == [json.dumps({"action": a}) for a in plan[:n]]  # no state kept
    # only the newest description appears anywhere in the prompt
    assert sum("description " in m.content for m in last.messages) == 1


def test_a_sliding_window_bounds_the_history() -> None:
    plan = _plan(TUTORIAL)
    backend = FakeBackend(_planned(plan))
    policy = AgiMazeLLMPolicy(backend, window=2)
    asyncio.run(play_agimaze(gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL), policy, seed=0))
    assert max(len(r.messages) for r in backend.requests) == 5
    last = backend.requests[-1]
    dropped = len(plan) - 1 - 2
    assert last.messages[0].content.startswith(f"({dropped} earlier steps are no longer shown.)")
    assert "history: observations, last 2 steps shown." in last.system


def test_an_action_the_labyrinth_lacks_is_answered_with_the_env_rejection() -> None:
    plan = _plan(TUTORIAL)
    backend = FakeBackend([{"action": "jump"}, {"action": plan[0]}])
    env = gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)
    policy = AgiMazeLLMPolicy(backend, output_mode="native")
    decisions, _ = asyncio.run(play_agimaze(env, policy, seed=0, max_decisions=1))
    assert decisions[0].status == "ok" and decisions[0].action == plan[0]
    retry = backend.requests[1].messages[-1].content
    assert "action: Input should be 'up', 'down', 'left' or 'right'" in retry


def test_unusable_replies_fall_back_and_use_a_step_in_a_single_labyrinth() -> None:
    backend = FakeBackend(lambda r: Raw(text="hmm"))
    env = gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)
    policy = AgiMazeLLMPolicy(backend, output_mode="prompted", parse_retries=1)
    decisions, info = asyncio.run(play_agimaze(env, policy, seed=0, max_decisions=3))
    assert [d.status for d in decisions] == ["fallback"] * 3
    assert [d.action for d in decisions] == ["up"] * 3  # the labyrinth's first action
    assert decisions[0].record["fallback_action"] == "up"
    assert decisions[0].record["error"] == "the reply holds no JSON object"
    assert info["steps"] == 3 and len(backend.requests) == 6


def test_an_outage_is_recorded_and_repeated_ones_stop_the_episode() -> None:
    backend = FakeBackend(lambda r: outage())
    env = gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)
    policy = AgiMazeLLMPolicy(backend, max_consecutive_fallbacks=4)
    decisions, _ = asyncio.run(play_agimaze(env, policy, seed=0))
    assert len(decisions) == 4 and all(d.status == "outage" for d in decisions)
    assert decisions[-1].stop == "model unavailable in 4 decisions in a row: HTTP 503 five times"


def test_the_labyrinth_set_passes_start_and_messages_through() -> None:
    paths = ["TUTORIAL/STAGE-01/0000.json", "TUTORIAL/STAGE-02/0000.json"]
    plans = [p for path in paths for p in _plan(path)]
    env = gym.make("maze_envs/AgiMazeSet-v0", paths=paths)
    backend = FakeBackend(_planned(plans))
    policy = AgiMazeLLMPolicy(backend, history="observations")
    decisions, info = asyncio.run(play_agimaze(env, policy, seed=0))
    actions = [d.action for d in decisions]
    assert actions.count("start") == 2
    assert [r["solved"] for r in info["results"]] == [True, True]
    # the transition message after the first labyrinth reached the model
    assert any(last_user(r).startswith(f"Message: {SOLVED_MESSAGE}") for r in backend.requests)
    assert backend.requests[0].schema["properties"]["action"]["enum"][0] == "start"
    assert policy.harness()["history"] == "observations"


def test_in_a_set_a_fallback_is_an_action_the_env_does_not_play() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0", paths=[TUTORIAL])
    backend = FakeBackend([{"action": "start"}] + [Raw(text="???")] * 10)
    policy = AgiMazeLLMPolicy(backend, parse_retries=0, max_consecutive_fallbacks=3)
    decisions, info = asyncio.run(play_agimaze(env, policy, seed=0))
    assert [d.action for d in decisions] == ["start", "start", "start", "start"]
    assert [d.status for d in decisions] == ["ok", "fallback", "fallback", "fallback"]
    assert info.get("steps", 0) == 0  # no budget used by the fallbacks
    assert decisions[-1].stop is not None and "no usable reply" in decisions[-1].stop


def test_harness_report_for_agimaze() -> None:
    policy = AgiMazeLLMPolicy(FakeBackend([]), history="world_model", window=10, check="optional")
    harness = policy.harness()
    assert harness["env"] == "agimaze" and harness["history"] == "world_model"
    assert harness["window"] == 10 and harness["prompt_version"] == "v1"
    assert harness["wording"] == "agimaze-v1" and harness["check"] == "optional"
    with pytest.raises(
        ValueError, match="Input should be 'observations', 'planning' or 'world_model'"
    ):
        AgiMazeLLMPolicy(FakeBackend([]), history="memory")


@pytest.mark.parametrize("memory", [True, False])
def test_set_memory_keeps_the_conversation_across_labyrinths(memory: bool) -> None:
    paths = ["TUTORIAL/STAGE-01/0000.json", "TUTORIAL/STAGE-02/0000.json"]
    first, second = _plan(paths[0]), _plan(paths[1])
    env = gym.make("maze_envs/AgiMazeSet-v0", paths=paths)
    backend = FakeBackend(_planned(first + second))
    policy = AgiMazeLLMPolicy(backend, set_memory=memory)
    asyncio.run(play_agimaze(env, policy, seed=0))
    last = backend.requests[-1]
    # the first labyrinth's ending is still in view with memory, and gone without
    assert any(SOLVED_MESSAGE in m.content for m in last.messages) is memory
    shown = [m for m in last.messages if m.role == "assistant"]
    # without memory: only the second labyrinth's moves before the last one
    assert len(shown) == (len(first) + 1 + len(second) - 1 if memory else len(second) - 1)
    assert "Board: 3 rows by 3 columns." not in last.system  # the new labyrinth's description
