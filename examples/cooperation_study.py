"""Does cooperation shorten a classical team's finish in Maze Escape?

The Maze Escape study asked whether agents that share what they find (radio, a meeting alert,
notebooks read on a shared cell) escape sooner. This example answers it for classical teams with
the committed experiment ``examples/experiments/cooperation.toml``: a cooperative explorer team
with radio and meeting alert on, the same team with both off, and independent depth-first
explorers, at 9x9 to 17x17 with 50 seeds per cell (the same mazes in every arm).

It reports, per size and arm, team success (Wilson 95 % interval) and finish / fastest possible
finish (bootstrap 95 % interval; a failed game counts as max_turns / fastest), then the paired
differences between arms (same maze, same seed) with their intervals, and says for each size
whether the interval excludes zero. It writes the runner's results (journal, CSV, JSON,
Markdown, plots) to ``--out``; ``--docs DIR`` also writes the plot and the table for the README.

Run: ``python examples/cooperation_study.py`` (the full study, a few minutes on 2 cores), or
``--quick`` for a small version (2 sizes x 5 seeds); ``--executor inline|process|ray``.
The same games: ``maze-envs bench --config examples/experiments/cooperation.toml``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

from maze_envs.bench.report import table
from maze_envs.bench.results import paired_difference
from maze_envs.bench.runner import RunOptions, RunResult, run_experiment
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import Experiment, parse_size
from maze_envs.bench.stats import Estimate

EXPERIMENT = Path(__file__).resolve().parent / "experiments" / "cooperation.toml"
ON, OFF = "radio+alert on", "radio+alert off"
TEAM, ALONE = "cooperative team", "independent explorers"
ARMS = ((ON, TEAM), (OFF, TEAM), (ON, ALONE))
COMPARISONS = (((ON, TEAM), (ON, ALONE)), ((ON, TEAM), (OFF, TEAM)), ((OFF, TEAM), (ON, ALONE)))
COLUMN = "finish_ratio_censored"


def experiment(seeds: str | None, sizes: list[str] | None) -> Experiment:
    """The committed experiment, with other seeds or sizes if asked."""
    study = Experiment.load(EXPERIMENT)
    if seeds:
        study = study.model_copy(update={"seeds": parse_seeds(seeds)})
    if sizes:
        shapes = tuple(parse_size(s) for s in sizes)
        study = study.model_copy(
            update={"escape": tuple(s.model_copy(update={"sizes": shapes}) for s in study.escape)}
        )
    return study


def _ci(estimate: dict[str, Any] | Estimate) -> str:
    data = estimate.to_json() if isinstance(estimate, Estimate) else estimate
    if data["mean"] is None:
        return "–"
    return f"{data['mean']:.2f} [{data['low']:.2f}, {data['high']:.2f}]"


def verdict(estimate: Estimate, first: str, second: str) -> str:
    """What a paired interval says, in words (never more than the interval supports)."""
    if estimate.mean is None or estimate.low is None or estimate.high is None:
        return "no pairs"
    if estimate.high < 0:
        return f"{first} finishes sooner"
    if estimate.low > 0:
        return f"{first} finishes later"
    return "no clear difference (the interval includes 0)"


def report(result: RunResult) -> str:
    """The study's tables as Markdown."""
    groups = {(g["setup"], g["policy"], g["size"]): g for g in result.summary["escape"]}
    sizes = sorted({g["size"] for g in groups.values()}, key=lambda s: parse_size(s))
    lines = []
    for size in sizes:
        for setup, policy in ARMS:
            g = groups.get((setup, policy, size))
            if g is None:
                continue
            rate = f"{g['successes']}/{g['games']} [{100 * g['success_low']:.0f}–" + (
                f"{100 * g['success_high']:.0f}%]"
            )
            lines.append(
                [
                    size,
                    f"{policy}, {setup}",
                    rate,
                    _ci(g["finish_ratio_censored"]),
                    _ci(g["finish_ratio"]),
                    f"{g['first_out']['mean'] or 0:.0f}",
                ]
            )
    arms = table(
        [
            "size",
            "arm",
            "team success",
            "finish / fastest (all games)",
            "finish / fastest (successes)",
            "first out (turn)",
        ],
        lines,
    )
    pairs = []
    for first, second in COMPARISONS:
        diffs = paired_difference(result.rows, first, second, COLUMN)
        name_a, name_b = f"{first[1]} ({first[0]})", f"{second[1]} ({second[0]})"
        for size in sizes:
            if size in diffs:
                estimate = diffs[size]
                pairs.append(
                    [
                        size,
                        f"{name_a} − {name_b}",
                        str(estimate.n),
                        _ci(estimate),
                        verdict(estimate, name_a, name_b),
                    ]
                )
    paired = table(
        ["size", "paired difference of finish / fastest", "pairs", "mean [95% CI]", "reading"],
        pairs,
    )
    return f"{arms}\n\n{paired}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", help="seeds (default: the experiment's, 0-49)")
    parser.add_argument("--sizes", nargs="+", help="maze sizes (default: 9 11 13 15 17)")
    parser.add_argument("--quick", action="store_true", help="sizes 9 11, seeds 0-4")
    parser.add_argument("--out", help="output folder (default: a temporary folder)")
    parser.add_argument("--executor", default="process", choices=("inline", "process", "ray"))
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--no-journal", action="store_true", help="do not record the games")
    parser.add_argument("--docs", help="write the plot and the table here (for the README)")
    args = parser.parse_args(argv)
    seeds, sizes = args.seeds, args.sizes
    if args.quick:
        seeds, sizes = seeds or "0-4", sizes or ["9", "11"]
    study = experiment(seeds, sizes)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp()) / "cooperation"
    options = RunOptions(
        executor=args.executor, workers=args.workers, fresh=True, journal=not args.no_journal
    )
    result = run_experiment(study, out, options)
    text = report(result)
    print(f"# {study.name}: {len(result.rows)} games in {result.elapsed_s:.0f} s\n")
    print(text)
    print(f"results, journal and plots: {out}")
    if args.docs:
        docs = Path(args.docs)
        docs.mkdir(parents=True, exist_ok=True)
        (docs / "cooperation_study.md").write_text(text, encoding="utf-8")
        plot = out / "escape_by_size.png"
        if plot.is_file():
            shutil.copyfile(plot, docs / "cooperation_study.png")
        print(f"plot and table for the README: {docs}")
    errors = [r for r in result.rows if r.get("status") == "error"]
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
