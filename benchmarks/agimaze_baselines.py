"""The AGI Maze baselines on every shipped bundle: measured, and for the random agent exactly.

Plays ``random``, ``explorer`` and ``oracle`` on every bundle of TUTORIAL, TRAINING, CLASSIC
and EXTENDED through ``maze-envs bench`` (in process, no journal), game seed ``--seed``, within
the 5x budget. Each game's policy seed comes from the game seed and the bundle
(:func:`maze_envs.bench.seeds.policy_seeds` with the bundle's salt), so the random agent plays a
different action sequence on every bundle, as independent episodes should.

Per group and policy: bundles solved within the 5x budget and within ``max_steps``, mean
RHAE70 (an unsolved bundle counts 0) and mean steps / ``max_steps``. Beside the random agent's
row, the *exact expectation* of the same four figures, over the same bundles: from the random
walk's absorbing Markov chain (:func:`maze_envs.agimaze.planner.random_agent_win_curve`), the
probability of a win within the budget and within ``max_steps``, the expected RHAE70 and the
expected steps (``min(win step, budget)``). A measured row should lie near its expectation,
within the noise of one episode per bundle.

Usage: ``python benchmarks/agimaze_baselines.py [--seed 0] [--groups TUTORIAL TRAINING ...]``
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.agimaze.planner import random_agent_win_curve
from maze_envs.agimaze.scoring import rhae
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment

GROUPS = ("TUTORIAL", "TRAINING", "CLASSIC", "EXTENDED")
POLICIES = ("random", "explorer", "oracle")
BUDGET_FACTOR = 5


def random_expectation(path: str) -> dict[str, float]:
    """The exact expected figures of one random episode of ``path`` (5x budget)."""
    lab = resolve_pack_path(path)[1].labyrinth
    max_steps = lab.max_steps or 200
    budget = math.floor(BUDGET_FACTOR * max_steps)
    curve = random_agent_win_curve(lab, budget)
    at = np.diff(curve)  # at[t - 1]: the probability of winning at step t
    expected_rhae = sum(float(p) * rhae(t, max_steps, True) for t, p in enumerate(at, start=1))
    expected_steps = float(np.sum(1.0 - curve[:budget]))  # E[min(T, budget)]
    return {
        "solved": float(curve[budget]),
        "x1": float(curve[max_steps]),
        "rhae70": expected_rhae,
        "fraction": expected_steps / max_steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0, help="the game seed of every game")
    parser.add_argument("--groups", nargs="+", default=list(GROUPS))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    experiment = Experiment.model_validate(
        {
            "name": "agimaze baselines",
            "seeds": [args.seed],
            "agimaze": [
                {"packs": args.groups, "budget_factor": BUDGET_FACTOR, "policies": list(POLICIES)}
            ],
        }
    )
    with tempfile.TemporaryDirectory() as out:
        options = RunOptions(journal=False, verify=False, plots=False, quiet=True)
        result = run_experiment(experiment, Path(out), options)
    rows: list[dict[str, Any]] = result.rows
    print(
        f"Every bundle once, game seed {args.seed}, per-game policy seeds, "
        f"{BUDGET_FACTOR}x budget\n"
    )
    print(
        "| group | policy | solved (5x budget) | solved within max_steps | mean RHAE70 "
        "| mean steps / max_steps |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for group in args.groups:
        paths = list_bundles(group.rstrip("/") + "/")
        for policy in POLICIES:
            mine = [r for r in rows if r["group"] == group and r["policy"] == policy]
            solved = sum(bool(r["solved"]) for r in mine)
            x1 = sum(bool(r["x1_solved"]) for r in mine)
            mean_rhae = float(np.mean([r["rhae70"] for r in mine]))
            fraction = float(np.mean([r["step_fraction"] for r in mine]))
            print(
                f"| {group} | `{policy}` | {solved}/{len(mine)} | {x1}/{len(mine)} | "
                f"{mean_rhae:.3f} | {fraction:.2f} |"
            )
            if policy == "random":
                exact = [random_expectation(p) for p in paths]
                n = len(exact)
                print(
                    f"| {group} | `random`, exact expectation | "
                    f"{sum(e['solved'] for e in exact):.1f}/{n} | "
                    f"{sum(e['x1'] for e in exact):.1f}/{n} | "
                    f"{np.mean([e['rhae70'] for e in exact]):.3f} | "
                    f"{np.mean([e['fraction'] for e in exact]):.2f} |"
                )
    errors = [r for r in rows if r.get("status") != "ok"]
    print(f"\n{len(rows)} games in {time.perf_counter() - started:.0f} s; {len(errors)} errors")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
