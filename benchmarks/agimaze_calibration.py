"""Calibration of the TRAINING packs against the real benchmark's random-agent table, exactly.

A uniform random agent (every action of the labyrinth's list with equal probability, as the
real ``demo_random_agent.py``) is an absorbing Markov chain over a labyrinth's reachable player
states (the engine's own transition; a win absorbs). Pushing the start's probability mass
through it step by step gives, exactly, the probability of having won within ``soft_good_steps``
(*good*) and within ``hard_max_steps`` (*success*); *late* = success - good
(:func:`maze_envs.agimaze.planner.random_agent_success`). The rate a random agent measures over
equally many episodes per bundle is the mean over the stage's bundles, so the table needs no
sampling: no noise, no episode count, seconds to compute.

Printed per stage beside the real table (SPEC section 5, kept as data in
``maze_envs.agimaze.packs.catalog.REAL_CALIBRATION``): success, good and late in % for ours and
the real engine, each ratio ours / real, and whether it lies within the goal factor of 1.5.
Success is checked on every stage, good and late wherever the real figure is at least 1 %
(below that the table's one decimal is too coarse to hold a ratio to). Exit status 1 when a
checked figure is outside the goal factor, so the script doubles as a check.

``--pack-version agimaze-packs-2`` measures the earlier packs; ``--episodes N`` adds a Monte
Carlo estimate from N random episodes per bundle (from ``--seed``) with its z score against the
exact rate, a check of the exact computation itself.

Usage: ``python benchmarks/agimaze_calibration.py [--pack-version V] [--episodes N] [--only S1]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.packs import (
    DEFAULT_PACK_VERSION,
    list_bundles,
    resolve_pack_path,
    version_root,
)
from maze_envs.agimaze.packs.catalog import REAL_CALIBRATION, CalibrationRow
from maze_envs.agimaze.planner import random_agent_success
from maze_envs.agimaze.types import Labyrinth

GOAL_FACTOR = 1.5
#: Good and late are checked where the real figure is at least this (in %).
CHECKED_FROM = 1.0


@dataclass(frozen=True)
class StageRates:
    """Exact random-agent rates of one stage (means over its bundles), in %."""

    row: CalibrationRow
    bundles: int
    success: float
    good: float
    sampled: tuple[int, int, int] | None = None  # (episodes, good wins, late wins)

    @property
    def late(self) -> float:
        return self.success - self.good

    def ratios(self) -> dict[str, float]:
        real = self.row
        return {
            "success": self.success / real.success,
            "good": self.good / real.good,
            "late": self.late / real.late,
        }

    def checked(self) -> dict[str, bool]:
        """Per figure: whether it is held to the goal factor."""
        real = self.row
        return {
            "success": True,
            "good": real.good >= CHECKED_FROM,
            "late": real.late >= CHECKED_FROM,
        }

    @property
    def within(self) -> bool:
        ratios = self.ratios()
        return all(
            1 / GOAL_FACTOR <= ratios[name] <= GOAL_FACTOR
            for name, checked in self.checked().items()
            if checked
        )


def sample(lab: Labyrinth, soft: int, hard: int, episodes: int, seed: int) -> tuple[int, int]:
    """Good and late wins of ``episodes`` uniform random episodes (a Monte Carlo check)."""
    compiled = compile_labyrinth(lab)
    actions, start = compiled.actions, initial_state(compiled)
    rng = np.random.default_rng(seed)
    good = late = 0
    for _ in range(episodes):
        state = start
        for step, index in enumerate(rng.integers(len(actions), size=hard), start=1):
            result = transition(compiled, state, actions[int(index)])
            if result.won:
                good, late = (good + 1, late) if step <= soft else (good, late + 1)
                break
            state = result.state
    return good, late


def stage_rates(row: CalibrationRow, version: str, episodes: int, seed: int) -> StageRates:
    root = version_root(version)
    names = list_bundles(f"TRAINING/{row.family}/{row.stage}/", root=root)
    if not names:
        raise SystemExit(f"no bundles under TRAINING/{row.family}/{row.stage} of {version}")
    goods, successes = [], []
    sampled = [0, 0, 0]
    for index, name in enumerate(names):
        lab = resolve_pack_path(name, root=root)[1].labyrinth
        good, success = random_agent_success(lab, [row.soft_good_steps, row.hard_max_steps])
        goods.append(good)
        successes.append(success)
        if episodes:
            wins = sample(lab, row.soft_good_steps, row.hard_max_steps, episodes, seed + index)
            sampled = [sampled[0] + episodes, sampled[1] + wins[0], sampled[2] + wins[1]]
    return StageRates(
        row=row,
        bundles=len(names),
        success=100 * float(np.mean(successes)),
        good=100 * float(np.mean(goods)),
        sampled=(sampled[0], sampled[1], sampled[2]) if episodes else None,
    )


def _ratio(value: float, checked: bool) -> str:
    mark = "" if not checked else " ok" if 1 / GOAL_FACTOR <= value <= GOAL_FACTOR else " OUT"
    return f"{value:.2f}{mark}"


def format_table(stages: list[StageRates]) -> str:
    """The Markdown table: ours (exact) beside the real random-agent table, with ratios."""
    head = [
        "Family",
        "Stage",
        "Size",
        "soft/hard",
        "success ours / real",
        "good ours / real",
        "late ours / real",
        "success ratio",
        "good ratio",
        "late ratio",
    ]
    if any(s.sampled for s in stages):
        head += ["sampled success (episodes)", "z"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in stages:
        r, ratios, checked = s.row, s.ratios(), s.checked()
        cells = [
            r.family,
            r.stage,
            f"{r.rows}x{r.cols}",
            f"{r.soft_good_steps}/{r.hard_max_steps}",
            f"{s.success:.2f} / {r.success:.1f}",
            f"{s.good:.2f} / {r.good:.1f}",
            f"{s.late:.2f} / {r.late:.1f}",
            _ratio(ratios["success"], checked["success"]),
            _ratio(ratios["good"], checked["good"]),
            _ratio(ratios["late"], checked["late"]),
        ]
        if s.sampled:
            n, good, late = s.sampled
            p = s.success / 100
            measured = (good + late) / n
            z = (measured - p) / math.sqrt(max(p * (1 - p), 1e-12) / n)
            cells += [f"{100 * measured:.2f} ({n})", f"{z:+.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pack-version", default=DEFAULT_PACK_VERSION, help="pack version")
    parser.add_argument("--only", default="", help="family prefix, e.g. S1-rivers")
    parser.add_argument(
        "--episodes", type=int, default=0, help="also sample this many episodes per bundle"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled episodes")
    args = parser.parse_args(argv)
    if args.episodes < 0:
        parser.error("--episodes must be >= 0")
    rows = [row for row in REAL_CALIBRATION if row.family.startswith(args.only)]
    if not rows:
        parser.error(f"no TRAINING family starts with {args.only!r}")
    started = time.perf_counter()
    stages = []
    for row in rows:
        stages.append(stage_rates(row, args.pack_version, args.episodes, args.seed))
        print(f"  {row.family}/{row.stage} done", file=sys.stderr, flush=True)
    print(f"Random agent, exact rates (%) of {args.pack_version} beside the real table:\n")
    print(format_table(stages))
    within = sum(s.within for s in stages)
    worst = {
        name: max(max(s.ratios()[name], 1 / s.ratios()[name]) for s in stages if s.checked()[name])
        for name in ("success", "good", "late")
    }
    print(
        f"\n{within}/{len(stages)} stages have every checked figure within {GOAL_FACTOR}x of the "
        f"real one (worst factors: success {worst['success']:.2f}, good {worst['good']:.2f}, "
        f"late {worst['late']:.2f}; good and late checked where the real figure is >= "
        f"{CHECKED_FROM:g} %); {time.perf_counter() - started:.1f} s"
    )
    return 0 if within == len(stages) else 1


if __name__ == "__main__":
    raise SystemExit(main())
