"""The plots of a study report (matplotlib: ``pip install 'maze-envs[render]'``).

* ``arms.png``: team success (Wilson 95 %) and finish / fastest possible finish over every game
  (bootstrap 95 %) per arm;
* ``comparisons.png``: the paired differences (first minus second) of team success and of
  finish / fastest per comparison, with a line at 0;
* ``behaviour.png``: each of the study's behaviour measures per arm.

As in the runner's plots (:mod:`maze_envs.bench.plots`), a mean without an interval (one game,
or values all equal) is drawn hollow and labelled with its n, never as an exact value.
Without matplotlib :func:`write_plots` draws nothing and says why; the report stays complete.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Estimate = dict[str, Any]
INSTALL_HINT = "plots need matplotlib: pip install 'maze-envs[render]'"


def matplotlib_missing() -> str | None:
    """Why no plot can be drawn, or None."""
    return None if importlib.util.find_spec("matplotlib") else INSTALL_HINT


def _forest(
    axis: Any,
    labels: Sequence[str],
    values: Sequence[Estimate | None],
    title: str,
    scale: float = 1.0,
    zero: bool = False,
) -> None:
    """One row per label: the mean with its interval; hollow and labelled with n without one."""
    ys = list(range(len(labels)))[::-1]
    for y, value in zip(ys, values, strict=True):
        if not value or value.get("mean") is None:
            axis.annotate(
                "no value",
                (0, y),
                fontsize="x-small",
                color="grey",
                xycoords=("axes fraction", "data"),
            )
            continue
        mean = scale * value["mean"]
        if value.get("low") is not None and value.get("high") is not None:
            low, high = scale * value["low"], scale * value["high"]
            axis.errorbar(
                [mean],
                [y],
                xerr=[[mean - low], [high - mean]],
                fmt="o",
                color="tab:blue",
                capsize=3,
            )
        else:
            n = value.get("n")
            axis.plot([mean], [y], "o", markerfacecolor="none", color="grey")
            note = f"n={n}" if n == 1 else f"n={n}, all equal"
            axis.annotate(
                note, (mean, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small"
            )
    if zero:
        axis.axvline(0.0, color="black", linewidth=0.8)
    axis.set_yticks(ys, labels, fontsize="small")
    axis.set_title(title, fontsize="small")
    axis.grid(axis="x", alpha=0.3)


def _success(arm: dict[str, Any]) -> Estimate | None:
    if arm["success_rate"] is None:
        return None
    return {
        "mean": arm["success_rate"],
        "low": arm["success_low"],
        "high": arm["success_high"],
        "n": arm["games"],
    }


def _figure(rows: int, columns: int, labels: int) -> Any:
    from matplotlib.figure import Figure

    height = max(2.5, 0.45 * labels + 1.2)
    return Figure(figsize=(5.5 * columns, height * rows), layout="constrained")


def arms_figure(report: dict[str, Any]) -> Any:
    arms = report["arms"]
    labels = [f"{a['arm']} ({a['policy']})" for a in arms]
    figure = _figure(1, 2, len(labels))
    left, right = figure.subplots(1, 2, sharey=True)
    _forest(left, labels, [_success(a) for a in arms], "team success (%), Wilson 95%", scale=100)
    _forest(
        right,
        labels,
        [a["finish_ratio_censored"] for a in arms],
        "finish / fastest possible, all games (95%)",
    )
    return figure


def comparisons_figure(report: dict[str, Any]) -> Any:
    pairs = report["comparisons"]
    labels = [p["name"] for p in pairs]
    figure = _figure(1, 2, len(labels))
    left, right = figure.subplots(1, 2, sharey=True)
    _forest(
        left,
        labels,
        [p["success"] for p in pairs],
        "team success, paired difference (points)",
        scale=100,
        zero=True,
    )
    _forest(
        right,
        labels,
        [p["finish_ratio_censored"] for p in pairs],
        "finish / fastest, paired difference",
        zero=True,
    )
    return figure


def behaviour_figure(report: dict[str, Any]) -> Any:
    keys = set(report["study"]["metrics"])
    measures = [m for m in report["measures"] if m["key"] in keys]
    if not measures:
        return None
    arms = report["arms"]
    labels = [f"{a['arm']} ({a['policy']})" for a in arms]
    columns = min(3, len(measures))
    rows = -(-len(measures) // columns)
    figure = _figure(rows, columns, len(labels))
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for axis, measure in zip(axes, measures, strict=False):
        scale = 100.0 if measure["percent"] else 1.0
        title = measure["label"] + (" (%)" if measure["percent"] else "")
        _forest(axis, labels, [a["measures"].get(measure["key"]) for a in arms], title, scale=scale)
    for axis in axes[len(measures) :]:
        axis.set_visible(False)
    return figure


def write_plots(report: dict[str, Any], folder: Path) -> tuple[list[Path], str | None]:
    """Draw the plots into ``folder``: (the files written, why none were, if so)."""
    missing = matplotlib_missing()
    if missing is not None:
        return [], missing
    written = []
    for name, build in (
        ("arms.png", arms_figure),
        ("comparisons.png", comparisons_figure),
        ("behaviour.png", behaviour_figure),
    ):
        if name == "comparisons.png" and not report["comparisons"]:
            continue
        figure = build(report)
        if figure is None:
            continue
        path = folder / name
        figure.savefig(path, dpi=100)
        written.append(path)
    return written, None
