"""Every metric is shown by every reader its row declares, with its heading, legend and format.

One row of ``maze_envs.metrics.METRICS`` per metric (issue 26): for each reader a row names
(the runner's tallies, the results' aggregates, the Markdown report, ``maze-envs analyze``, the
studies' measures, the viewer, the decision replay report) the reader is run and the row's
column, heading and legend are looked for in what it produced. A metric function (marked
``metric_function``) without a row, a row without a function, or a row a reader drops fails
naming it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import maze_envs.bench.analysis
import maze_envs.metrics
from maze_envs import maze_escape_v0
from maze_envs.bench.analysis import analyze_journal, render, write_csv
from maze_envs.bench.metrics import AgiMazeTally, EscapeTally, UsageTally, agimaze_scores
from maze_envs.bench.report import markdown
from maze_envs.bench.results import summarize
from maze_envs.metrics import (
    METRICS,
    READERS,
    Metric,
    Step,
    decision_metrics,
    is_metric_function,
    metric_function,
    metrics_for,
)
from maze_envs.studies.measures import MEASURES
from maze_envs.view.decisions import metric_lines
from tests.view.journals import record_agimaze
from tests.view.test_agimaze_page import corridor

KINDS = ("escape", "agimaze")


def _ids(rows: tuple[Metric, ...]) -> list[str]:
    return [f"{m.name}[{','.join(m.kinds)}]" for m in rows]


def _marked_functions() -> dict[str, Any]:
    """Every function marked as a metric's definition in the metric modules, by import string."""
    found: dict[str, Any] = {}
    for package in (maze_envs.metrics, maze_envs.bench.analysis):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                if is_metric_function(obj) and obj.__module__ == module.__name__:
                    found[f"{module.__name__}:{name}"] = obj
    return found


def _without_row(marked: dict[str, Any], rows: tuple[Metric, ...]) -> list[str]:
    return sorted(set(marked) - {m.function for m in rows})


def test_every_metric_function_has_a_row_and_every_row_a_function() -> None:
    marked = _marked_functions()
    assert marked, "no metric function found: the marker is not seen"
    without_row = _without_row(marked, METRICS)
    assert not without_row, f"metric functions without a row of METRICS: {without_row}"
    for row in METRICS:
        function = row.compute  # imports it: a row naming a missing function fails here
        assert is_metric_function(function), f"{row.name}: {row.function} is not a metric function"
        assert inspect.getdoc(function), f"{row.name}: {row.function} has no docstring"
        assert row.legend.endswith((".", ")")), f"{row.name}: legend {row.legend!r}"
        assert row.readers, f"{row.name}: no reader shows it"


def test_a_function_without_a_row_and_a_row_without_a_function_are_named() -> None:
    @metric_function
    def toy(game: Any) -> int:
        """Toy: nothing."""
        return 0

    marked = {**_marked_functions(), "tests.toy:toy": toy}
    assert _without_row(marked, METRICS) == ["tests.toy:toy"]
    missing = Metric("toy", "maze_envs.metrics.decisions:no_such_metric", "toy", "toy")
    with pytest.raises(AttributeError, match="no_such_metric"):
        _ = missing.compute


def test_one_row_per_metric_and_game() -> None:
    seen: dict[tuple[str, str], str] = {}
    for row in METRICS:
        for kind in row.kinds:
            key = (row.name, kind)
            assert key not in seen, f"two rows for {row.name} ({kind}): {seen[key]}, {row.function}"
            seen[key] = row.function


