"""SuperSuit vectorises Maze Escape v1 with the numeric and move-only wrappers, unmodified.

Maze Escape keeps every agent in ``env.agents`` until the game ends (an agent that has visited
the exit stays in play and may keep moving), so SuperSuit's requirement that agents never die
mid-episode holds without ``black_death``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from wrappers.escape_numeric import EscapeNumericObservation
from wrappers.move_only import MoveOnlyActions


@pytest.fixture(scope="module")
def ss() -> Any:
    """The supersuit module (a module global would trip the doctest collector: supersuit's
    ``__getattr__`` raises ImportError for unknown names)."""
    return pytest.importorskip("supersuit", reason="needs pip install 'maze-envs[rl]'")


SIZE = {"width": 5, "height": 5, "max_turns": 25}


def numeric_env(flatten: bool = True, **overrides: Any) -> Any:
    return MoveOnlyActions(
        EscapeNumericObservation(
            maze_escape_v1.parallel_env(preset="full", **{**SIZE, **overrides}), flatten=flatten
        )
    )


def test_agents_stay_until_the_game_ends() -> None:
    env = numeric_env()
    env.reset(seed=0)
    visited_early = False
    rng = np.random.default_rng(0)
    while env.agents:
        assert env.agents == env.possible_agents
        _, _, terms, truncs, infos = env.step({a: int(rng.integers(5)) for a in env.agents})
        done = any(terms.values()) or any(truncs.values())
        visited_early |= not done and any(i["visited_exit"] for i in infos.values())
        assert set(terms) == set(env.possible_agents)
    assert visited_early, "some agent should have found the exit before the end"


def test_markov_vector_env_steps_with_the_parallel_values(ss: Any) -> None:
    vec = ss.pettingzoo_env_to_vec_env_v1(numeric_env())
    reference = numeric_env()
    assert vec.num_envs == 3
    observations, _ = vec.reset(seed=4)
    expected, _ = reference.reset(seed=4)
    assert observations.shape == (3, *reference.observation_space("A").shape)
    assert np.array_equal(observations, np.stack([expected[a] for a in "ABC"]))
    rng = np.random.default_rng(1)
    resets = 0
    for _ in range(60):
        codes = rng.integers(0, 5, size=3)
        observations, rewards, terms, truncs, infos = vec.step(codes)
        expected, ref_rewards, ref_terms, ref_truncs, _ = reference.step(
            {a: int(c) for a, c in zip("ABC", codes, strict=True)}
        )
        assert rewards.tolist() == [ref_rewards[a] for a in "ABC"]
        assert terms.tolist() == [ref_terms[a] for a in "ABC"]
        assert truncs.tolist() == [ref_truncs[a] for a in "ABC"]
        if not reference.agents:  # the vector env has reset itself: do the same
            resets += 1
            assert np.array_equal(infos[0]["terminal_observation"], expected["A"])
            expected, _ = reference.reset()
        assert np.array_equal(observations, np.stack([expected[a] for a in "ABC"]))
        assert vec.observation_space.contains(observations[0])
    assert resets >= 2


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
def test_concat_vec_envs(ss: Any, base_class: str) -> None:
    vec = ss.concat_vec_envs_v1(
        ss.pettingzoo_env_to_vec_env_v1(numeric_env()), 2, num_cpus=0, base_class=base_class
    )
    assert vec.num_envs == 6
    if base_class == "gymnasium":
        observations, _ = vec.reset(seed=7)
    else:
        # SuperSuit's SB3 wrapper cannot seed (ConcatVecEnv has no seed()): seed the games
        # through the vector env it wraps; its own reset then continues from those seeds.
        with pytest.raises(AttributeError):
            vec.seed(7)
        vec.venv.reset(seed=7)
        observations = vec.reset()
    assert observations.shape[0] == 6
    space = numeric_env().observation_space("A")
    total = np.zeros(6)
    for _ in range(80):
        actions = np.full(6, 4)  # STAY: nobody moves, the game runs out of turns
        if base_class == "gymnasium":
            observations, rewards, terms, truncs, _ = vec.step(actions)
            dones = terms | truncs
        else:
            observations, rewards, dones, _ = vec.step(actions)
        total += rewards
        assert all(space.contains(row) for row in observations)
        # turns_left of every agent of a copy is the same (they share one game)
        left = observations[:, numeric_env().feature_names().index("time[1]")]
        assert np.allclose(left[:3], left[0]) and np.allclose(left[3:], left[3])
    assert dones.dtype == bool or dones.dtype == np.uint8
    assert not total.any()  # staying put never reaches the exit (starts are off the exit)


def test_dict_numeric_observations_vectorise_too(ss: Any) -> None:
    vec = ss.pettingzoo_env_to_vec_env_v1(numeric_env(flatten=False))
    observations, _ = vec.reset(seed=2)
    assert observations["edges"].shape == (3, 12)
    assert observations["time"][:, 0].tolist() == [0.0, 0.0, 0.0]
    observations, *_ = vec.step(np.array([4, 4, 4]))
    assert np.allclose(observations["time"][:, 0], 1 / SIZE["max_turns"])


def test_v0_spaces_differ_and_are_refused(ss: Any) -> None:
    with pytest.raises(AssertionError, match="observation spaces not consistent"):
        ss.pettingzoo_env_to_vec_env_v1(maze_escape_v0.parallel_env(**SIZE))
    with pytest.raises(ValueError, match="maze_escape_v1"):
        EscapeNumericObservation(maze_escape_v0.parallel_env(**SIZE))
