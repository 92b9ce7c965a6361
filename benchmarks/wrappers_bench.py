"""Wrapper throughput: every wrapper's step rate against its bare environment, in one run.

Each row times the bare env and the wrapped env on the *same* action sequence (the same seeds,
so the same games), in rounds that time both sides back to back; the cost is the median over
the rounds of ``bare rate / wrapped rate - 1`` (how much longer a step takes), so machine noise
hits both sides of each ratio alike.

Maze Escape rows (``maze_escape_v1`` ``full`` preset, 9x9, 3 agents, random moves): the
numeric observation (Dict, flattened, hashed text; goal < 30%), move-only actions and the action
masks (goal < 15%), the whole RL stack, and the single-agent view with teammates that replay
the same moves through the policy interface. The single-agent goal (< 15%) is measured against
its fair peer, the loop the wrapper replaces: a hand-written parallel loop with the same teammate
policies, building their typed observations the same way (the policy interface needs them).
The row marked ``*`` compares it with the bare env driven by fixed actions instead, so it also
counts the teammates' policy work (mostly ``Observation.from_space``), not the wrapper's.
AGI Maze rows (a TRAINING labyrinth,
uniform random actions) are added when the other wrapper modules exist: the numeric observation,
the step budget, the hidden map, reward shaping and the text observation.

Run: ``.venv/bin/python benchmarks/wrappers_bench.py [--steps N] [--rounds N]``
"""

from __future__ import annotations

import argparse
import importlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from maze_envs import maze_escape_v1
from maze_envs.escape.types import MOVES, Action, Observation
from maze_envs.policies import PolicyBase, as_decision, escape_episode, is_privileged
from wrappers.escape_numeric import EscapeNumericObservation
from wrappers.masks import EscapeActionMasks
from wrappers.move_only import MoveOnlyActions
from wrappers.single_agent import SingleAgentEscape

ESCAPE: dict[str, Any] = {"preset": "full", "width": 9, "height": 9, "max_turns": 200}
MAX_TURNS: int = ESCAPE["max_turns"]
LABYRINTH = "TRAINING/S1-rivers/STAGE-06/0000.json"
NOTEBOOK = {"edit": 0, "start": 0, "end": 0, "text": ""}


@dataclass
class Row:
    """One comparison: how to build both envs and how to play ``steps`` steps on one."""

    group: str
    name: str
    bare: Callable[[], Any]
    wrapped: Callable[[], Any]
    play: Callable[[Any, Any, int], None]  # (env, actions, steps)
    actions: Callable[[int], Any]  # steps -> the action sequence, per side: (bare, wrapped)
    goal: float | None = None


# --- playing ----------------------------------------------------------------------------------
def play_parallel(env: Any, moves: Any, steps: int) -> None:
    """``steps`` turns of a parallel env, ``moves[t]`` the actions of turn t (cycling)."""
    env.reset(seed=0)
    step, n = env.step, len(moves)
    for t in range(steps):
        if not env.agents:
            env.reset()
        step(moves[t % n])


def play_gym(env: Any, actions: Any, steps: int) -> None:
    env.reset(seed=0)
    step, n = env.step, len(actions)
    for t in range(steps):
        _, _, terminated, truncated, _ = step(actions[t % n])
        if terminated or truncated:
            env.reset()


def escape_moves(steps: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, len(MOVES), size=(steps, 3))


def dict_actions(steps: int) -> list[dict[str, Any]]:
    return [
        {a: {"move": int(m), "notebook": NOTEBOOK, "radio": ""} for a, m in _agents(row)}
        for row in escape_moves(steps)
    ]


def _agents(row: Any) -> Any:
    return zip("ABC", row, strict=True)


def int_actions(steps: int) -> list[dict[str, int]]:
    return [{a: int(m) for a, m in _agents(row)} for row in escape_moves(steps)]


class Replay(PolicyBase[Any, Any, Action]):
    """A teammate that plays a fixed move sequence (indexed by turn): the same moves as the bare
    env's, so the single-agent row differs only by the wrapper's work."""

    def __init__(self, moves: list[int]) -> None:
        self.moves = [Action(move=MOVES[m]) for m in moves]

    def act(self, observation: Any) -> Action:
        return self.moves[observation.turn % len(self.moves)]


def single_agent(wrappers: list[Callable[[Any], Any]], steps: int) -> SingleAgentEscape:
    moves = escape_moves(min(steps, MAX_TURNS))
    teammates = {a: Replay(moves[:, i].tolist()) for i, a in enumerate("ABC") if a != "A"}
    return SingleAgentEscape(teammates=teammates, wrappers=wrappers, **ESCAPE)