def test_a_row_names_its_reader_and_function_or_fails_clearly() -> None:
    with pytest.raises(ValueError, match=r"unknown reader.*the readers are"):
        Metric("x", "maze_envs.metrics.decisions:stays", "x", "x", readers=("nowhere",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not 'module:function'"):
        Metric("x", "maze_envs.metrics.decisions.stays", "x", "x")
    assert set(READERS) == {r for m in METRICS for r in m.readers}


# --- the readers -------------------------------------------------------------------------------


def _escape_tally_row() -> dict[str, Any]:
    tally = EscapeTally(("A", "B"))
    tally.add_turn({"A": {"move": "moved", "radio": "sent"}, "B": {"move": "bumped_outer_brick"}})
    tally.add_turn({"A": {"move": "stayed"}, "B": {"move": "moved"}}, {"B": "fallback"})
    outcome = {
        "success": True,
        "turns": 2,
        "first_visit_turn": {"A": 2, "B": 2},
        "fastest_possible_finish": 2,
    }
    return {**tally.finish(outcome, {"A": "x", "B": ""}, max_turns=9), **UsageTally().row()}


def _agimaze_tally_row() -> dict[str, Any]:
    tally = AgiMazeTally()
    tally.add_step("up", ["bumped_wall"], True)
    scores = agimaze_scores(steps=1, solved=False, max_steps=10, soft_good_steps=5, budget=50)
    return {**scores, **tally.metrics(), **UsageTally().row()}


@pytest.mark.parametrize("kind", KINDS)
def test_the_tallies_fill_every_tally_column(kind: str) -> None:
    row = _escape_tally_row() if kind == "escape" else _agimaze_tally_row()
    missing = [m.name for m in metrics_for("tally", kind) if m.column("tally") not in row]  # type: ignore[arg-type]
    assert not missing, f"the {kind} tally's row lacks {missing}"


def _results_rows() -> list[dict[str, Any]]:
    usage = {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.0, "cost_status": "local"}
    escape = {
        "env": "escape",
        "case": "9x9",
        "size": "9x9",
        "setup": "s",
        "policy": "p",
        "seed": 0,
        "status": "ok",
        **_escape_tally_row(),
        **usage,
    }
    agimaze = {
        "env": "agimaze",
        "setup": "packs",
        "policy": "p",
        "seed": 0,
        "status": "ok",
        "group": "TRAINING",
        "family": "S0-keys",
        "stage": "STAGE-01",
        "size": "3x3",
        **_agimaze_tally_row(),
        **usage,
    }
    outage = {**escape, "seed": 1, "status": "outage"}
    return [escape, outage, agimaze]


def test_the_results_aggregate_every_results_column() -> None:
    summary = summarize(_results_rows())
    (escape,) = summary["escape"]
    agimaze = summary["agimaze"]["stage"][0]
    for kind, group in (("escape", escape), ("agimaze", agimaze)):
        for m in metrics_for("results", kind):  # type: ignore[arg-type]
            column = m.column("results")
            if m.interval == "wilson":  # a rate of successes: named after the rate it extends
                assert any(k.endswith("_with_excluded") for k in group), (kind, m.name)
                continue
            assert column in group, f"the {kind} results lack {m.name}"
            if m.interval == "bootstrap":
                assert {"mean", "low", "high"} <= set(group[column]), (kind, m.name)


def test_the_report_shows_every_report_metric_with_its_heading_and_legend() -> None:
    text = markdown({"name": "x"}, summarize(_results_rows()))
    headers = [line for line in text.splitlines() if line.startswith("| ")]
    for kind in KINDS:
        for m in metrics_for("report", kind):  # type: ignore[arg-type]
            label = m.label if kind == "escape" else m.label.replace("success", "solved")
            assert any(label in line or m.label in line for line in headers), (
                f"the report's {kind} table has no column {m.label!r} ({m.name})"
            )
    for m in metrics_for("report", "escape"):
        if m.interval == "bootstrap" or m.name in ("history_trims", "cap_breaches"):
            assert m.plain_legend in text, f"the report does not define {m.name}"


@pytest.fixture(scope="module")
def analysis(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("metrics") / "games.sqlite"
    env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=6, journal=path)
    env.reset(seed=3)
    while env.agents:
        env.step({a: env.action_space(a).sample() for a in env.agents})
    env.close()
    record_agimaze(path, {"labyrinth": corridor()}, ["left", "right", "right", "right"])
    return analyze_journal(path)


def test_analyze_shows_every_metric_with_its_header_format_and_legend(
    analysis: Any, tmp_path: Path
) -> None:
    text = render(analysis)
    rows = {"escape": analysis.escape[0].row(), "agimaze": analysis.agimaze[0].row()}
    for kind in KINDS:
        for m in metrics_for("analyze", kind):  # type: ignore[arg-type]
            assert m.column("analyze") in rows[kind], f"the {kind} analysis lacks {m.name}"
            m.format(rows[kind][m.column("analyze")])  # its format takes its values
            if kind in m.in_text:
                assert f" {m.header} " in text or f" {m.header}\n" in text, (kind, m.header)
                assert m.plain_legend in text, f"analyze's legend does not define {m.name}"
    out = tmp_path / "rows.csv"
    write_csv(analysis, out)
    header = out.read_text(encoding="utf-8").splitlines()[0].split(",")
    missing = [m.name for m in metrics_for("analyze") if m.column("analyze") not in header]
    assert not missing, f"the CSV lacks {missing}"


def test_studies_measure_every_studies_metric_by_its_legend() -> None:
    for m in metrics_for("studies"):
        column = m.column("studies")
        measures = [x for x in MEASURES.values() if column in (x.key, x.numerator, x.denominator)]
        assert measures, f"no study measure reads {m.name} ({column})"
        for measure in measures:
            if column in (measure.key, measure.numerator) and measure.key in (m.name, column):
                assert measure.definition() == m.legend, measure.key


def test_the_viewer_shows_every_viewer_metric_with_its_label_and_format() -> None:
    steps = [Step("move"), Step("wall"), Step("stay", "fallback"), Step("stay", "outage")]
    counts = decision_metrics(steps)
    (line,) = metric_lines({"A": counts})
    for m in metrics_for("viewer"):
        assert m.column("viewer") in counts, f"the viewer's metrics lack {m.name}"
        assert m.label.removesuffix("s") in line, f"the viewer's line lacks {m.label!r}: {line}"
        if m.unit == "share":
            assert m.format(counts[m.column("viewer")]) in line, (m.name, line)


def test_the_replay_report_shows_every_replay_metric() -> None:
    from llm_policies.apps.replay_report import FullGameSummary, ReplayReport

    summary = FullGameSummary(journal="x", decisions=3, moves_tried=2, wall_moves=1)
    report = ReplayReport("x", "m", {}, [], full_games=summary)
    header = report.to_markdown().splitlines()[4]
    for m in metrics_for("replay"):
        assert m.column("replay") in summary.to_json(), f"the replay summary lacks {m.name}"
        assert m.label in header, f"the replay table has no column {m.label!r}"
