"""Calibration of the shipped TRAINING packs against the real benchmark's random baseline.

A uniform random agent (every action of the labyrinth's list with equal probability, as the
real ``demo_random_agent.py``) plays each bundle of every TRAINING stage for ``hard_max_steps``
steps through the engine's pure :func:`~maze_envs.agimaze.engine.transition`. A win within
``soft_good_steps`` is *good*, a later win within ``hard_max_steps`` is *late*; success = good +
late. Every stage gets ``--runs`` episodes per bundle (10 bundles x 400 = 4,000 episodes by
default), and the table prints our rates beside the real ones (SPEC section 5, kept as data in
``maze_envs.agimaze.packs.catalog.REAL_CALIBRATION``), the ratio ours / real and whether it lies
within the goal factor of 1.5.

Two extra columns: ``exact`` is the mean over the stage's bundles of the exact success probability
computed on the Markov chain of player states (``planner.random_agent_success``), which the
Monte Carlo estimate must agree with; ``hard/opt`` is the stage's budget over the mean optimal
solution length (the basis of the budget rule of the other groups).

Usage: ``python benchmarks/agimaze_calibration.py [--runs 400] [--seed 0] [--only S1-rivers]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.agimaze.packs.catalog import REAL_CALIBRATION, CalibrationRow
from maze_envs.agimaze.planner import random_agent_success
from maze_envs.agimaze.types import Labyrinth

GOAL_FACTOR = 1.5


@dataclass
class StageResult:
    row: CalibrationRow
    episodes: int
    good: int
    late: int
    exact: float
    mean_optimal: float

    @property
    def success(self) -> float:
        return 100.0 * (self.good + self.late) / self.episodes

    @property
    def half_width(self) -> float:
        """95% normal-approximation half-width of the success estimate, in points."""
        p = (self.good + self.late) / self.episodes
        return 100.0 * 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / self.episodes)

    @property
    def ratio(self) -> float:
        return self.success / self.row.success


def play_random(lab: Labyrinth, steps: int, rng: np.random.Generator) -> int | None:
    """Steps a uniform random agent needs to win ``lab`` (None when ``steps`` do not suffice)."""
    compiled = compile_labyrinth(lab)
    actions = compiled.actions
    state = initial_state(compiled)
    for step, index in enumerate(rng.integers(len(actions), size=steps), start=1):
        result = transition(compiled, state, actions[int(index)])
        if result.won:
            return step
        state = result.state
    return None


def calibrate_stage(row: CalibrationRow, runs: int, rng: np.random.Generator) -> StageResult:
    names = list_bundles(f"TRAINING/{row.family}/{row.stage}/")
    if not names:
        raise SystemExit(f"no bundles under TRAINING/{row.family}/{row.stage}; build the packs")
    good = late = 0
    exact: list[float] = []
    optimal: list[int] = []
    for name in names:
        _, bundle = resolve_pack_path(name)
        lab = bundle.labyrinth
        exact.append(random_agent_success(lab, [row.hard_max_steps])[0])
        optimal.append(bundle.meta.optimal_steps or 0)
        for _ in range(runs):
            won_at = play_random(lab, row.hard_max_steps, rng)
            if won_at is None:
                continue
            if won_at <= row.soft_good_steps:
                good += 1
            else:
                late += 1
    return StageResult(
        row=row,
        episodes=runs * len(names),
        good=good,
        late=late,
        exact=100.0 * float(np.mean(exact)),
        mean_optimal=float(np.mean(optimal)),
    )


def format_table(results: list[StageResult]) -> str:
    head = (
        "| Family | Stage | Size | soft/hard | ours success (95% CI) | good | late | exact | "
        "real success | good | late | ours/real | within 1.5x | hard/opt |"
    )
    lines = [head, "|" + "---|" * 14]
    for r in results:
        row = r.row
        within = 1 / GOAL_FACTOR <= r.ratio <= GOAL_FACTOR
        lines.append(
            f"| {row.family} | {row.stage} | {row.rows}x{row.cols} | "
            f"{row.soft_good_steps}/{row.hard_max_steps} | "
            f"{r.success:.1f} ±{r.half_width:.1f} | {100 * r.good / r.episodes:.1f} | "
            f"{100 * r.late / r.episodes:.1f} | {r.exact:.1f} | {row.success:.1f} | "
            f"{row.good:.1f} | {row.late:.1f} | {r.ratio:.2f} | {'yes' if within else 'NO'} | "
            f"{row.hard_max_steps / r.mean_optimal:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=400, help="episodes per bundle")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random agent")
    parser.add_argument("--only", default="", help="family prefix, e.g. S1-rivers")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    results = []
    for row in REAL_CALIBRATION:
        if row.family.startswith(args.only):
            results.append(calibrate_stage(row, args.runs, rng))
            print(f"  {row.family}/{row.stage} done", file=sys.stderr, flush=True)
    print(format_table(results))
    within = sum(1 / GOAL_FACTOR <= r.ratio <= GOAL_FACTOR for r in results)
    episodes = sum(r.episodes for r in results)
    elapsed = time.perf_counter() - started
    print(
        f"\n{within}/{len(results)} stages within {GOAL_FACTOR}x of the real success rate; "
        f"{episodes} episodes in {elapsed:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
