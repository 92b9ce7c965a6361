"""EscapeNumericObservation: the numbers are the observation's facts, in their declared space."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.spaces import max_distance_tenths
from maze_envs.escape.types import DIRECTIONS, EDGE_KINDS, LANDMARK_NAMES, Observation
from wrappers.escape_numeric import EscapeNumericObservation, hash_text

SIZE = {"width": 5, "height": 5, "max_turns": 60}


def random_actions(env: Any, rng: np.random.Generator, turn: int) -> dict[str, Any]:
    """Random moves, with notebook appends and radio messages now and then (rolling_log is
    avoided: the full preset uses splice, so edits are whole-notebook replacements)."""
    actions = {}
    for agent in env.agents:
        text = f"turn {turn} from {agent} exit north" if rng.random() < 0.3 else ""
        actions[agent] = {
            "move": int(rng.integers(5)),
            "notebook": {"edit": int(bool(text)), "start": 0, "end": 0, "text": text},
            "radio": f"hello {agent} {turn}" if rng.random() < 0.3 else "",
        }
    return actions


def play(wrapper: EscapeNumericObservation, seed: int, turns: int = 60) -> list[tuple[Any, Any]]:
    """(numeric observations, raw observations) of every turn of one game."""
    rng = np.random.default_rng(seed)
    observations, _ = wrapper.reset(seed=seed)
    seen = [(observations, wrapper.raw_observations)]
    for turn in range(turns):
        if not wrapper.agents:
            break
        observations, *_ = wrapper.step(random_actions(wrapper, rng, turn))
        seen.append((observations, wrapper.raw_observations))
    return seen


def test_dict_values_are_the_typed_observation() -> None:
    wrapper = EscapeNumericObservation(maze_escape_v1.parallel_env(preset="full", **SIZE))
    config = wrapper.config
    space = wrapper.observation_space("A")
    top = max_distance_tenths(config)
    scale = np.array([config.width - 1, config.height - 1])
    colocated_seen = 0
    for observations, raw in play(wrapper, seed=5):
        for agent, obs in observations.items():
            assert space.contains(obs), agent
            typed = Observation.from_space(raw[agent], config, agent)
            onehot = obs["edges"].reshape(len(DIRECTIONS), len(EDGE_KINDS))
            assert onehot.sum(axis=1).tolist() == [1, 1, 1, 1]
            kinds = [EDGE_KINDS[k] for k in onehot.argmax(axis=1)]
            assert kinds == [typed.edges[d] for d in DIRECTIONS]
            assert obs["on_exit"] == int(typed.on_exit)
            landmark = LANDMARK_NAMES[obs["landmark"] - 1] if obs["landmark"] else None
            assert landmark == typed.landmark
            assert obs["time"] * config.max_turns == pytest.approx(
                [typed.turn, typed.turns_left], abs=1e-3
            )
            assert obs["distances"][0] * top == pytest.approx(typed.distance_to_exit, abs=1e-3)
            assert typed.distance_to_teammates is not None
            for j, name in enumerate(config.agents):
                expected = 0 if name == agent else typed.distance_to_teammates[name]
                assert obs["distances"][1 + j] * top == pytest.approx(expected, abs=1e-3)
            assert np.allclose(obs["position"] * scale, typed.position)
            real = obs["trail"][obs["trail_mask"].astype(bool)]
            assert np.allclose(real * scale, np.array(typed.trail).reshape(-1, 2))
            together = [name for j, name in enumerate(config.agents) if obs["colocated_with"][j]]
            assert together == typed.colocated_with
            colocated_seen += bool(together)
            used = [d for j, d in enumerate(DIRECTIONS) if obs["used_exits"][j]]
            assert used == typed.used_exits
            heard = [name for j, name in enumerate(config.agents) if obs["radio_heard"][j]]
            assert heard == sorted(typed.radio)
            shown = [name for j, name in enumerate(config.agents) if obs["notebook_shown"][j]]
            assert shown == sorted(typed.teammate_notebooks)
            cooldown = typed.last_action.radio_cooldown / config.radio_cooldown
            assert obs["radio_cooldown"][0] == pytest.approx(cooldown)
    assert colocated_seen, "the game should have put two agents on one cell"


def test_flat_vector_matches_the_dict_form() -> None:
    make = lambda **kw: EscapeNumericObservation(  # noqa: E731
        maze_escape_v1.parallel_env(preset="full", **SIZE), text="hash", **kw
    )
    as_dict, flat = make(), make(flatten=True)
    names = flat.feature_names()
    space = flat.observation_space("C")
    assert space.shape == (len(names),) and space.dtype == np.float32
    for (dict_obs, _), (flat_obs, _) in zip(play(as_dict, 9), play(flat, 9), strict=True):
        for agent in dict_obs:
            vec, obs = flat_obs[agent], dict_obs[agent]
            assert space.contains(vec)
            assert (
                vec[
                    names.index(f"landmark={LANDMARK_NAMES[obs['landmark'] - 1]}")
                    if obs["landmark"]
                    else names.index("landmark=none")
                ]
                == 1
            )
            assert vec[names.index("on_exit[1]")] == obs["on_exit"]
            for key in ("edges", "radio_heard", "notebook_hash", "radio_hash", "trail_mask"):
                start = next(i for i, n in enumerate(names) if n.startswith(key))
                part = vec[start : start + obs[key].size]
                assert part.tolist() == obs[key].astype(np.float32).tolist(), key
            start = names.index("trail[0].x")
            assert np.allclose(vec[start : start + obs["trail"].size], obs["trail"].ravel())
            start = names.index("distances[exit]")
            assert np.allclose(vec[start : start + 4], obs["distances"])


def test_text_is_dropped_or_hashed() -> None:
    dropped = EscapeNumericObservation(maze_escape_v1.parallel_env(preset="full", **SIZE))
    assert not any(key.endswith("_hash") for key in dropped.observation_space("A").spaces)
    hashed = EscapeNumericObservation(
        maze_escape_v1.parallel_env(preset="full", **SIZE), text="hash", hash_buckets=16
    )
    hashed.reset(seed=1)
    quiet = {"move": 4, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}
    say = {
        **quiet,
        "radio": "north corridor",
        "notebook": {**quiet["notebook"], "edit": 1, "text": "map: dead end"},
    }
    observations, *_ = hashed.step({"A": quiet, "B": say, "C": quiet})
    radio = observations["A"]["radio_hash"].reshape(3, 16)
    assert np.flatnonzero(radio[1]).tolist() == hash_text("north corridor", 16)  # slot B
    assert not radio[0].any() and not radio[2].any()
    assert np.flatnonzero(observations["B"]["notebook_hash"]).tolist() == hash_text(
        "map: dead end", 16
    )
    assert not observations["A"]["notebook_hash"].any()


def test_hash_is_the_same_in_another_process() -> None:
    code = "from wrappers.escape_numeric import hash_text; print(hash_text('Go north, exit!', 64))"
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert other.strip() == str(hash_text("Go north, exit!", 64))
    assert hash_text("Go north, exit!", 64) == hash_text("exit NORTH go", 64)


def test_arrays_are_fresh_and_unshared() -> None:
    wrapper = EscapeNumericObservation(maze_escape_v1.parallel_env(preset="full", **SIZE))
    first, _ = wrapper.reset(seed=3)
    keep = {a: {k: np.array(v, copy=True) for k, v in o.items()} for a, o in first.items()}
    for obs in first.values():
        for value in obs.values():
            if isinstance(value, np.ndarray):
                value[...] = 0
    quiet = {"move": 4, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}
    second, *_ = wrapper.step({a: quiet for a in wrapper.agents})
    assert second["A"]["edges"].tolist() == keep["A"]["edges"].tolist()  # STAY: same cell
    arrays = [v for o in second.values() for v in o.values() if isinstance(v, np.ndarray)]
    for i, a in enumerate(arrays):
        for b in arrays[i + 1 :]:
            assert not np.shares_memory(a, b)


def test_edge_codes_option() -> None:
    wrapper = EscapeNumericObservation(maze_escape_v1.parallel_env(**SIZE), edges="codes")
    observations, _ = wrapper.reset(seed=2)
    for agent, obs in observations.items():
        assert obs["edges"].tolist() == wrapper.raw_observations[agent]["edges"].tolist()
        assert wrapper.observation_space(agent).contains(obs)


def test_v0_and_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="maze_escape_v1"):
        EscapeNumericObservation(maze_escape_v0.parallel_env(**SIZE))
    env = maze_escape_v1.parallel_env(**SIZE)
    with pytest.raises(ValueError, match="'drop' or 'hash'"):
        EscapeNumericObservation(env, text="keep")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hash_buckets"):
        EscapeNumericObservation(env, hash_buckets=0)
    with pytest.raises(ValueError, match="Maze Escape"):
        EscapeNumericObservation(object())  # type: ignore[arg-type]
