"""Gymnasium vector envs on AGI Maze, raw (text) and numeric observations, checked by value.

Each sub-env of a ``SyncVectorEnv`` / ``AsyncVectorEnv`` (shared memory on and off) must deliver
exactly what a single env gives for the same seed and actions: every observation field (texts,
map, formal, inventory, numeric arrays and the local map), the rewards, the end flags and
``info["steps"]``, across episode ends (Gymnasium's next-step autoreset: the step after an end
resets the sub-env without a seed, which the single-env reference replays). The batches are
compared only after the whole run, so a batch that a later step overwrote would be caught.
The texts travel through :class:`maze_envs.agimaze.shared_text.SharedText`, since Gymnasium's own
``Text`` shared memory returns the first texts forever (see tests/agimaze/test_vector.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv

import maze_envs  # noqa: F401  (registers the environments)
from wrappers.agimaze_numeric import AgiMazeNumericObservation
from wrappers.agimaze_options import HiddenMap, RewardShaping

SEEDS = [3, 8, 21]
STEPS = 70


def n_actions(env: Any) -> int:
    return int(env.action_space.n)


def unwrapped(env: Any) -> Any:
    return env.unwrapped


def raw_tutorial(budget_factor: float = 0.5) -> gym.Env:
    return gym.make(
        "maze_envs/AgiMaze-v0", path="TUTORIAL/STAGE-07/0000.json", budget_factor=budget_factor
    )


def raw_pack() -> gym.Env:  # a directory: each reset draws a labyrinth from its seed
    return gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S1-rivers/STAGE-02", budget_factor=0.4)


def raw_set() -> gym.Env:  # a short set, so that set episodes end within the run
    paths = [f"TUTORIAL/STAGE-{i:02d}/0000.json" for i in (1, 4, 7)]
    return gym.make("maze_envs/AgiMazeSet-v0", paths=paths, budget_factor=0.3)


def numeric_dict() -> gym.Env:
    return AgiMazeNumericObservation(raw_pack(), local_map=2)


def numeric_flat() -> gym.Env:
    env = RewardShaping(raw_tutorial(budget_factor=0.4), step_penalty=0.01, item_bonus=0.1)
    return AgiMazeNumericObservation(env, local_map=3, flatten=True)


def numeric_set() -> gym.Env:
    return AgiMazeNumericObservation(HiddenMap(raw_set()), local_map=2)


ENVS = {
    "raw-tutorial": raw_tutorial,
    "raw-pack": raw_pack,
    "raw-set": raw_set,
    "numeric-dict": numeric_dict,
    "numeric-flat": numeric_flat,
    "numeric-set": numeric_set,
}
VECTORS: dict[str, Callable[[list[Callable[[], gym.Env]]], VectorEnv]] = {
    "sync": SyncVectorEnv,
    "async-shared": lambda fns: AsyncVectorEnv(fns, shared_memory=True),
    "async-pipes": lambda fns: AsyncVectorEnv(fns, shared_memory=False),
}


def plans(n_actions: int) -> list[list[int]]:
    rng = np.random.default_rng(5)
    return [[int(a) for a in rng.integers(n_actions, size=STEPS)] for _ in SEEDS]


def single(make: Callable[[], gym.Env], seed: int, plan: list[int]) -> list[tuple]:
    """(obs, reward, terminated, truncated, steps) per step, autoreset replayed."""
    env = make()
    obs, info = env.reset(seed=seed)
    frames = [(obs, 0.0, False, False, info.get("steps"))]
    done = False
    for action in plan:
        if done:  # next-step autoreset: the action is ignored, the env resets unseeded
            obs, info = env.reset()
            frames.append((obs, 0.0, False, False, info.get("steps")))
            done = False
            continue
        obs, reward, terminated, truncated, info = env.step(action)
        frames.append((obs, float(reward), terminated, truncated, info.get("steps")))
        done = terminated or truncated
    env.close()
    return frames


def leaf_equal(batched: Any, i: int, value: Any, where: str) -> int:
    """Assert sub-env ``i`` of a batched value equals ``value``; count the leaves compared."""
    if isinstance(value, dict):
        return sum(leaf_equal(batched[k], i, v, f"{where}.{k}") for k, v in value.items())
    if isinstance(value, str):
        assert str(batched[i]) == value, where
        return 1
    np.testing.assert_array_equal(np.asarray(batched[i]), np.asarray(value), err_msg=where)
    return 1


@pytest.mark.parametrize("vector", VECTORS, ids=list(VECTORS))
@pytest.mark.parametrize("name", ENVS, ids=list(ENVS))
def test_vector_env_gives_each_sub_env_what_a_single_env_gives(name: str, vector: str) -> None:
    make = ENVS[name]
    probe = make()
    count = n_actions(probe)
    probe.close()
    actions = plans(count)
    if name.endswith("set"):  # start every labyrinth of the set promptly
        for plan in actions:
            plan[::4] = [0] * len(plan[::4])
    references = [single(make, s, p) for s, p in zip(SEEDS, actions, strict=True)]
    vec = VECTORS[vector]([make] * len(SEEDS))
    obs, info = vec.reset(seed=cast(Any, SEEDS))  # Gymnasium takes a list too
    batches = [(obs, np.zeros(len(SEEDS)), [False] * 3, [False] * 3, info)]
    for t in range(STEPS):
        obs, rewards, terminated, truncated, info = vec.step(np.array([p[t] for p in actions]))
        assert vec.observation_space.contains(obs)
        batches.append((obs, rewards, terminated, truncated, info))
    vec.close()
    compared = ends = 0
    for t, (obs, rewards, terminated, truncated, info) in enumerate(batches):
        for i, ref in enumerate(references):
            want_obs, want_reward, want_term, want_trunc, want_steps = ref[t]
            compared += leaf_equal(obs, i, want_obs, f"t={t} env={i} obs")
            assert rewards[i] == pytest.approx(want_reward), (t, i)
            assert (bool(terminated[i]), bool(truncated[i])) == (want_term, want_trunc), (t, i)
            ends += want_term or want_trunc
            if want_steps is not None and "steps" in info and info["_steps"][i]:
                assert int(info["steps"][i]) == want_steps, (t, i)
    assert ends >= 2, "the run should cross episode ends (autoreset)"
    assert compared >= STEPS * len(SEEDS)


def test_numeric_batches_are_fresh_and_text_free() -> None:
    vec = AsyncVectorEnv([numeric_dict, numeric_dict], shared_memory=True)
    first, _ = vec.reset(seed=[0, 1])
    kept = {k: np.copy(v) for k, v in first.items()}
    second, *_ = vec.step(np.array([0, 1]))
    assert all(isinstance(v, np.ndarray) and v.dtype.kind in "iuf" for v in second.values())
    for key, value in first.items():  # the first batch was not overwritten by the step
        np.testing.assert_array_equal(value, kept[key], err_msg=key)
    assert second["local_map"].shape == (2, 5, 5, 12)
    vec.close()


def test_make_vec_with_the_numeric_wrapper() -> None:
    vec = gym.make_vec(
        "maze_envs/AgiMaze-v0",
        num_envs=2,
        vectorization_mode="sync",
        path="TUTORIAL/STAGE-07/0000.json",
        wrappers=[lambda env: AgiMazeNumericObservation(env, local_map=1, flatten=True)],
    )
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (2, *(vec.single_observation_space.shape or ()))
    assert vec.observation_space.contains(obs)
    vec.close()
