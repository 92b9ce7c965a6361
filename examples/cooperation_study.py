"""Does cooperation shorten a classical team's finish in Maze Escape?

The Maze Escape study asked whether agents that share what they find (radio, notebooks read on a
shared cell) escape sooner. This example answers it for classical teams with the committed
experiment ``examples/experiments/cooperation.toml``: a cooperative explorer team with the radio
on, the same team with the radio off, independent depth-first explorers, and a control (the
cooperative team with the meeting alert off), at 9x9 to 17x17, 50 seeds per cell (the same mazes,
and the same policy seeds, in every arm).

It plays the study on two disjoint seed ranges (default ``0-49`` and ``1000-1049``) and reports
for each, per size and arm, team success (Wilson 95 % interval) and finish / fastest possible
finish (bootstrap 95 % interval; a failed game counts as max_turns / fastest); then, paired by
maze, the difference of that ratio between arms and how many times faster one arm finishes (the
ratio of the mean finish turns, over the pairs where both finished), each with its interval; and
how many games the meeting alert changed (none: no baseline reads it, so the radio arms differ in
the radio alone). Last, the findings: a comparison is stated as a finding at a size only when its
interval excludes zero, in the same direction, on every seed range.

It writes the runner's results (journal, CSV, JSON, Markdown, plots) per seed range to ``--out``;
``--docs DIR`` also writes the report and the first range's plot for the README.

Run: ``python examples/cooperation_study.py`` (the full study: 2 x 1,000 games, a few minutes per
range on 2 free cores), or ``--quick`` for a small version (2 sizes x 3 seeds per range);
``--executor inline|process|ray``. One range's games: ``maze-envs bench --config
examples/experiments/cooperation.toml``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maze_envs.bench.report import table
from maze_envs.bench.results import paired_difference, paired_ratio
from maze_envs.bench.runner import RunOptions, RunResult, run_experiment
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import Experiment, parse_size
from maze_envs.bench.stats import Estimate, describe_estimate

EXPERIMENT = Path(__file__).resolve().parent / "experiments" / "cooperation.toml"
ON, OFF, NO_ALERT = "radio on", "radio off", "radio on, alert off"
TEAM, ALONE = "cooperative team", "independent explorers"
ARMS = ((ON, TEAM), (OFF, TEAM), (ON, ALONE), (NO_ALERT, TEAM))
#: (faster arm, slower arm): compared by the difference of finish / fastest and by the ratio of
#: finish turns
COMPARISONS = (((ON, TEAM), (ON, ALONE)), ((ON, TEAM), (OFF, TEAM)), ((OFF, TEAM), (ON, ALONE)))
COLUMN = "finish_ratio_censored"
SEED_RANGES = ("0-49", "1000-1049")


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


def arm_name(arm: tuple[str, str]) -> str:
    return f"{arm[1]} ({arm[0]})"


def verdict(estimate: Estimate, first: str, second: str) -> str:
    """What a paired difference's interval says, in words (never more than it supports)."""
    if estimate.mean is None:
        return "no pairs"
    if estimate.low is None or estimate.high is None:
        return f"no interval (n={estimate.n}): not a finding"
    if estimate.high < 0:
        return f"{first} finishes sooner"
    if estimate.low > 0:
        return f"{first} finishes later"
    return "no clear difference (the interval includes 0)"


def direction(estimate: Estimate) -> int:
    """-1 / +1 when the interval excludes 0 below / above, else 0 (no finding)."""
    if estimate.low is None or estimate.high is None:
        return 0
    return -1 if estimate.high < 0 else 1 if estimate.low > 0 else 0


def _sizes(result: RunResult) -> list[str]:
    return sorted({g["size"] for g in result.summary["escape"]}, key=lambda s: parse_size(s))


def alert_changes(result: RunResult) -> tuple[int, int]:
    """(games whose play changed, games compared) between the cooperative team with the meeting
    alert on and off (same maze, same policy seeds)."""
    keys = ("success", "finish_turn", "turns", "exit_turns", "wall_moves", "stays")
    arms: dict[str, dict[tuple[str, int], tuple[Any, ...]]] = {ON: {}, NO_ALERT: {}}
    for row in result.rows:
        if row["policy"] == TEAM and row["setup"] in arms:
            arms[row["setup"]][(row["size"], row["seed"])] = tuple(row.get(k) for k in keys)
    pairs = [(a, arms[NO_ALERT][key]) for key, a in arms[ON].items() if key in arms[NO_ALERT]]
    return sum(1 for a, b in pairs if a != b), len(pairs)


def report(result: RunResult) -> str:
    """One seed range's tables as Markdown."""
    groups = {(g["setup"], g["policy"], g["size"]): g for g in result.summary["escape"]}
    sizes = _sizes(result)
    lines = []
    for size in sizes:
        for setup, policy in ARMS:
            g = groups.get((setup, policy, size))
            if g is None:
                continue
            low, high = g["success_low"], g["success_high"]
            rate = f"{g['successes']}/{g['games']}" + (
                "" if low is None else f" [{100 * low:.0f}–{100 * high:.0f}%]"
            )
            lines.append(
                [
                    size,
                    f"{policy}, {setup}",
                    rate,
                    describe_estimate(g["finish_ratio_censored"]),
                    describe_estimate(g["finish_turn"], 0),
                ]
            )
    arms = table(
        ["size", "arm", "team success", "finish / fastest (all games)", "finish turn"], lines
    )
    pairs = []
    for first, second in COMPARISONS:
        diffs = paired_difference(result.rows, first, second, COLUMN)
        ratios = paired_ratio(result.rows, first, second, "finish_turn")
        for size in sizes:
            if size in diffs:
                difference, ratio = diffs[size], ratios.get(size)
                pairs.append(
                    [
                        size,
                        f"{arm_name(first)} vs {arm_name(second)}",
                        str(difference.n),
                        difference.describe(),
                        "–" if ratio is None else ratio.describe() + "x",
                        verdict(difference, arm_name(first), arm_name(second)),
                    ]
                )
    paired = table(
        [
            "size",
            "comparison (same mazes)",
            "pairs",
            "difference of finish / fastest [95% CI]",
            "times faster: finish turn of the second / of the first [95% CI]",
            "reading",
        ],
        pairs,
    )
    changed, compared = alert_changes(result)
    control = (
        f"Meeting alert control: the cooperative team with the alert off played {changed} of "
        f"{compared} games differently from the same team with it on (same mazes, same policy "
        "seeds)."
    )
    return f"{arms}\n\n{paired}\n\n{control}\n"


