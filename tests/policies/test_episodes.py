"""Episode builders and the typed AGI Maze observation."""

from __future__ import annotations

import math
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pydantic
import pytest

from maze_envs.agimaze.mapfmt import render_map
from maze_envs.agimaze.model_text import API_DESCRIPTION
from maze_envs.agimaze.observation import AgiMazeObservation, decode_formal
from maze_envs.agimaze.set_env import INITIAL_MESSAGE, SET_DESCRIPTION
from maze_envs.policies import agimaze_episode, escape_episode
from tests.policies.loops import ESCAPE_VERSIONS, escape_env


@pytest.mark.parametrize("version", ESCAPE_VERSIONS)
def test_escape_episode_tells_the_rules_and_only_privileged_policies_the_board(
    version: int,
) -> None:
    env = escape_env(version, preset="navigator", width=9, height=7)
    env.reset(seed=4)
    plain = escape_episode(env, "B")
    assert plain.env_id == f"maze_envs/MazeEscape-v{version}"
    assert (plain.agent, plain.agents, plain.config) == ("B", ("A", "B", "C"), env.config)
    assert plain.ground_truth is None
    truth = escape_episode(env, "B", privileged=True).ground_truth
    assert truth is not None
    layout, facts = env.layout, env.ground_truth()
    assert (truth.width, truth.height) == (9, 7)
    assert truth.walls == tuple(int(~m & 15) for m in layout.maze.ravel())
    assert truth.exit_cell == layout.exit_cell[0] * 9 + layout.exit_cell[1]
    assert truth.starts == tuple(r * 9 + c for r, c in layout.starts)
    assert truth.landmarks == {r * 9 + c: name for (r, c), name in layout.landmarks}
    assert truth.shortest_path_to_exit == facts["shortest_path_to_exit"]
    assert truth.fastest_possible_finish == facts["fastest_possible_finish"]
    with pytest.raises(ValueError, match=r"unknown agent 'D'"):
        escape_episode(env, "D")


def test_escape_episode_needs_a_started_game() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        escape_episode(escape_env(), "A", privileged=True)


def test_agimaze_episode_of_a_hidden_labyrinth() -> None:
    path = "TRAINING/S2-pits/STAGE-05/0000.json"
    env = gym.make("maze_envs/AgiMaze-v0", path=path, budget_factor=2.5)
    _, info = env.reset(seed=0)
    lab = env.unwrapped.backend.labyrinth
    episode = agimaze_episode(env, info)
    assert episode.env_id == "maze_envs/AgiMaze-v0" and episode.agent == "player"
    assert episode.description == API_DESCRIPTION
    assert episode.max_steps == 200 and episode.budget == math.floor(2.5 * 200)
    assert episode.task == {
        "name": path,
        "board": {"rows": 4, "cols": 5},
        "start": list(lab.start),
        "keys": 1,
        "exit_key": True,
        "rivers": 0,
        "pit_cycles": 1,
        "pits_per_cycle": [3],
        "max_steps": 200,
        "budget": 500,
    }
    assert episode.action_names == ("up", "down", "left", "right")
    assert not episode.open_map
    assert episode.public_map == render_map(lab, reveal=False)
    assert episode.ground_truth is None
    assert agimaze_episode(env, info, privileged=True).ground_truth == lab


def test_agimaze_episode_of_an_open_map_shows_the_map_the_player_sees() -> None:
    env = gym.make("maze_envs/AgiMaze-v0", path="TUTORIAL/STAGE-07/0001.json")
    obs, info = env.reset(seed=0)
    episode = agimaze_episode(env, info)
    assert episode.open_map and episode.public_map == obs["map"]