class HandLoop:
    """The loop :class:`SingleAgentEscape` replaces, written by hand: a bare parallel env, the
    same teammate policies (reset per game, acting on their typed observations built the same
    way), and the learner's action given per turn. The single-agent goal is measured against it.
    """

    def __init__(self, steps: int) -> None:
        self.env = maze_escape_v1.parallel_env(**ESCAPE)
        moves = escape_moves(min(steps, MAX_TURNS))
        self.policies = {a: Replay(moves[:, i].tolist()) for i, a in enumerate("ABC") if a != "A"}
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None) -> dict[str, Any]:
        observations, _ = self.env.reset(seed=seed)
        for name, policy in self.policies.items():
            episode = escape_episode(self.env, name, privileged=is_privileged(policy))
            policy.reset(name, int(self.rng.integers(2**31)), episode)
        return observations


def play_hand(loop: HandLoop, actions: Any, steps: int) -> None:
    observations = loop.reset(seed=0)
    env, config, policies, n = loop.env, loop.env.config, loop.policies, len(actions)
    for t in range(steps):
        if not env.agents:
            observations = loop.reset()
        chosen = {
            name: as_decision(
                policy.act(Observation.from_space(observations[name], config, name))
            ).action
            for name, policy in policies.items()
        }
        chosen["A"] = actions[t % n]
        observations, *_ = env.step(chosen)


def escape_rows(steps: int) -> list[Row]:
    bare = lambda: maze_escape_v1.parallel_env(**ESCAPE)  # noqa: E731
    same = lambda make: lambda: make(bare())  # noqa: E731
    rows = [
        Row(
            "escape",
            "EscapeNumericObservation",
            bare,
            same(EscapeNumericObservation),
            play_parallel,
            lambda s: (dict_actions(s), dict_actions(s)),
            0.30,
        ),
        Row(
            "escape",
            "EscapeNumericObservation(flatten)",
            bare,
            same(lambda e: EscapeNumericObservation(e, flatten=True)),
            play_parallel,
            lambda s: (dict_actions(s), dict_actions(s)),
            0.30,
        ),
        Row(
            "escape",
            "EscapeNumericObservation(text=hash)",
            bare,
            same(lambda e: EscapeNumericObservation(e, text="hash")),
            play_parallel,
            lambda s: (dict_actions(s), dict_actions(s)),
            0.30,
        ),
        Row(
            "escape",
            "MoveOnlyActions",
            bare,
            same(MoveOnlyActions),
            play_parallel,
            lambda s: (dict_actions(s), int_actions(s)),
            0.15,
        ),
        Row(
            "escape",
            "EscapeActionMasks",
            bare,
            same(EscapeActionMasks),
            play_parallel,
            lambda s: (dict_actions(s), dict_actions(s)),
            0.15,
        ),
        Row(
            "escape",
            "numeric(flatten)+move-only+masks",
            bare,
            same(
                lambda e: EscapeActionMasks(
                    MoveOnlyActions(EscapeNumericObservation(e, flatten=True))
                )
            ),
            play_parallel,
            lambda s: (dict_actions(s), int_actions(s)),
            None,
        ),
    ]
    text = _optional("wrappers.text", "EscapeTextObservation")
    if text is not None:
        rows.append(
            Row(
                "escape",
                "EscapeTextObservation",
                bare,
                same(text),
                play_parallel,
                lambda s: (dict_actions(s), dict_actions(s)),
                None,
            )
        )
    learner = lambda s: [  # noqa: E731
        {"move": int(m), "notebook": NOTEBOOK, "radio": ""} for m in escape_moves(s)[:, 0]
    ]
    rows += [
        Row(
            "escape",
            "SingleAgentEscape vs hand-written loop",
            lambda: HandLoop(steps),
            lambda: single_agent([], steps),
            _play_single,
            lambda s: (learner(s), learner(s)),
            0.15,
        ),
        Row(
            "escape",
            "SingleAgentEscape vs fixed-action bare env*",
            bare,
            lambda: single_agent([], steps),
            _play_single,
            lambda s: (dict_actions(s), learner(s)),
            None,
        ),
        Row(
            "escape",
            "SingleAgentEscape+numeric+move-only",
            bare,
            lambda: single_agent([EscapeNumericObservation, MoveOnlyActions], steps),
            _play_single,
            lambda s: (dict_actions(s), escape_moves(s)[:, 0].tolist()),
            None,
        ),
    ]
    return rows


def _play_single(env: Any, actions: Any, steps: int) -> None:
    """The wrapped side is a Gymnasium env; the peer a hand loop or a bare parallel env."""
    if isinstance(env, SingleAgentEscape):
        play_gym(env, actions, steps)
    elif isinstance(env, HandLoop):
        play_hand(env, actions, steps)
    else:
        play_parallel(env, actions, steps)


