"""Vector envs carry the AGI Maze texts: sync, async with and without shared memory, make_vec.

Gymnasium's own ``Text`` shared memory hands back the first (blank) texts forever; the texts of
each sub-env are checked here against a single env playing the same actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv

import maze_envs  # noqa: F401  (registers the environments)

TUTORIAL = "TUTORIAL/STAGE-07/0000.json"  # open map: text and map both change every step


def single_run(make: Callable[[], gym.Env], seed: int, actions: list[int]) -> list[dict]:
    env = make()
    obs, _ = env.reset(seed=seed)
    frames = [obs]
    for action in actions:
        obs, _, terminated, truncated, _ = env.step(action)
        frames.append(obs)
        if terminated or truncated:
            break
    env.close()
    return frames


def vector_run(vec: VectorEnv, seeds: list[int], plans: list[list[int]]) -> list[dict]:
    obs, _ = vec.reset(seed=seeds)
    frames = [obs]
    for t in range(min(len(p) for p in plans)):
        obs, *_ = vec.step(np.array([plan[t] for plan in plans]))
        frames.append(obs)
    vec.close()
    return frames


def text_fields(space: gym.spaces.Dict) -> list[str]:
    return [k for k, v in space.spaces.items() if isinstance(v, gym.spaces.Text)]


def check(make: Callable[[], gym.Env], vec: VectorEnv, steps: int, texts: list[str]) -> None:
    plans = [[int(a) for a in np.random.default_rng(i).integers(4, size=steps)] for i in range(2)]
    seeds = [0, 1]
    singles = [single_run(make, s, p) for s, p in zip(seeds, plans, strict=True)]
    frames = vector_run(vec, seeds, plans)
    compared = 0
    for t, batch in enumerate(frames):
        for i, single in enumerate(singles):
            if t >= len(single):  # that sub-env finished: the vector env reset it
                continue
            for key in texts:
                assert str(batch[key][i]) == single[t][key], (t, i, key)
                compared += bool(single[t][key])
    assert compared >= steps  # real, non-blank texts were compared


def agimaze() -> gym.Env:
    return gym.make("maze_envs/AgiMaze-v0", path=TUTORIAL)


def agimaze_set() -> gym.Env:
    return gym.make("maze_envs/AgiMazeSet-v0")


@pytest.mark.parametrize(
    "vector",
    [
        lambda make: SyncVectorEnv([make, make]),
        lambda make: AsyncVectorEnv([make, make]),  # shared_memory=True, the default
        lambda make: AsyncVectorEnv([make, make], shared_memory=False),
    ],
    ids=["sync", "async-shared", "async-pipes"],
)
@pytest.mark.parametrize("make", [agimaze, agimaze_set], ids=["AgiMaze-v0", "AgiMazeSet-v0"])
def test_vector_envs_deliver_the_texts(
    make: Callable[[], gym.Env], vector: Callable[[Any], VectorEnv]
) -> None:
    probe = make()
    texts = text_fields(probe.observation_space)
    probe.close()
    assert "text" in texts and "map" in texts
    check(make, vector(make), steps=8, texts=texts)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_delivers_the_texts(mode: str) -> None:
    vec = gym.make_vec("maze_envs/AgiMaze-v0", num_envs=2, vectorization_mode=mode, path=TUTORIAL)
    check(agimaze, vec, steps=8, texts=["text", "map"])
    vec = gym.make_vec("maze_envs/AgiMazeSet-v0", num_envs=2, vectorization_mode=mode)
    check(agimaze_set, vec, steps=8, texts=["message", "text", "map"])


def test_async_observations_lie_in_the_batched_space_and_are_fresh() -> None:
    vec = AsyncVectorEnv([agimaze, agimaze])
    first, _ = vec.reset(seed=0)
    assert vec.observation_space.contains(first)
    assert list(first["text"]) == ["Game has started.", "Game has started."]
    second, *_ = vec.step(np.array([0, 1]))
    assert vec.observation_space.contains(second)
    assert list(first["text"]) == ["Game has started.", "Game has started."]  # a copy, kept
    assert list(second["text"]) != list(first["text"])
    vec.close()
