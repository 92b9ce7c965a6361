"""PettingZoo's official checks plus our own multi-step determinism test."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test

from maze_envs import maze_escape_v0
from maze_envs.escape.env import MazeEscapeEnv

SMALL = {"width": 6, "height": 5, "max_turns": 40}


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    # PettingZoo warns about style (agent names like "player_0", dict observations); not errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize("preset", ["sparse", "navigator", "full"])
def test_parallel_api(preset: str) -> None:
    parallel_api_test(maze_escape_v0.parallel_env(preset=preset, **SMALL), num_cycles=200)


@pytest.mark.parametrize("preset", ["sparse", "full"])
def test_aec_api_checks_space_containment(preset: str) -> None:
    api_test(maze_escape_v0.env(preset=preset, **SMALL), num_cycles=200)


def test_raw_env_is_the_unwrapped_aec_conversion() -> None:
    raw = maze_escape_v0.raw_env(**SMALL)
    assert isinstance(raw.unwrapped, MazeEscapeEnv)
    assert raw.metadata["name"] == "maze_escape_v0"


def test_render_modes() -> None:
    render_test(lambda render_mode=None: maze_escape_v0.env(render_mode=render_mode, **SMALL))


def test_parallel_seed_test() -> None:
    parallel_seed_test(lambda: maze_escape_v0.parallel_env(preset="full", **SMALL), num_cycles=50)


def test_registered_with_pettingzoo() -> None:
    import maze_envs  # noqa: F401 - registration happens on import

    assert "maze_envs/MazeEscape-v0" in pettingzoo.parallel_registry
    assert "maze_envs/MazeEscape-v0" in pettingzoo.aec_registry


def _play(seed: int, turns: int) -> list[tuple[Any, ...]]:
    env = maze_escape_v0.parallel_env(preset="full", width=8, height=7, max_turns=turns)
    obs, _ = env.reset(seed=seed)
    history: list[tuple[Any, ...]] = [(obs, {}, env.state_digest())]
    rng = np.random.default_rng(1234)  # the same action sequence for every seed
    t = 0
    while env.agents:
        actions = {
            a: {
                "move": int(rng.integers(5)),
                "notebook": {"edit": 1, "start": 0, "end": int(rng.integers(3)), "text": f"{a}{t}"},
                "radio": f"{a} says {t}" if rng.random() < 0.5 else "",
            }
            for a in env.agents
        }
        obs, rewards, *_ = env.step(actions)
        history.append((obs, rewards, env.state_digest()))
        t += 1
    return history


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b)


def test_same_seed_and_actions_give_the_same_game_every_turn() -> None:
    first, second = _play(11, 80), _play(11, 80)
    assert len(first) == len(second) > 20
    for turn, (one, two) in enumerate(zip(first, second, strict=True)):
        assert _equal(one[0], two[0]), f"observations differ at turn {turn}"
        assert one[1] == two[1], f"rewards differ at turn {turn}"
        assert one[2] == two[2], f"state digests differ at turn {turn}"


def test_different_seeds_give_different_games() -> None:
    first, second = _play(11, 30), _play(12, 30)
    assert first[0][2] != second[0][2]
    assert any(a[2] != b[2] for a, b in zip(first, second, strict=False))


def test_reset_without_seed_draws_a_reproducible_game_seed() -> None:
    env = maze_escape_v0.parallel_env(**SMALL)
    env.reset(seed=3)
    env.reset()
    seed, digest = env.game_seed, env.state_digest()
    assert seed is not None
    env.reset(seed=seed)
    assert env.state_digest() == digest


def test_digest_changes_with_every_part_of_the_state() -> None:
    env = maze_escape_v0.parallel_env(preset="full", **SMALL)
    env.reset(seed=0)
    seen = {env.state_digest()}
    stay = {"move": 4, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}
    # A notebook edit alone, a radio message alone, then a plain turn: each changes the digest.
    edit = {**stay, "notebook": {"edit": 1, "start": 0, "end": 0, "text": "x"}}
    for actions in (
        {"A": edit, "B": stay, "C": stay},
        {"A": stay, "B": {**stay, "radio": "hi"}, "C": stay},
        {"A": stay, "B": stay, "C": stay},
    ):
        env.step(actions)
        digest = env.state_digest()
        assert digest not in seen
        seen.add(digest)
