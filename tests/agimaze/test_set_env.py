"""AgiMazeSet-v0: start gating, exact transition messages, budgets, results."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.bundle import save_bundle
from maze_envs.agimaze.set_env import (
    DEFAULT_TARGET,
    FAILED_FINAL_MESSAGE,
    FAILED_MESSAGE,
    INITIAL_MESSAGE,
    SET_DESCRIPTION,
    SOLVED_FINAL_MESSAGE,
    SOLVED_MESSAGE,
    TUTORIAL_PATHS,
    AgiMazeSetEnv,
)
from maze_envs.agimaze.types import Bundle
from tests.agimaze.test_env import corridor, generated, needs_packs


def test_transition_messages_are_exact() -> None:
    # The EnvTraverse labyrinth-set texts, character for character.
    start = 'by sending the {"id":"start"} action. Available actions: {"id":"start"}'
    five = (
        "You have used five times as many actions as an average human typically needs to solve it."
    )
    messages = {
        "initial": INITIAL_MESSAGE,
        "solved": SOLVED_MESSAGE,
        "failed": FAILED_MESSAGE,
        "solved_final": SOLVED_FINAL_MESSAGE,
        "failed_final": FAILED_FINAL_MESSAGE,
    }
    assert messages == {
        "initial": f"Please start the first labyrinth {start}",
        "solved": f"You have solved the labyrinth. Please start the next labyrinth {start}",
        "failed": "You did not solve the labyrinth before reaching the maximum allowed number of "
        f"actions. {five} Consider what went wrong and what mistakes you made. Please start the "
        f"next labyrinth {start}",
        "solved_final": "You have solved the final labyrinth. The labyrinth set is complete.",
        "failed_final": "You did not solve the final labyrinth before reaching the maximum allowed "
        f"number of actions. {five} The labyrinth set is complete.",
    }


def three_corridors() -> AgiMazeSetEnv:
    return AgiMazeSetEnv(labyrinths=[corridor(), corridor(open_map=True), corridor()])


def test_waits_for_start_before_each_labyrinth() -> None:
    env = three_corridors()
    obs, info = env.reset(seed=0)
    assert env.action_names == ["start", "up", "down", "left", "right"]
    assert obs["message"] == INITIAL_MESSAGE and obs["waiting"] == 1 and obs["text"] == ""
    assert info == {
        "index": 0,
        "count": 3,
        "waiting": True,
        "results": [],
        "description": SET_DESCRIPTION,
    }
    assert "tutorials" in SET_DESCRIPTION and "hidden" in SET_DESCRIPTION
    obs, reward, terminated, _, info = env.step_name("right")
    assert obs["message"].startswith('The action {"id":"right"} is not available now.')
    assert obs["message"].endswith(INITIAL_MESSAGE.removeprefix("Please start the first labyrinth"))
    assert obs["waiting"] == 1 and not terminated and reward == 0.0
    obs, *_, info = env.step_name("start")
    assert obs["text"] == "Game has started." and obs["waiting"] == 0 and obs["message"] == ""
    assert info["steps"] == 0 and info["max_steps"] == 4
    obs, *_ = env.step_name("start")  # not valid during a labyrinth
    assert obs["message"] == (
        'The action {"id":"start"} is not available in this labyrinth. Available actions: '
        '{"id": "up"}, {"id": "down"}, {"id": "left"}, {"id": "right"}'
    )
    assert obs["text"] == "Game has started."


def test_solve_fail_and_continue_with_per_labyrinth_results() -> None:
    env = three_corridors()
    env.reset(seed=0)
    space = env.observation_space
    # labyrinth 0: solved in 3
    env.step_name("start")
    for _ in range(2):
        obs, reward, terminated, _, info = env.step_name("right")
        assert space.contains(obs)
    obs, reward, terminated, truncated, info = env.step_name("right")
    assert obs["message"] == SOLVED_MESSAGE and reward == 1.0 and not terminated
    assert obs["waiting"] == 1 and obs["labyrinth"] == 1 and space.contains(obs)
    # labyrinth 1 (open map): the budget of 5 x 4 runs out
    obs, *_ = env.step_name("start")
    assert obs["map"].startswith("+---+") and "S" in obs["map"]
    for _ in range(19):
        obs, reward, terminated, truncated, info = env.step_name("left")
        assert obs["message"] == "" and not terminated
    obs, reward, terminated, truncated, info = env.step_name("left")
    assert obs["message"] == FAILED_MESSAGE and not terminated and not truncated
    # labyrinth 2 still runs after the failure
    env.step_name("start")
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step_name("right")
    assert obs["message"] == SOLVED_FINAL_MESSAGE and terminated and not truncated
    assert [(r["solved"], r["steps"], r["budget"]) for r in info["results"]] == [
        (True, 3, 20),
        (False, 20, 20),
        (True, 3, 20),
    ]
    # RHAE70 of 3 steps on a budget of 4: (0.7 * 4 / 3) ** 2 = 0.871...; a failure scores 0
    assert [r["rhae"] for r in info["results"]] == [
        pytest.approx((0.7 * 4 / 3) ** 2),
        0.0,
        pytest.approx((0.7 * 4 / 3) ** 2),
    ]
    with pytest.raises(RuntimeError, match="complete"):
        env.step_name("start")


def test_final_failure_message_and_budget_factor() -> None:
    env = AgiMazeSetEnv(labyrinths=[corridor(max_steps=2)], budget_factor=2)
    env.reset(seed=0)
    env.step_name("start")
    for _ in range(3):
        obs, _, terminated, _, _ = env.step_name("up")
        assert not terminated
    obs, _, terminated, _, info = env.step_name("up")
    assert terminated and info["results"][0]["budget"] == 4
    # the fixed text says "five times"; with another factor it states the real one
    assert obs["message"] == FAILED_FINAL_MESSAGE.replace("five times", "2 times")
    env5 = AgiMazeSetEnv(labyrinths=[corridor(max_steps=1)])
    env5.reset(seed=0)
    env5.step_name("start")
    for _ in range(5):
        obs, _, terminated, _, _ = env5.step_name("up")
    assert terminated and obs["message"] == FAILED_FINAL_MESSAGE


def test_actions_missing_from_a_labyrinth_are_messages() -> None:
    env = AgiMazeSetEnv(
        labyrinths=[corridor(), generated(3, rows=4, cols=4, flashlight=True, exit_key=False)]
    )
    env.reset(seed=0)
    assert "look_up" in env.action_names
    env.step_name("start")
    obs, *_, info = env.step_name("look_up")
    assert "not available in this labyrinth" in obs["message"] and info == {
        "index": 0,
        "count": 2,
        "waiting": False,
        "results": [],
    }
    obs, *_, info = env.step_name("right")
    assert info["steps"] == 1  # the rejected action used no budget


def test_check_env_and_random_play_stay_in_the_spaces() -> None:
    labs = [corridor(max_steps=3), generated(2), corridor(open_map=True)]
    env = gym.make("maze_envs/AgiMazeSet-v0", labyrinths=labs, render_mode="ansi").unwrapped
    check_env(env)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    for _ in range(3000):
        obs, _, terminated, _, info = env.step(int(rng.integers(env.action_space.n)))
        assert env.observation_space.contains(obs)
        if terminated:
            assert len(info["results"]) == 3
            obs, _ = env.reset()


def test_validation() -> None:
    with pytest.raises(ValueError, match="not both"):
        AgiMazeSetEnv(paths=["a"], labyrinths=[corridor()])
    with pytest.raises(ValueError, match="at least one"):
        AgiMazeSetEnv(labyrinths=[])
    with pytest.raises(ValueError, match="unknown action"):
        three_corridors().step_name("jump")
    with pytest.raises(ValueError, match="list of pack paths"):
        AgiMazeSetEnv(paths="TUTORIAL/STAGE-01/0000.json")
    with pytest.raises(ValueError, match="budget_factor"):
        AgiMazeSetEnv(labyrinths=[corridor()], budget_factor=float("nan"))
    env = three_corridors()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside Discrete"):
        env.step(0.5)  # type: ignore[arg-type]
    assert env.labyrinth_paths == [None, None, None]


def test_the_running_labyrinth_is_exposed_read_only() -> None:
    labs = [corridor(), generated(2)]
    env = AgiMazeSetEnv(labyrinths=labs)
    assert env.labyrinth is None  # before reset
    env.reset(seed=0)
    assert env.labyrinth is None  # waiting for start
    env.step_name("start")
    assert env.labyrinth == labs[0]
    for _ in range(3):
        env.step_name("right")
    assert env.labyrinth is None  # solved: waiting for the next start
    env.step_name("start")
    assert env.labyrinth == labs[1]


def test_paths_under_a_pack_root(tmp_path: Path) -> None:
    for name in ("0000.json", "0001.json"):
        save_bundle(Bundle(labyrinth=corridor()), tmp_path / "MINE" / name)
    paths = ["MINE/0000.json", "MINE/0001.json"]
    env = AgiMazeSetEnv(paths=paths, pack_root=tmp_path)
    env.reset(seed=0)
    for _ in range(2):
        env.step_name("start")
        for _ in range(3):
            _, _, terminated, _, info = env.step_name("right")
    assert terminated and [r["name"] for r in info["results"]] == paths
    assert all(r["solved"] for r in info["results"])


@needs_packs
def test_default_set_is_seven_tutorials_then_a_target() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0")
    obs, info = env.reset(seed=0)
    assert info["count"] == 8 and obs["message"] == INITIAL_MESSAGE
    assert env.unwrapped.labyrinth_paths == [*TUTORIAL_PATHS, DEFAULT_TARGET]
    obs, _, _, _, info = env.unwrapped.step_name("start")
    assert info["name"] == TUTORIAL_PATHS[0]
    assert obs["map"] != ""  # tutorials show the open map
    check_env(env.unwrapped)
