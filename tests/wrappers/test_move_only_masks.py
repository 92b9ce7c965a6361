"""MoveOnlyActions and EscapeActionMasks: an int moves like the Dict action; masks are open
edges."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.types import EDGE_KINDS, MOVES, Move, Observation
from wrappers.escape_numeric import EscapeNumericObservation
from wrappers.masks import EscapeActionMasks, open_moves
from wrappers.move_only import MOVE_CODES, MoveOnlyActions

SIZE = {"width": 6, "height": 6, "max_turns": 80}
STAY_DICT = {"move": 4, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}


def test_move_codes_follow_the_vocabulary() -> None:
    assert {int(m): m.label for m in Move} == MOVE_CODES
    env = MoveOnlyActions(maze_escape_v1.parallel_env(**SIZE))
    assert all(env.action_space(a) == spaces.Discrete(len(MOVES)) for a in env.possible_agents)


@pytest.mark.parametrize("preset", ["full", "navigator"])
def test_move_only_moves_like_the_dict_action(preset: str) -> None:
    wrapped = MoveOnlyActions(maze_escape_v1.parallel_env(preset=preset, **SIZE))
    plain = maze_escape_v1.parallel_env(preset=preset, **SIZE)
    obs_w, _ = wrapped.reset(seed=11)
    obs_p, _ = plain.reset(seed=11)
    notebook = {"append": ""} if preset == "navigator" else STAY_DICT["notebook"]
    rng = np.random.default_rng(0)
    moved = 0
    while wrapped.agents:
        codes = {a: int(rng.integers(5)) for a in wrapped.agents}
        obs_w, rew_w, term_w, trunc_w, info_w = wrapped.step(codes)
        dict_actions = {a: {"move": c, "notebook": notebook, "radio": ""} for a, c in codes.items()}
        obs_p, rew_p, term_p, trunc_p, info_p = plain.step(dict_actions)
        for agent in codes:
            assert info_w[agent]["xy"] == info_p[agent]["xy"]
            assert info_w[agent]["events"] == info_p[agent]["events"]
            typed_w = Observation.from_space(obs_w[agent], wrapped.config, agent)
            assert typed_w == Observation.from_space(obs_p[agent], plain.config, agent)
            moved += info_w[agent]["events"]["move"] == "moved"
        assert (rew_w, term_w, trunc_w) == (rew_p, term_p, trunc_p)
    assert moved > 10
    assert wrapped.unwrapped.state_digest() == plain.state_digest()


@pytest.mark.parametrize("bad", [5, -1, 2.0, "N", True, None, np.array([1, 2])])
def test_invalid_move_only_actions_raise(bad: Any) -> None:
    env = MoveOnlyActions(maze_escape_v1.parallel_env(**SIZE))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"agent 'B'.*0 N, 1 E, 2 S, 3 W, 4 STAY"):
        env.step({"A": 0, "B": bad, "C": 0})


def test_numpy_integers_are_accepted() -> None:
    env = MoveOnlyActions(maze_escape_v1.parallel_env(**SIZE))
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"A": np.int64(4), "B": np.array(4), "C": np.uint8(4)})
    assert {infos[a]["events"]["move"] for a in "ABC"} == {"stayed"}


def test_move_only_on_v0_works_too() -> None:
    env = MoveOnlyActions(maze_escape_v0.parallel_env(**SIZE))
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"A": 4, "B": 4, "C": 4})
    assert infos["A"]["events"]["move"] == "stayed"


def test_open_moves_table() -> None:
    for code in range(81):
        edges = [(code // 3**k) % 3 for k in range(4)]
        mask = open_moves(edges)
        assert mask.tolist() == [int(EDGE_KINDS[e] == "open") for e in edges] + [1]
    with pytest.raises(ValueError, match=r"0\.\.2"):
        open_moves([0, 3, 0, 0])


@pytest.mark.parametrize("move_only", [False, True])
def test_mask_is_the_open_edges_and_masked_moves_bump(move_only: bool) -> None:
    base = maze_escape_v1.parallel_env(preset="full", **SIZE)
    env = EscapeActionMasks(MoveOnlyActions(base) if move_only else base)
    observations, _ = env.reset(seed=21)
    rng = np.random.default_rng(1)
    results: dict[str, set[str]] = {"allowed": set(), "masked": set()}
    while env.agents:
        actions = {}
        for agent in env.agents:
            obs = observations[agent]
            assert env.observation_space(agent).contains(obs)
            typed = Observation.from_space(
                {k: v for k, v in obs.items() if k != "action_mask"}, env.config, agent
            )
            expected = [int(typed.edges[d] == "open") for d in ("N", "E", "S", "W")] + [1]
            assert obs["action_mask"].tolist() == expected
            assert env.action_mask(agent).tolist() == [bool(v) for v in expected]
            assert len(obs["action_mask"]) == 5
            code = int(rng.integers(5))
            actions[agent] = code if move_only else {**STAY_DICT, "move": code}
        before = {a: observations[a]["action_mask"][actions_code(actions[a])] for a in actions}
        observations, _, _, _, infos = env.step(actions)
        for agent, allowed in before.items():
            results["allowed" if allowed else "masked"].add(infos[agent]["events"]["move"])
    assert results["masked"] <= {"bumped_interior_wall", "bumped_outer_brick"}
    assert results["masked"] and "moved" in results["allowed"]
    assert not results["allowed"] & {"bumped_interior_wall", "bumped_outer_brick"}


def actions_code(action: Any) -> int:
    return action if isinstance(action, int) else int(action["move"])


def test_mask_over_flat_numeric_and_order_rules() -> None:
    base = maze_escape_v1.parallel_env(preset="full", **SIZE)
    env = EscapeActionMasks(MoveOnlyActions(EscapeNumericObservation(base, flatten=True)))
    observations, _ = env.reset(seed=2)
    space = env.observation_space("A")
    assert set(space.spaces) == {"observation", "action_mask"}
    for agent, obs in observations.items():
        assert space.contains(obs)
        edges = env.raw_observations[agent]["edges"]
        assert obs["action_mask"].tolist() == open_moves(edges).tolist()
    with pytest.raises(ValueError, match="EscapeActionMasks outside"):
        EscapeNumericObservation(EscapeActionMasks(maze_escape_v1.parallel_env(**SIZE)))
    with pytest.raises(ValueError, match="call reset"):
        EscapeActionMasks(maze_escape_v1.parallel_env(**SIZE)).action_mask("A")
