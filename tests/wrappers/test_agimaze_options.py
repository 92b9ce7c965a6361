"""MapVisibility / HiddenMap and RewardShaping on AgiMaze-v0 and AgiMazeSet-v0."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.policies import agimaze_episode, make_policy
from tests.agimaze.test_env import corridor
from wrappers.agimaze_numeric import AgiMazeNumericObservation
from wrappers.agimaze_options import (
    BUMP_EVENTS,
    ITEM_EVENTS,
    HiddenMap,
    MapVisibility,
    RewardShaping,
)

TUTORIAL = "TUTORIAL/STAGE-07/0000.json"
HIDDEN = "TRAINING/S0-keys/STAGE-01/0005.json"


def n_actions(env: Any) -> int:
    return int(env.action_space.n)


def unwrapped(env: Any) -> Any:
    return env.unwrapped


def agimaze(path: str = TUTORIAL, **kwargs: Any) -> gym.Env:
    return gym.make("maze_envs/AgiMaze-v0", path=path, **kwargs)


def run_to_end(env: gym.Env, action: int = 0) -> tuple[int, dict[str, Any]]:
    env.reset(seed=0)
    count = 0
    while True:
        _, _, terminated, truncated, info = env.step(action)
        count += 1
        if terminated or truncated:
            return count, info


@pytest.mark.parametrize("factor", [0.5, 1.0, 2.5])
def test_the_budget_is_the_envs_budget_factor_times_max_steps(factor: float) -> None:
    """The one budget mechanism (there is no budget wrapper): the env's ``budget_factor``."""
    env = agimaze(budget_factor=factor)
    _, info = env.reset(seed=0)
    limit = math.floor(factor * info["max_steps"])
    count, info = run_to_end(env)
    assert count == limit == info["steps"] == info["budget"]
    assert info["rhae"] == 0.0


def test_the_oracle_solves_within_a_budget_of_two_max_steps() -> None:
    solved = agimaze(budget_factor=2.0)
    oracle = make_policy("oracle", env_kind="agimaze")
    obs, info = solved.reset(seed=0)
    oracle.reset("player", 0, agimaze_episode(solved, info, privileged=True))
    base = unwrapped(solved)
    terminated = truncated = False
    last = None
    while not (terminated or truncated):
        name = oracle.act(AgiMazeObservation.from_env(obs, info, env=solved))
        obs, _, terminated, truncated, info = solved.step(base.action_index(name))
        last = info
    assert last is not None and terminated and last["solved"]


def test_hidden_map_blanks_the_map_text_only() -> None:
    raw = agimaze()
    hidden = HiddenMap(agimaze())
    rng = np.random.default_rng(0)
    a, _ = raw.reset(seed=0)
    b, _ = hidden.reset(seed=0)
    for _ in range(30):
        assert b["map"] == "" and a["map"] != ""
        assert hidden.observation_space.contains(b)
        assert a["text"] == b["text"] and a["inventory"] == b["inventory"]
        action = int(rng.integers(4))
        a, *_ = raw.step(action)
        b, *_ = hidden.step(action)
    assert hidden.observation_space == raw.observation_space
    shown = MapVisibility(agimaze(), show=True)
    assert shown.reset(seed=0)[0]["map"] == raw.reset(seed=0)[0]["map"] != ""
    set_env = HiddenMap(gym.make("maze_envs/AgiMazeSet-v0"))
    set_env.reset(seed=0)
    obs, *_ = set_env.step(0)  # start the first tutorial: its map would show
    assert obs["map"] == "" and obs["text"] == "Game has started."


def test_map_visibility_refuses_to_show_a_hidden_map() -> None:
    with pytest.raises(ValueError, match="open map"):
        MapVisibility(agimaze(HIDDEN), show=True)
    assert "map" not in HiddenMap(agimaze(HIDDEN)).reset(seed=0)[0]  # nothing to hide
    with pytest.raises(ValueError, match="show must be"):
        MapVisibility(agimaze(), show="yes")  # type: ignore[arg-type]


def test_reward_shaping_terms_add_up_and_are_reported() -> None:
    terms = dict(
        step_penalty=0.01,
        bump_penalty=0.05,
        item_bonus=0.2,
        exploration_bonus=0.03,
        solve_bonus=0.5,
    )
    env = RewardShaping(agimaze("TRAINING/S0-keys/STAGE-01"), **terms)
    rng = np.random.default_rng(4)
    seen = {name: 0 for name in terms}
    for episode in range(6):
        env.reset(seed=episode)
        while True:
            _obs, reward, terminated, truncated, info = env.step(int(rng.integers(4)))
            got = info["reward_terms"]
            assert reward == pytest.approx(sum(got.values()))
            events = info["events"]
            assert got["step_penalty"] == -0.01
            assert got["bump_penalty"] == (-0.05 if set(events) & set(BUMP_EVENTS) else 0.0)
            assert got["item_bonus"] == pytest.approx(0.2 * len(set(events) & set(ITEM_EVENTS)))
            if got["exploration_bonus"]:
                assert "moved" in events
            assert got["env"] == (1.0 if terminated else 0.0)
            for name in terms:
                seen[name] += got[name] != 0
            if terminated or truncated:
                break
    assert all(
        seen[name] for name in ("step_penalty", "bump_penalty", "item_bonus", "exploration_bonus")
    ), seen


def test_exploration_bonus_pays_each_cell_once() -> None:
    env = RewardShaping(agimaze("TUTORIAL/STAGE-01/0000.json"), exploration_bonus=1.0)
    env.reset(seed=0)
    names = unwrapped(env).action_names
    bonuses = [env.step(names.index(a))[1] for a in ("left", "right", "left", "right", "up")]
    assert bonuses == [1.0, 0.0, 0.0, 0.0, 1.0]  # new, start, known, start, new


def test_the_envs_former_reward_shaping_is_an_item_bonus() -> None:
    """``reward_shaping=True`` of the env (0.1 for the key, the treasure, the exit key) is gone:
    the wrapper's ``item_bonus`` gives the same rewards on a labyrinth without extension items."""
    env = RewardShaping(AgiMazeEnv(labyrinth=corridor()), item_bonus=0.1)
    env.reset(seed=0)
    rewards = [env.step(unwrapped(env).action_index("right"))[1] for _ in range(3)]
    assert rewards == pytest.approx([0.1, 0.1, 1.0])
    with pytest.raises(TypeError, match="reward_shaping"):
        AgiMazeEnv(labyrinth=corridor(), reward_shaping=True)  # type: ignore[call-arg]


def test_default_shaping_is_the_identity_and_composes_with_the_numeric_wrapper() -> None:
    plain = agimaze()
    shaped = AgiMazeNumericObservation(RewardShaping(agimaze(budget_factor=1.0)), local_map=2)
    plain.reset(seed=0)
    _, info = shaped.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(60):
        action = int(rng.integers(4))
        _, r1, t1, _, _ = plain.step(action)
        obs, r2, t2, tr2, info = shaped.step(action)
        assert r1 == r2 and t1 == t2 and shaped.observation_space.contains(obs)
        assert obs["budget"][0] == pytest.approx(info["steps"] / info["max_steps"])  # factor 1
        if t1 or tr2:
            break


@pytest.mark.parametrize("wrapper", [HiddenMap, RewardShaping])
def test_wrappers_refuse_other_envs(wrapper: Any) -> None:
    with pytest.raises(ValueError, match="AGI Maze env"):
        wrapper(gym.make("CartPole-v1"))


def test_bad_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="step_penalty must be a finite number"):
        RewardShaping(agimaze(), step_penalty=float("nan"))
