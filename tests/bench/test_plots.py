"""Issue 23: plots that tell the truth. Every panel draws an arm in the colour its figure's one
legend gives it, the legend names every arm drawn on any panel and sits outside the axes, and a
run without a played game writes no plot (and says so). Checked on matplotlib's figure objects
(artists, colours, legend handles), never on pixels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.results import summarize
from tests.bench.test_stats_results import agimaze_row, escape_row

pytest.importorskip("matplotlib")

from matplotlib.colors import to_rgba
from matplotlib.container import BarContainer, ErrorbarContainer

from maze_envs.bench import plots


def _drawn(axis: Any) -> dict[str, tuple[float, ...]]:
    """Label -> colour of every labelled series drawn on ``axis`` (error bars and bars)."""
    out: dict[str, tuple[float, ...]] = {}
    for container in axis.containers:
        label = container.get_label()
        if label.startswith("_"):  # matplotlib's unlabelled parts (a bar chart's error bars)
            continue
        if isinstance(container, ErrorbarContainer):
            colour = to_rgba(container.lines[0].get_color())
        elif isinstance(container, BarContainer):
            colour = to_rgba(container.patches[0].get_facecolor())
        else:
            continue
        assert label not in out, f"{label!r} drawn twice on one panel"
        out[label] = colour
    return out


def _legend(figure: Any) -> dict[str, tuple[float, ...]]:
    """Label -> colour of the figure's one legend."""
    assert len(figure.legends) == 1, "one legend for the whole figure"
    assert not any(axis.get_legend() for axis in figure.axes), "no legend inside a panel"
    (legend,) = figure.legends
    colours: dict[str, tuple[float, ...]] = {}
    for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
        get = getattr(handle, "get_color", None) or handle.get_facecolor
        colours[text.get_text()] = to_rgba(get())
    return colours


def assert_colours_agree(figure: Any) -> set[str]:
    """Every panel's series match the legend's colour for their label; the labels drawn."""
    legend = _legend(figure)
    seen: set[str] = set()
    for axis in figure.axes:
        for label, colour in _drawn(axis).items():
            assert label in legend, f"{label!r} is drawn but not in the legend"
            assert colour == legend[label], f"{label!r}: panel colour differs from the legend's"
            seen.add(label)
    assert seen == set(legend), "the legend names an arm no panel draws"
    return seen


def _outside(figure: Any) -> None:
    """The legend's box overlaps no panel's box (drawn, so the layout has run)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    (legend,) = figure.legends
    box = legend.get_window_extent(renderer)
    for axis in figure.axes:
        assert not box.overlaps(axis.get_window_extent(renderer)), "the legend covers a panel"


def escape_rows() -> list[dict[str, Any]]:
    """Two sizes, three arms; random never succeeds (so it has no finish ratio at all)."""
    rows = []
    for size in ("9x9", "13x13"):
        for seed in range(6):
            rows.append({**escape_row("s", "random", seed, False, 9.0), "size": size})
            rows.append(
                {**escape_row("s", "wall-follower-left", seed, True, 2.0 + seed), "size": size}
            )
            rows.append(
                {**escape_row("s", "explorer", seed, seed % 2 == 0, 3.0 + seed), "size": size}
            )
    return rows


def test_escape_panels_share_one_colour_per_arm_and_one_legend() -> None:
    """The issue's bug: the ratio panel restarted the colour cycle and had no legend, so
    wall-follower-left's ratios were drawn in the colour the only legend called random."""
    figure = plots.escape_figure(summarize(escape_rows())["escape"])
    seen = assert_colours_agree(figure)
    assert seen == {"random", "wall-follower-left", "explorer"}
    rate, ratio = figure.axes
    assert set(_drawn(rate)) == seen and set(_drawn(ratio)) == {"wall-follower-left", "explorer"}
    assert len(set(_legend(figure).values())) == 3  # three arms, three colours
    _outside(figure)


def test_a_lonely_point_is_drawn_in_its_arms_colour() -> None:
    rows = [{**escape_row("s", "random", 0, True, 7.0), "size": "9x9"}]
    rows += [{**escape_row("s", "random", s, False, 7.0), "size": "9x9"} for s in range(1, 5)]
    rows += [{**escape_row("s", "explorer", s, True, 2.0 + s), "size": "9x9"} for s in range(5)]
    figure = plots.escape_figure(summarize(rows)["escape"])
    legend = _legend(figure)
    ratio = figure.axes[1]
    hollow = [line for line in ratio.lines if line.get_markerfacecolor() == "none"]
    assert len(hollow) == 1 and to_rgba(hollow[0].get_color()) == legend["random"]


def test_agimaze_bars_and_legend_agree_and_the_legend_is_outside() -> None:
    rows = []
    for stage in ("STAGE-01", "STAGE-02", "STAGE-03"):
        for policy, steps in (("random", 60), ("explorer", 20), ("oracle", 9)):
            rows += [agimaze_row(policy, stage, steps + s, True) for s in range(3)]
    figure = plots.agimaze_figure(summarize(rows)["agimaze"]["stage"])
    assert assert_colours_agree(figure) == {"random", "explorer", "oracle (privileged)"}
    # the legend's swatches are plain: hatching means "no interval" on a bar, not an arm
    assert all(not handle.get_hatch() for handle in figure.legends[0].legend_handles)
    _outside(figure)


def test_many_arms_never_share_a_look() -> None:
    styles = plots.arm_colours(f"arm {n}" for n in range(25))
    assert len(set(styles.values())) == 25


def outage_rows() -> list[dict[str, Any]]:
    rows = [{**escape_row("s", "llm", s, False, 9.0), "status": "outage"} for s in range(3)]
    rows += [{**agimaze_row("llm", "STAGE-01", 70, False), "status": "outage"}]
    return rows


def test_a_run_without_a_played_game_writes_no_plot_and_says_so(tmp_path: Path) -> None:
    (tmp_path / plots.ESCAPE_PLOT).write_bytes(b"an earlier write's plot")
    written, notes = plots.write_plots(tmp_path, summarize(outage_rows()))
    assert written == [] and sorted(p.name for p in tmp_path.iterdir()) == []
    assert len(notes) == 2
    assert notes[0].startswith(f"{plots.ESCAPE_PLOT} not written: no Maze Escape game")
    assert "3 ended by a model outage" in notes[0]
    assert notes[1].startswith(f"{plots.AGIMAZE_PLOT} not written: no AGI Maze episode")


def test_the_issue_command_writes_a_plot_whose_colours_agree(tmp_path: Path) -> None:
    """`maze-envs bench --env escape --size 9 13 --policy random --policy explorer --seeds 0-9`
    (fewer seeds here): the figure it draws from its own summary agrees with its legend."""
    from maze_envs.bench.runner import RunOptions, run_experiment
    from maze_envs.bench.spec import Experiment

    experiment = Experiment.model_validate(
        {
            "name": "issue 23",
            "seeds": "0-3",
            "escape": [{"sizes": [9, 13], "policies": ["random", "explorer"]}],
        }
    )
    result = run_experiment(experiment, tmp_path, RunOptions(quiet=True, journal=False))
    assert [p.name for p in result.plots] == [plots.ESCAPE_PLOT]
    assert assert_colours_agree(plots.escape_figure(result.summary["escape"])) == {
        "random",
        "explorer",
    }
