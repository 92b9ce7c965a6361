"""Conformance of every environment of the table (:data:`maze_envs._registration.ENVIRONMENTS`),
the way MiniGrid's tests loop over every registered spec: PettingZoo's ``parallel_api_test``,
``api_test``, ``parallel_seed_test`` and ``render_test`` on each PettingZoo environment,
Gymnasium's ``check_env`` (render checks included) on each Gymnasium environment, and a seeded
determinism rollout on every one (same seed and actions, same observations and state hashes, in
this process and in fresh processes with other hash seeds). A new row of the table is tested
here without a line of this file changing."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import orjson
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test

from maze_envs._registration import ENVIRONMENTS, EnvEntry, load
from tests.conformance import rollout, small_kwargs

ROOT = Path(__file__).resolve().parent.parent
PETTINGZOO = [env for env in ENVIRONMENTS if env.api == "pettingzoo"]
GYMNASIUM = [env for env in ENVIRONMENTS if env.api == "gymnasium"]


def _ids(envs: list[EnvEntry]) -> list[str]:
    return [env.name for env in envs]


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    # PettingZoo and Gymnasium warn about style (dict observations, agent names); not errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def test_the_table_has_both_apis() -> None:
    assert PETTINGZOO and GYMNASIUM
    assert len(PETTINGZOO) + len(GYMNASIUM) == len(ENVIRONMENTS)


def _aec(env: EnvEntry, **kwargs: Any) -> Any:
    assert env.aec_entry_point is not None
    return load(env.aec_entry_point)(**small_kwargs(env), **kwargs)


@pytest.mark.parametrize("env", PETTINGZOO, ids=_ids(PETTINGZOO))
def test_parallel_api_test(env: EnvEntry) -> None:
    parallel_api_test(env.make(**small_kwargs(env)), num_cycles=200)


@pytest.mark.parametrize("env", PETTINGZOO, ids=_ids(PETTINGZOO))
def test_api_test(env: EnvEntry) -> None:
    api_test(_aec(env), num_cycles=200)


@pytest.mark.parametrize("env", PETTINGZOO, ids=_ids(PETTINGZOO))
def test_parallel_seed_test(env: EnvEntry) -> None:
    parallel_seed_test(lambda: env.make(**small_kwargs(env)), num_cycles=50)


@pytest.mark.parametrize("env", PETTINGZOO, ids=_ids(PETTINGZOO))
def test_render_test(env: EnvEntry) -> None:
    render_test(lambda render_mode=None: _aec(env, render_mode=render_mode))


@pytest.mark.parametrize("env", GYMNASIUM, ids=_ids(GYMNASIUM))
def test_check_env(env: EnvEntry) -> None:
    for mode in env.make(**small_kwargs(env)).metadata["render_modes"]:
        if mode == "human":
            continue  # opens a window
        check_env(env.make(**small_kwargs(env), render_mode=mode), skip_render_check=False)
    made = gymnasium.make(env.id, **small_kwargs(env))
    check_env(made.unwrapped)


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=_ids(list(ENVIRONMENTS)))
def test_same_seed_and_actions_give_the_same_game(env: EnvEntry) -> None:
    first, second = rollout(env.id, 11, 30), rollout(env.id, 11, 30)
    assert len(first) > 5
    assert first == second
    other = rollout(env.id, 12, 30)
    if env.kind == "escape":  # a new seed draws a new maze (an AGI Maze bundle is fixed)
        assert other[0] != first[0]


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=_ids(list(ENVIRONMENTS)))
def test_the_game_is_the_same_in_other_processes(env: EnvEntry) -> None:
    here = rollout(env.id, 5, 20)
    for hash_seed in ("1", "2"):
        run = subprocess.run(
            [sys.executable, "-m", "tests.conformance", env.id, "5", "20"],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert orjson.loads(run.stdout) == here, f"PYTHONHASHSEED={hash_seed}"