def _optional(module: str, name: str) -> Any:
    """A wrapper class from a module that may not exist yet (None then)."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def agimaze_rows() -> list[Row]:
    import gymnasium as gym

    bare = lambda: gym.make("maze_envs/AgiMaze-v0", path=LABYRINTH)  # noqa: E731

    def actions(steps: int) -> tuple[list[int], list[int]]:
        n = int(cast(gym.spaces.Discrete, bare().action_space).n)
        sequence = np.random.default_rng(0).integers(n, size=steps).tolist()
        return sequence, sequence

    wanted: list[tuple[str, str, dict[str, Any], float | None]] = [
        ("wrappers.agimaze_numeric", "AgiMazeNumericObservation", {}, 0.30),
        ("wrappers.agimaze_numeric", "AgiMazeNumericObservation", {"local_map": 2}, 0.30),
        ("wrappers.agimaze_numeric", "AgiMazeNumericObservation", {"flatten": True}, 0.30),
        ("wrappers.agimaze_options", "HiddenMap", {}, 0.15),
        ("wrappers.agimaze_options", "RewardShaping", {"step_penalty": 0.01}, 0.15),
        ("wrappers.text", "TextObservation", {}, None),
    ]
    rows = []
    for module, name, options, goal in wanted:
        cls = _optional(module, name)
        if cls is None:
            continue
        label = name + (f"({', '.join(f'{k}={v}' for k, v in options.items())})" if options else "")
        make = lambda cls=cls, options=options: cls(bare(), **options)  # noqa: E731
        rows.append(Row("agimaze", label, bare, make, play_gym, actions, goal))
    return rows


# --- measuring --------------------------------------------------------------------------------
def rates(row: Row, steps: int, rounds: int) -> tuple[float, float, float, float, float]:
    """Best steps/s of the bare and the wrapped env, the median per-round cost and the range of
    the rounds' costs.

    Each round times both sides back to back (alternating which goes first), so a burst of
    load from elsewhere hits one round's pair rather than one side; the median of the rounds'
    costs is the figure reported.
    """
    bare_env, wrapped_env = row.bare(), row.wrapped()
    bare_actions, wrapped_actions = row.actions(steps)
    row.play(bare_env, bare_actions, min(steps, 200))  # warm-up (caches, templates)
    row.play(wrapped_env, wrapped_actions, min(steps, 200))
    best, costs = [0.0, 0.0], []
    sides = [(bare_env, bare_actions), (wrapped_env, wrapped_actions)]
    for round_ in range(rounds):
        rate = [0.0, 0.0]
        for side in (0, 1) if round_ % 2 == 0 else (1, 0):
            env, actions = sides[side]
            start = time.perf_counter()
            row.play(env, actions, steps)
            rate[side] = steps / (time.perf_counter() - start)
            best[side] = max(best[side], rate[side])
        costs.append(rate[0] / rate[1] - 1)
    return best[0], best[1], float(np.median(costs)), min(costs), max(costs)


def table(rows: list[Row], steps: int, rounds: int) -> Iterator[str]:
    yield (
        f"{'env':<8} {'wrapper':<44} {'bare/s':>9} {'wrapped/s':>10} {'cost':>7} {'goal':>6}"
        "       rounds"
    )
    yield "(steps/s: best round of each side; cost: median over rounds of bare/wrapped - 1)"
    for row in rows:
        bare, wrapped, cost, low, high = rates(row, steps, rounds)
        goal = "" if row.goal is None else f"<{row.goal:.0%}"
        mark = "" if row.goal is None else (" ok  " if cost < row.goal else " MISS")
        yield (
            f"{row.group:<8} {row.name:<44} {bare:>9.0f} {wrapped:>10.0f} {cost:>+7.0%} "
            f"{goal:>6}{mark:<5} {low:+.0%}..{high:+.0%}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wrappers_bench.py", description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="steps per round and side")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", choices=["escape", "agimaze"], default=None)
    args = parser.parse_args(argv)
    rows: list[Row] = []
    if args.only in (None, "escape"):
        rows += escape_rows(args.steps)
    if args.only in (None, "agimaze"):
        rows += agimaze_rows()
    print(
        f"steps per round and side: {args.steps}, rounds: {args.rounds}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    for line in table(rows, args.steps, args.rounds):
        print(line, flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    if any(row.name.endswith("*") for row in rows):
        print(
            "* bare env with fixed actions for every agent: includes the teammates' policy work "
            "(typed observations), which any loop with policy-driven teammates pays"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
