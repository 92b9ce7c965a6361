"""PNG plots of a run's aggregates (matplotlib: ``pip install 'maze-envs[render]'``).

* ``escape_by_size.png``: team success rate (Wilson 95 % intervals) and finish / fastest
  possible finish (bootstrap 95 % intervals, successful games) by maze size, one line per arm
  (setup and policy).
* ``agimaze_rhae70.png``: mean RHAE70 (bootstrap 95 % intervals) per stage, one series per arm.
* ``cost_per_success.png``: cost per success per arm and size or pack, when policies report cost.

A mean without an interval (one game, or games that all gave the same value: see
:mod:`maze_envs.bench.stats`) is drawn as a hollow marker labelled with its ``n`` and never sets
an axis's range: the range comes from the means that have intervals, and such a point outside it
is drawn at the edge (an arrow marker) with its value written beside it. So a single lucky game
of an otherwise failing arm (a finish ratio of 73.7 over n = 1) cannot flatten every other arm.

Figures are built with matplotlib's object API (``matplotlib.figure.Figure``), so plotting keeps
no global state and needs no display.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Summary = dict[str, Any]


def _size_key(size: str) -> tuple[int, int]:
    width, _, height = size.partition("x")
    try:
        return int(width), int(height or width)
    except ValueError:
        return (0, 0)


def _arm(group: Summary, setups: int) -> str:
    policy = group["policy"] + (" (privileged)" if group.get("privileged") else "")
    return f"{group['setup']}: {policy}" if setups > 1 else policy


def _errors(
    values: Sequence[float | None], lows: Sequence[float | None], highs: Sequence[float | None]
) -> list[list[float]]:
    below = [
        v - lo if v is not None and lo is not None else 0.0
        for v, lo in zip(values, lows, strict=True)
    ]
    above = [
        hi - v if v is not None and hi is not None else 0.0
        for v, hi in zip(values, highs, strict=True)
    ]
    return [below, above]


def _with_interval(estimate: Summary) -> bool:
    return estimate.get("low") is not None and estimate.get("high") is not None


def _axis_range(estimates: Sequence[Summary]) -> tuple[float, float] | None:
    """The y range that shows every interval (padded), or None when no estimate has one."""
    spans = [(e["low"], e["high"]) for e in estimates if _with_interval(e)]
    if not spans:
        return None
    low, high = min(lo for lo, _ in spans), max(hi for _, hi in spans)
    pad = max(0.08 * (high - low), 0.05 * max(abs(high), 1.0))
    return low - pad, high + pad


def _lonely_points(
    axis: Any, points: Sequence[tuple[float, Summary]], limits: tuple[float, float] | None
) -> None:
    """Means without an interval: hollow markers labelled with n, clipped to ``limits``."""
    for x, estimate in points:
        mean, n = estimate["mean"], estimate.get("n")
        label = f"n={n}" if n == 1 else f"n={n}, all equal"
        y, marker = mean, "o"
        if limits is not None and not limits[0] <= mean <= limits[1]:
            above = mean > limits[1]
            y = limits[1] if above else limits[0]
            marker = "^" if above else "v"
            label = f"{mean:.3g} ({label})"
        axis.plot([x], [y], marker=marker, markerfacecolor="none", color="grey", clip_on=False)
        axis.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small")


def escape_plot(groups: Sequence[Summary], path: Path) -> Path | None:
    """Success rate and finish ratio by maze size per arm; None when there is nothing to plot."""
    figure = escape_figure(groups)
    if figure is None:
        return None
    figure.savefig(path, dpi=110)
    return path


def escape_figure(groups: Sequence[Summary]) -> Any:
    """The figure of :func:`escape_plot` (a ``matplotlib.figure.Figure``; None without groups):
    axes 0 the success rate, axes 1 the finish ratio."""
    if not groups:
        return None
    from matplotlib.figure import Figure

    sizes = sorted({g["size"] for g in groups}, key=_size_key)
    setups = len({g["setup"] for g in groups})
    arms: dict[str, dict[str, Summary]] = {}
    for group in groups:
        arms.setdefault(_arm(group, setups), {})[group["size"]] = group
    figure = Figure(figsize=(11, 4.5), layout="constrained")
    rate_ax, ratio_ax = figure.subplots(1, 2)
    positions = list(range(len(sizes)))
    spread = 0.08 * (len(arms) - 1)
    limits = _axis_range([g["finish_ratio"] for g in groups if g["finish_ratio"]["mean"]])
    lonely: list[tuple[float, Summary]] = []
    for index, (arm, by_size) in enumerate(arms.items()):
        offset = (index * 0.08 - spread / 2) if len(arms) > 1 else 0.0
        placed = [
            (p + offset, by_size[s])
            for p, s in zip(positions, sizes, strict=True)
            if s in by_size and by_size[s]["success_rate"] is not None
        ]
        xs = [x for x, _ in placed]
        present = [g for _, g in placed]
        rates = [g["success_rate"] for g in present]
        rate_ax.errorbar(
            xs,
            rates,
            yerr=_errors(
                rates, [g["success_low"] for g in present], [g["success_high"] for g in present]
            ),
            marker="o",
            capsize=3,
            label=arm,
        )
        ratios = [(x, g["finish_ratio"]) for x, g in placed if g["finish_ratio"]["mean"]]
        kept = [(x, e) for x, e in ratios if _with_interval(e)]
        lonely += [(x, e) for x, e in ratios if not _with_interval(e)]
        if kept:
            ratio_ax.errorbar(
                [x for x, _ in kept],
                [e["mean"] for _, e in kept],
                yerr=_errors(
                    [e["mean"] for _, e in kept],
                    [e["low"] for _, e in kept],
                    [e["high"] for _, e in kept],
                ),
                marker="o",
                capsize=3,
                label=arm,
            )
    if limits is not None:
        ratio_ax.set_ylim(*limits)
    _lonely_points(ratio_ax, lonely, limits)
    for axis in (rate_ax, ratio_ax):
        axis.set_xticks(positions, sizes)
        axis.set_xlabel("maze size")
        axis.grid(alpha=0.3)
    rate_ax.set_ylabel("team success rate (95% Wilson CI)")
    rate_ax.set_ylim(-0.02, 1.05)
    ratio_ax.set_ylabel("finish / fastest possible finish (successes, 95% CI)")
    ratio_ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    rate_ax.legend(fontsize="small")
    figure.suptitle("Maze Escape: team success and finish ratio by maze size")
    return figure


def agimaze_plot(stages: Sequence[Summary], path: Path) -> Path | None:
    """Mean RHAE70 per stage and arm; None when there is nothing to plot."""
    if not stages:
        return None
    from matplotlib.figure import Figure

    labels = list(dict.fromkeys(f"{s['family']}/{s['stage']}" for s in stages))
    setups = len({s["setup"] for s in stages})
    arms: dict[str, dict[str, Summary]] = {}
    for stage in stages:
        arms.setdefault(_arm(stage, setups), {})[f"{stage['family']}/{stage['stage']}"] = stage
    figure = Figure(figsize=(max(8, 0.45 * len(labels) + 3), 4.8), layout="constrained")
    axis = figure.subplots()
    width = 0.8 / max(1, len(arms))
    for index, (arm, by_stage) in enumerate(arms.items()):
        xs, means, lows, highs, hatches = [], [], [], [], []
        for position, label in enumerate(labels):
            if label in by_stage and by_stage[label]["rhae70"]["mean"] is not None:
                estimate = by_stage[label]["rhae70"]
                xs.append(position + (index - (len(arms) - 1) / 2) * width)
                means.append(estimate["mean"])
                lows.append(estimate["low"])
                highs.append(estimate["high"])
                hatches.append("" if _with_interval(estimate) else "//")
        bars = axis.bar(
            xs, means, width=width, yerr=_errors(means, lows, highs), capsize=2, label=arm
        )
        for bar, hatch in zip(bars, hatches, strict=True):
            bar.set_hatch(hatch)  # hatched: no interval (one episode, or all equal)
    axis.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize="small")
    axis.set_ylabel("mean RHAE70 (95% bootstrap CI; hatched: no CI)")
    axis.set_ylim(0, 1.05)
    axis.grid(axis="y", alpha=0.3)
    axis.legend(fontsize="small")
    figure.suptitle("AGI Maze: RHAE70 by stage")
    figure.savefig(path, dpi=110)
    return path


def cost_plot(groups: Sequence[Summary], path: Path) -> Path | None:
    """Cost per success per arm (and size or stage); None when no group has a known cost."""
    known = [g for g in groups if g.get("cost_per_success") is not None]
    if not known:
        return None
    from matplotlib.figure import Figure

    setups = len({g["setup"] for g in known})
    labels = [
        f"{_arm(g, setups)} @ {g.get('size') or g.get('stage') or g.get('group', '')}"
        for g in known
    ]
    figure = Figure(figsize=(9, 0.35 * len(known) + 1.5), layout="constrained")
    axis = figure.subplots()
    axis.barh(range(len(known)), [g["cost_per_success"] for g in known])
    axis.set_yticks(range(len(known)), labels, fontsize="small")
    axis.set_xlabel("cost per success (USD; every game's cost, failures included)")
    axis.invert_yaxis()
    figure.savefig(path, dpi=110)
    return path


def write_plots(out: Path, summary: dict[str, Any]) -> tuple[list[Path], str | None]:
    """Every plot the summary supports; the reason when matplotlib is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        return [], "plots skipped: matplotlib is missing (pip install 'maze-envs[render]')"
    escape = summary.get("escape") or []
    stages = (summary.get("agimaze") or {}).get("stage") or []
    written = [
        escape_plot(escape, out / "escape_by_size.png"),
        agimaze_plot(stages, out / "agimaze_rhae70.png"),
        cost_plot([*escape, *stages], out / "cost_per_success.png"),
    ]
    return [p for p in written if p is not None], None