def test_agimaze_episode_from_the_public_map_alone() -> None:
    """Without the labyrinth (an HTTP backend) board and start come from the public map."""
    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-03/0004.json")
    _, info = env.reset(seed=0)
    lab = env.unwrapped.backend.labyrinth
    remote = SimpleNamespace(
        backend=SimpleNamespace(render=lambda: render_map(lab, reveal=False), open_map=False),
        action_names=["up", "down", "left", "right"],
        budget_factor=5.0,
    )
    episode = agimaze_episode(remote, info)
    assert episode.task["board"] == {"rows": 4, "cols": 4}
    assert episode.task["start"] == list(lab.start)
    assert "rivers" not in episode.task
    with pytest.raises(ValueError, match="privileged"):
        agimaze_episode(remote, info, privileged=True)


def test_agimaze_set_episodes_before_and_after_start() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0")
    _, info = env.reset(seed=0)
    waiting = agimaze_episode(env, info)
    assert waiting.env_id == "maze_envs/AgiMazeSet-v0"
    assert waiting.description == f"{SET_DESCRIPTION}\n\n{API_DESCRIPTION}"
    assert waiting.action_names == ("start",) and waiting.task["max_steps"] == 0
    _, _, _, _, info = env.unwrapped.step_name("start")
    first = agimaze_episode(env, info, privileged=True)
    assert first.name == "TUTORIAL/STAGE-01/0000.json"
    assert first.action_names == ("start", "up", "down", "left", "right")
    assert first.open_map and first.ground_truth == env.unwrapped.labyrinth
    assert first.extra == {"index": 0, "count": 8}


def test_typed_observation_of_a_game() -> None:
    env = gym.make("maze_envs/AgiMaze-v0", path="TUTORIAL/STAGE-02/0000.json")
    obs, info = env.reset(seed=0)
    start = AgiMazeObservation.from_env(obs, info, env=env)
    assert (start.text, start.step, start.last_action, start.error) == (
        "Game has started.",
        0,
        None,
        None,
    )
    assert start.formal == info["formal"] and start.inventory == {}
    assert start.map == obs["map"] and start.budget == 5 * info["max_steps"]
    assert start.message is None and not start.waiting
    lab = env.unwrapped.backend.labyrinth
    from maze_envs.agimaze.planner import solve

    plan = solve(lab)
    assert plan is not None
    held: list[dict[str, bool | int]] = []
    for action in plan:
        obs, _, _, _, info = env.unwrapped.step_name(action)
        typed = AgiMazeObservation.from_env(obs, info, last_action=action, env=env)
        held.append(typed.inventory)
        assert typed.formal == info["formal"] and typed.last_action == action
    assert typed.step == len(plan) and held[-1] == {"key": True, "treasure": True}
    assert typed.budget == info["budget"]
    with pytest.raises(pydantic.ValidationError):
        typed.text = "changed"  # type: ignore[misc]


def test_typed_observation_of_the_labyrinth_set() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0")
    obs, info = env.reset(seed=0)
    waiting = AgiMazeObservation.from_env(obs, info, env=env)
    assert waiting.waiting and waiting.message == INITIAL_MESSAGE
    assert (waiting.step, waiting.max_steps, waiting.budget) == (0, 0, 0)
    obs, _, _, _, info = env.unwrapped.step_name("start")
    started = AgiMazeObservation.from_env(obs, info, last_action="start", env=env)
    assert not started.waiting and started.text == "Game has started." and started.message == ""
    obs, _, _, _, info = env.unwrapped.step_name("right")
    moved = AgiMazeObservation.from_env(obs, info, last_action="right", env=env)
    assert moved.formal == info["formal"] and "details" in moved.formal
    assert moved.step == 1 and moved.budget == 5 * info["max_steps"]


def test_formal_is_decoded_when_info_lacks_it() -> None:
    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0005.json")
    env.reset(seed=0)
    obs, _, _, _, info = env.unwrapped.step_name("up")
    slim = {k: v for k, v in info.items() if k != "formal"}
    typed = AgiMazeObservation.from_env(obs, slim)
    assert typed.formal == {**info["formal"], "details": {}}
    assert decode_formal({"status": 0, "observe": 0, "events": np.zeros(22, np.int8)}, {}) == {
        "status": "success",
        "observe": "empty",
        "events": [],
        "inventory": {},
        "details": {},
    }