def findings(results: Sequence[tuple[str, RunResult]]) -> str:
    """Each comparison and size: its reading on every seed range, and whether it replicates."""
    lines = []
    for first, second in COMPARISONS:
        per_range = [paired_difference(result.rows, first, second, COLUMN) for _, result in results]
        ratios = [paired_ratio(result.rows, first, second, "finish_turn") for _, result in results]
        for size in _sizes(results[0][1]):
            estimates = [diffs.get(size) for diffs in per_range]
            if any(e is None for e in estimates):
                continue
            signs = {direction(e) for e in estimates if e is not None}
            if signs == {-1}:
                finding = f"finding: {arm_name(first)} finishes sooner"
            elif signs == {1}:
                finding = f"finding: {arm_name(first)} finishes later"
            else:
                finding = "not a finding (the ranges disagree or an interval includes 0)"
            cells = [e.describe() for e in estimates if e is not None]
            times = [r[size].describe() + "x" for r in ratios if size in r]
            lines.append(
                [size, f"{arm_name(first)} vs {arm_name(second)}", *cells, *times, finding]
            )
    names = [name for name, _ in results]
    header = [
        "size",
        "comparison",
        *(f"difference, seeds {n}" for n in names),
        *(f"times faster, seeds {n}" for n in names),
        "stated as",
    ]
    return table(header, lines) + "\n"


def _header(args: argparse.Namespace, ranges: Sequence[str]) -> str:
    """What the docs page says about how it was made."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    options = f"--executor {args.executor}" + (f" --workers {args.workers}" if args.workers else "")
    return (
        "# The cooperation study: every table\n\n"
        f"Written by `python examples/cooperation_study.py {options} --docs DIR` from "
        f"`examples/experiments/cooperation.toml` on the seed ranges {', '.join(ranges)} "
        f"(load average {load:.1f} when it finished; the times below are wall-clock times on "
        "that machine, the tables do not depend on it). Differences: first arm minus second "
        "(negative: the first finishes sooner); times faster: the second arm's mean finish turn "
        "over the first's, on the same mazes. A comparison is a finding only when its interval "
        "excludes 0, in the same direction, on every seed range.\n\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--seeds",
        action="append",
        help="a seed range (repeatable; default: 0-49 and 1000-1049, two disjoint ranges)",
    )
    parser.add_argument("--sizes", nargs="+", help="maze sizes (default: 9 11 13 15 17)")
    parser.add_argument("--quick", action="store_true", help="sizes 9 11, seeds 0-2 and 1000-1002")
    parser.add_argument("--out", help="output folder (default: a temporary folder)")
    parser.add_argument("--executor", default="process", choices=("inline", "process", "ray"))
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--no-journal", action="store_true", help="do not record the games")
    parser.add_argument("--docs", help="write the report and the plot here (for the README)")
    args = parser.parse_args(argv)
    ranges, sizes = args.seeds, args.sizes
    if args.quick:
        ranges, sizes = ranges or ["0-2", "1000-1002"], sizes or ["9", "11"]
    ranges = ranges or list(SEED_RANGES)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp()) / "cooperation"
    results: list[tuple[str, RunResult]] = []
    parts = []
    for seeds in ranges:
        study = experiment(seeds, sizes)
        options = RunOptions(
            executor=args.executor,
            workers=args.workers,
            fresh=True,
            journal=not args.no_journal,
            quiet=True,
        )
        folder = out / f"seeds-{seeds}"
        result = run_experiment(study, folder, options)
        results.append((seeds, result))
        errors = sum(1 for r in result.rows if r.get("status") != "ok")
        parts.append(
            f"## Seeds {seeds}: {len(result.rows)} games in {result.elapsed_s:.0f} s"
            f" ({errors} not ok)\n\n{report(result)}"
        )
        print(f"seeds {seeds}: {len(result.rows)} games in {result.elapsed_s:.0f} s: {folder}")
    text = "\n".join(parts)
    text += f"\n## Findings (replicated on every seed range)\n\n{findings(results)}"
    print(f"\n# {EXPERIMENT.stem}: seeds {', '.join(ranges)}\n")
    print(text)
    if args.docs:
        docs = Path(args.docs)
        docs.mkdir(parents=True, exist_ok=True)
        (docs / "cooperation_study.md").write_text(_header(args, ranges) + text, encoding="utf-8")
        plot = results[0][1].out / "escape_by_size.png"
        if plot.is_file():
            shutil.copyfile(plot, docs / "cooperation_study.png")
        print(f"report and plot for the README: {docs}")
    not_ok = [r for _, result in results for r in result.rows if r.get("status") != "ok"]
    return 1 if not_ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
