"""Calibration of the shipped TRAINING packs against the real benchmark's random baseline.

A uniform random agent (every action of the labyrinth's list with equal probability, as the
real ``demo_random_agent.py``) plays each bundle of every TRAINING stage for ``hard_max_steps``
steps through the engine's pure :func:`~maze_envs.agimaze.engine.transition`. A win within
``soft_good_steps`` is *good*, a later win within ``hard_max_steps`` is *late*; success = good +
late. The table prints our rates beside the real ones (SPEC section 5, kept as data in
``maze_envs.agimaze.packs.catalog.REAL_CALIBRATION``), the ratio ours / real and whether it lies
within the goal factor of 1.5. The verdict is on the measured rate; the exit status is 1 when a
stage falls outside the goal factor, so the script doubles as a check.

Episodes. A rate ``p`` estimated from ``n`` episodes has the relative standard error
``sqrt((1 - p) / (n p))``; every stage gets the ``n`` that makes it ``--rel-se`` (default 5 %)
at the real rate ``p``, spread evenly over its bundles (so the estimate is of the plain mean
over bundles) and capped at ``--max-episodes`` per stage. Rare stages get the most episodes:
1.3 % needs 30,370, 24.8 % needs 1,213. The episodes run in ``--workers`` processes, each bundle
from its own seed spawned from ``--seed``, so results do not depend on the worker count.

Extra columns: ``exact`` is the mean over the stage's bundles of the exact success probability
computed on the Markov chain of player states (``planner.random_agent_success``, the quantity
the pack builder keeps within ``STAGE_MEAN_TOLERANCE`` of the real rate), ``z`` is (measured -
exact) / standard error, which the Monte Carlo estimate must keep small, and ``hard/opt`` is the
stage's budget over the mean optimal solution length (the basis of the other groups' budget rule).

Usage: ``python benchmarks/agimaze_calibration.py [--rel-se 0.05] [--runs N] [--only S1-rivers]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.agimaze.packs.catalog import REAL_CALIBRATION, CalibrationRow
from maze_envs.agimaze.planner import random_agent_success

GOAL_FACTOR = 1.5


@dataclass(frozen=True)
class BundleRun:
    """Episodes of one bundle: ``runs`` random agents seeded from ``seed``."""

    name: str
    runs: int
    soft: int
    hard: int
    seed: np.random.SeedSequence


@dataclass(frozen=True)
class BundleResult:
    good: int
    late: int
    exact: float
    optimal: int


@dataclass
class StageResult:
    row: CalibrationRow
    episodes: int
    good: int
    late: int
    exact: float
    mean_optimal: float

    @property
    def rate(self) -> float:
        return (self.good + self.late) / self.episodes

    @property
    def success(self) -> float:
        return 100.0 * self.rate

    @property
    def std_error(self) -> float:
        """Standard error of the success estimate, in points (from the exact mean)."""
        p = self.exact / 100
        return 100.0 * math.sqrt(max(p * (1 - p), 1e-12) / self.episodes)

    @property
    def half_width(self) -> float:
        """95% normal-approximation half-width of the success estimate, in points."""
        p = self.rate
        return 100.0 * 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / self.episodes)

    @property
    def ratio(self) -> float:
        return self.success / self.row.success

    @property
    def within(self) -> bool:
        return 1 / GOAL_FACTOR <= self.ratio <= GOAL_FACTOR


def episodes_for(rate: float, rel_se: float) -> int:
    """Episodes that give a rate estimate the relative standard error ``rel_se`` at ``rate``."""
    return math.ceil((1 - rate) / (rate * rel_se**2))


def play_bundle(job: BundleRun) -> BundleResult:
    """Play ``job.runs`` uniform random episodes of one bundle; also its exact success."""
    _, bundle = resolve_pack_path(job.name)
    compiled = compile_labyrinth(bundle.labyrinth)
    actions = compiled.actions
    start = initial_state(compiled)
    rng = np.random.default_rng(job.seed)
    good = late = 0
    for _ in range(job.runs):
        state = start
        for step, index in enumerate(rng.integers(len(actions), size=job.hard), start=1):
            result = transition(compiled, state, actions[int(index)])
            if result.won:
                if step <= job.soft:
                    good += 1
                else:
                    late += 1
                break
            state = result.state
    (exact,) = random_agent_success(compiled, [job.hard])
    return BundleResult(good, late, exact, bundle.meta.optimal_steps or 0)


def stage_jobs(
    row: CalibrationRow, args: argparse.Namespace, seed: np.random.SeedSequence
) -> list[BundleRun]:
    names = list_bundles(f"TRAINING/{row.family}/{row.stage}/")
    if not names:
        raise SystemExit(f"no bundles under TRAINING/{row.family}/{row.stage}; build the packs")
    if args.runs:
        runs = args.runs
    else:
        episodes = min(episodes_for(row.success / 100, args.rel_se), args.max_episodes)
        runs = math.ceil(episodes / len(names))
    seeds = seed.spawn(len(names))
    return [
        BundleRun(name, runs, row.soft_good_steps, row.hard_max_steps, s)
        for name, s in zip(names, seeds, strict=True)
    ]


def stage_result(
    row: CalibrationRow, jobs: list[BundleRun], done: list[BundleResult]
) -> StageResult:
    return StageResult(
        row=row,
        episodes=sum(job.runs for job in jobs),
        good=sum(r.good for r in done),
        late=sum(r.late for r in done),
        exact=100.0 * float(np.mean([r.exact for r in done])),
        mean_optimal=float(np.mean([r.optimal for r in done])),
    )


def format_table(results: list[StageResult]) -> str:
    head = (
        "| Family | Stage | Size | soft/hard | episodes | ours success (95% CI) | good | late | "
        "exact | z | real success | good | late | ours/real | exact/real | within 1.5x | "
        "hard/opt |"
    )
    lines = [head, "|" + "---|" * 17]
    for r in results:
        row = r.row
        lines.append(
            f"| {row.family} | {row.stage} | {row.rows}x{row.cols} | "
            f"{row.soft_good_steps}/{row.hard_max_steps} | {r.episodes} | "
            f"{r.success:.2f} ±{r.half_width:.2f} | {100 * r.good / r.episodes:.2f} | "
            f"{100 * r.late / r.episodes:.2f} | {r.exact:.2f} | "
            f"{(r.success - r.exact) / r.std_error:+.1f} | {row.success:.1f} | "
            f"{row.good:.1f} | {row.late:.1f} | {r.ratio:.2f} | {r.exact / row.success:.2f} | "
            f"{'yes' if r.within else 'NO'} | {row.hard_max_steps / r.mean_optimal:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--rel-se", type=float, default=0.05, help="relative standard error per stage"
    )
    parser.add_argument(
        "--max-episodes", type=int, default=40_000, help="cap on the episodes of one stage"
    )
    parser.add_argument(
        "--runs", type=int, default=0, help="fixed episodes per bundle (overrides --rel-se)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random agents")
    parser.add_argument("--only", default="", help="family prefix, e.g. S1-rivers")
    parser.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes"
    )
    args = parser.parse_args(argv)
    if not 0 < args.rel_se < 1:
        parser.error("--rel-se must lie in (0, 1)")
    if args.runs < 0 or args.max_episodes < 1 or args.workers < 1:
        parser.error("--runs must be >= 0, --max-episodes and --workers >= 1")
    rows = [row for row in REAL_CALIBRATION if row.family.startswith(args.only)]
    if not rows:
        parser.error(f"no TRAINING family starts with {args.only!r}")
    seeds = np.random.SeedSequence(args.seed).spawn(len(REAL_CALIBRATION))
    stage_seed = {
        (row.family, row.stage): s for row, s in zip(REAL_CALIBRATION, seeds, strict=True)
    }
    jobs = {row: stage_jobs(row, args, stage_seed[row.family, row.stage]) for row in rows}
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = {row: [pool.submit(play_bundle, job) for job in js] for row, js in jobs.items()}
        results = []
        for row, pending in futures.items():
            results.append(stage_result(row, jobs[row], [f.result() for f in pending]))
            print(f"  {row.family}/{row.stage} done", file=sys.stderr, flush=True)
    print(format_table(results))
    within = sum(r.within for r in results)
    episodes = sum(r.episodes for r in results)
    elapsed = time.perf_counter() - started
    worst = max(max(r.ratio, 1 / r.ratio) if r.ratio > 0 else math.inf for r in results)
    print(
        f"\n{within}/{len(results)} stages within {GOAL_FACTOR}x of the real success rate "
        f"(worst measured factor {worst:.2f}); {episodes} episodes in {elapsed:.0f} s "
        f"with {args.workers} worker(s)"
    )
    return 0 if within == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
