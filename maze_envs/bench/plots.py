"""PNG plots of a run's aggregates (matplotlib: ``pip install 'maze-envs[render]'``).

* ``escape_by_size.png``: team success rate (Wilson 95 % intervals) and finish / fastest
  possible finish (bootstrap 95 % intervals, successful games) by maze size, one line per arm
  (setup and policy).
* ``agimaze_rhae70.png``: mean RHAE70 (bootstrap 95 % intervals) per stage, one series per arm.
* ``cost_per_success.png``: cost per success per arm and size or pack, when policies report cost.

**One colour per arm, one legend per figure.** An arm keeps its colour on every panel of a
figure (:func:`arm_colours`: the arms in first-seen order, matplotlib's ``C0``, ``C1``, ...
colours, the marker changing every ten arms), and each figure has one legend naming every arm
drawn on any of its panels, placed outside the axes so that it never covers data. A panel may
lack an arm (no successful game, so no finish ratio): the legend still names it once.

**No empty plots.** A plot is written only when it has something to draw: the games of a run
that outages or caps ended are not play, so a run without a played game writes no plot, and
:func:`write_plots` says which plot it left out and why (a stale file of an earlier write of
that name is removed).

A mean without an interval (one game, or games that all gave the same value: see
:mod:`maze_envs.bench.stats`) is drawn as a hollow marker in its arm's colour, labelled with its
``n``, and never sets an axis's range: the range comes from the means that have intervals, and
such a point outside it is drawn at the edge (an arrow marker) with its value written beside it.
So a single lucky game of an otherwise failing arm (a finish ratio of 73.7 over n = 1) cannot
flatten every other arm.

Figures are built with matplotlib's object API (``matplotlib.figure.Figure``), so plotting keeps
no global state and needs no display.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

Summary = dict[str, Any]

#: The plot files a run may write, by what they show.
ESCAPE_PLOT = "escape_by_size.png"
AGIMAZE_PLOT = "agimaze_rhae70.png"
COST_PLOT = "cost_per_success.png"
#: Markers of arms beyond the ten colours (arm 10 is C0 with a square, ...).
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_DPI = 110


def _size_key(size: str) -> tuple[int, int]:
    width, _, height = size.partition("x")
    try:
        return int(width), int(height or width)
    except ValueError:
        return (0, 0)


def _arm(group: Summary, setups: int) -> str:
    policy = group["policy"] + (" (privileged)" if group.get("privileged") else "")
    return f"{group['setup']}: {policy}" if setups > 1 else policy


def arm_colours(arms: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) per arm, in first-seen order: ``C0`` .. ``C9``, then the colours again
    with the next marker, so no two of the first 70 arms look alike.

    >>> arm_colours(["random", "explorer", "random"])
    {'random': ('C0', 'o'), 'explorer': ('C1', 'o')}
    """
    styles: dict[str, tuple[str, str]] = {}
    for arm in arms:
        if arm not in styles:
            index = len(styles)
            styles[arm] = (f"C{index % 10}", _MARKERS[(index // 10) % len(_MARKERS)])
    return styles


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
    axis: Any,
    points: Sequence[tuple[float, Summary, str]],
    limits: tuple[float, float] | None,
) -> None:
    """Means without an interval: hollow markers in their arm's colour, labelled with n,
    clipped to ``limits``."""
    for x, estimate, colour in points:
        mean, n = estimate["mean"], estimate.get("n")
        label = f"n={n}" if n == 1 else f"n={n}, all equal"
        y, marker = mean, "o"
        if limits is not None and not limits[0] <= mean <= limits[1]:
            above = mean > limits[1]
            y = limits[1] if above else limits[0]
            marker = "^" if above else "v"
            label = f"{mean:.3g} ({label})"
        axis.plot([x], [y], marker=marker, markerfacecolor="none", color=colour, clip_on=False)
        axis.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small")


def _figure_legend(figure: Any, handles: dict[str, Any], setups: int) -> None:
    """One legend for every arm of the figure, outside the axes (right of them)."""
    figure.legend(
        list(handles.values()),
        list(handles),
        loc="outside right upper",
        fontsize="small",
        title="setup: policy" if setups > 1 else "policy",
    )


def escape_figure(groups: Sequence[Summary]) -> Any:
    """Success rate and finish ratio by maze size per arm (a ``matplotlib.figure.Figure``):
    axes 0 the success rate, axes 1 the finish ratio; None when no group has a played game."""
    drawn = [g for g in groups if g.get("success_rate") is not None]
    if not drawn:
        return None
    from matplotlib.figure import Figure

    sizes = sorted({g["size"] for g in drawn}, key=_size_key)
    setups = len({g["setup"] for g in drawn})
    arms: dict[str, dict[str, Summary]] = {}
    for group in drawn:
        arms.setdefault(_arm(group, setups), {})[group["size"]] = group
    styles = arm_colours(arms)
    figure = Figure(figsize=(12, 4.5), layout="constrained")
    rate_ax, ratio_ax = figure.subplots(1, 2)
    positions = list(range(len(sizes)))
    spread = 0.08 * (len(arms) - 1)
    limits = _axis_range([g["finish_ratio"] for g in drawn if g["finish_ratio"]["mean"]])
    lonely: list[tuple[float, Summary, str]] = []
    handles: dict[str, Any] = {}
    for index, (arm, by_size) in enumerate(arms.items()):
        colour, marker = styles[arm]
        offset = (index * 0.08 - spread / 2) if len(arms) > 1 else 0.0
        placed = [
            (p + offset, by_size[s]) for p, s in zip(positions, sizes, strict=True) if s in by_size
        ]
        present = [g for _, g in placed]
        rates = [g["success_rate"] for g in present]
        handles[arm] = rate_ax.errorbar(
            [x for x, _ in placed],
            rates,
            yerr=_errors(
                rates, [g["success_low"] for g in present], [g["success_high"] for g in present]
            ),
            marker=marker,
            color=colour,
            capsize=3,
            label=arm,
        )
        ratios = [(x, g["finish_ratio"]) for x, g in placed if g["finish_ratio"]["mean"]]
        kept = [(x, e) for x, e in ratios if _with_interval(e)]
        lonely += [(x, e, colour) for x, e in ratios if not _with_interval(e)]
        if kept:
            ratio_ax.errorbar(
                [x for x, _ in kept],
                [e["mean"] for _, e in kept],
                yerr=_errors(
                    [e["mean"] for _, e in kept],
                    [e["low"] for _, e in kept],
                    [e["high"] for _, e in kept],
                ),
                marker=marker,
                color=colour,
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
    _figure_legend(figure, handles, setups)
    figure.suptitle("Maze Escape: team success and finish ratio by maze size")
    return figure


def agimaze_figure(stages: Sequence[Summary]) -> Any:
    """Mean RHAE70 per stage and arm (a ``matplotlib.figure.Figure``); None when no stage has a
    played episode."""
    drawn = [s for s in stages if s["rhae70"]["mean"] is not None]
    if not drawn:
        return None
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    labels = list(dict.fromkeys(f"{s['family']}/{s['stage']}" for s in drawn))
    setups = len({s["setup"] for s in drawn})
    arms: dict[str, dict[str, Summary]] = {}
    for stage in drawn:
        arms.setdefault(_arm(stage, setups), {})[f"{stage['family']}/{stage['stage']}"] = stage
    styles = arm_colours(arms)
    figure = Figure(figsize=(max(8, 0.45 * len(labels) + 3) + 2.5, 4.8), layout="constrained")
    axis = figure.subplots()
    width = 0.8 / max(1, len(arms))
    handles: dict[str, Any] = {}
    for index, (arm, by_stage) in enumerate(arms.items()):
        xs, means, lows, highs, hatches = [], [], [], [], []
        for position, label in enumerate(labels):
            if label in by_stage:
                estimate = by_stage[label]["rhae70"]
                xs.append(position + (index - (len(arms) - 1) / 2) * width)
                means.append(estimate["mean"])
                lows.append(estimate["low"])
                highs.append(estimate["high"])
                hatches.append("" if _with_interval(estimate) else "//")
        bars = axis.bar(
            xs,
            means,
            width=width,
            yerr=_errors(means, lows, highs),
            capsize=2,
            color=styles[arm][0],
            label=arm,
        )
        for bar, hatch in zip(bars, hatches, strict=True):
            bar.set_hatch(hatch)  # hatched: no interval (one episode, or all equal)
        # the legend's swatch is plain (a first bar's hatch would say "no interval" for all)
        handles[arm] = Patch(facecolor=styles[arm][0])
    axis.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize="small")
    axis.set_ylabel("mean RHAE70 (95% bootstrap CI; hatched: no CI)")
    axis.set_ylim(0, 1.05)
    axis.grid(axis="y", alpha=0.3)
    _figure_legend(figure, handles, setups)
    figure.suptitle("AGI Maze: RHAE70 by stage")
    return figure


def cost_figure(groups: Sequence[Summary]) -> Any:
    """Cost per success per arm (and size or stage), each bar in its arm's colour (a
    ``matplotlib.figure.Figure``); None when no group has a known cost."""
    known = [g for g in groups if g.get("cost_per_success") is not None]
    if not known:
        return None
    from matplotlib.figure import Figure

    setups = len({g["setup"] for g in known})
    arms = [_arm(g, setups) for g in known]
    styles = arm_colours(arms)
    labels = [
        f"{arm} @ {g.get('size') or g.get('stage') or g.get('group', '')}"
        for arm, g in zip(arms, known, strict=True)
    ]
    figure = Figure(figsize=(9, 0.35 * len(known) + 1.5), layout="constrained")
    axis = figure.subplots()
    axis.barh(
        range(len(known)),
        [g["cost_per_success"] for g in known],
        color=[styles[arm][0] for arm in arms],
    )
    axis.set_yticks(range(len(known)), labels, fontsize="small")
    axis.set_xlabel("cost per success (USD; every game's cost, failures included)")
    axis.invert_yaxis()
    return figure


def _not_played(groups: Sequence[Summary], what: str) -> str:
    outage = sum(int(g.get("outage_games") or 0) for g in groups)
    stopped = sum(int(g.get("stopped_games") or 0) for g in groups)
    return (
        f"no {what} was played to the end: {outage} ended by a model outage and {stopped} "
        "stopped by a cap, which are counted apart, not as play"
    )


def write_plots(out: Path, summary: dict[str, Any]) -> tuple[list[Path], list[str]]:
    """Every plot the summary supports, and a note for each plot left out (why); the one note
    without matplotlib says how to install it."""
    if importlib.util.find_spec("matplotlib") is None:
        return [], ["plots skipped: matplotlib is missing (pip install 'maze-envs[render]')"]
    escape = summary.get("escape") or []
    stages = (summary.get("agimaze") or {}).get("stage") or []
    plans = (
        (ESCAPE_PLOT, escape, escape_figure(escape), "Maze Escape game"),
        (AGIMAZE_PLOT, stages, agimaze_figure(stages), "AGI Maze episode"),
        (COST_PLOT, [*escape, *stages], cost_figure([*escape, *stages]), ""),
    )
    written, notes = [], []
    for name, groups, figure, what in plans:
        path = out / name
        if figure is not None:
            figure.savefig(path, dpi=_DPI)
            written.append(path)
            continue
        path.unlink(missing_ok=True)  # an earlier write's plot no longer stands
        if groups and what:
            notes.append(f"{name} not written: {_not_played(groups, what)}")
    return written, notes
