"""One definition per metric (issue 13): the benchmark results (live rows and rows rescored from
the journal), ``maze-envs analyze``, the viewer and the decision replay report the same numbers
for the same games, on games with wall bumps, moves, STAYs, radio messages, fallback STAYs and
outage decisions; and those numbers are the documented formulas, counted by hand here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.analysis import analyze_journal
from maze_envs.bench.rowstore import row_from_journal
from maze_envs.bench.runner import RunOptions, RunResult, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal
from maze_envs.metrics import wall_move_rate
from maze_envs.view.agimaze_data import agimaze_game_data
from maze_envs.view.escape_data import escape_game_data

HERE = "tests.bench.metric_policies"
SHARED = ("decisions", "fallbacks", "outages", "wall_moves", "wall_move_rate")
BUMPS = {"bumped_interior_wall", "bumped_outer_brick"}


@pytest.fixture(scope="module")
def escape_run(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    experiment = Experiment.model_validate(
        {
            "name": "metrics",
            "seeds": "0-3",
            "escape": [
                {
                    "label": "mixed",
                    "sizes": [5, 7],
                    "max_turns": 40,
                    "policies": [
                        f"{HERE}:Mixed:records=true",
                        f"{HERE}:Mixed:outages=true,records=true",
                        {"team": ["explorer", f"{HERE}:Mixed:records=true", "random"]},
                    ],
                }
            ],
        }
    )
    out = tmp_path_factory.mktemp("metrics") / "run"
    return run_experiment(experiment, out, RunOptions(quiet=True, plots=False))


def _by_hand(journal: Journal, game_id: int) -> dict[str, Any]:
    """The documented formulas, counted straight from the journal rows."""
    tried = walls = stays = radio = decisions = fallbacks = outages = 0
    for turn in list(journal.turns(game_id))[1:]:
        for agent, event in turn.events.items():
            record = turn.decisions.get(agent) or {}
            status = record.get("status", "ok")
            decisions += 1
            fallbacks += status == "fallback"
            outages += status == "outage"
            if status != "ok":
                continue  # not the policy's play: in no behaviour metric
            result = event.get("move")
            tried += result in BUMPS or result in ("moved", "doorway")
            walls += result in BUMPS
            stays += result == "stayed"
            radio += event.get("radio") == "sent"
    return {
        "decisions": decisions,
        "fallbacks": fallbacks,
        "outages": outages,
        "wall_moves": walls,
        "wall_move_rate": walls / tried if tried else None,
        "stays": stays,
        "radio_messages": radio,
    }


def test_every_report_gives_the_same_escape_metrics(escape_run: RunResult) -> None:
    from llm_policies.apps.replay import full_game_summary

    rows = escape_run.rows
    assert escape_run.journal is not None and len(rows) == 24
    analysis = {
        m.run_key: m for m in analyze_journal(escape_run.journal).escape if m.agent == "team"
    }
    totals = {"fallbacks": 0, "outages": 0, "wall_moves": 0, "stays": 0, "radio_messages": 0}
    with Journal(escape_run.journal, readonly=True) as journal:
        for row in rows:
            game = journal.game(row["game_id"])
            by_hand = _by_hand(journal, row["game_id"])
            columns = {**by_hand, "stays": by_hand["stays"]}
            # the results row (live), and the same game scored again from the journal
            rescored = row_from_journal(journal, game)
            assert rescored is not None
            for source in (row, rescored):
                assert {k: source[k] for k in columns} == columns
            assert rescored["status"] == row["status"]
            for key in totals:
                totals[key] += by_hand[key]
            # maze-envs analyze: the game's team row
            team = analysis[row["run_key"]].row()
            assert {k: team[k] for k in SHARED} == {k: by_hand[k] for k in SHARED}
            assert (team["stays"], team["radio_sent"]) == (by_hand["stays"], row["radio_messages"])
            assert team["status"] == row["status"] and team["team_success"] == row["success"]
            assert (team["setup"], team["policy"]) == (row["setup"], row["policy"])
            # the viewer page's data
            page = escape_game_data(journal, row["game_id"])["metrics"]["team"]
            assert {k: page[k] for k in SHARED} == {k: by_hand[k] for k in SHARED}
            assert (page["stays"], page["radio_messages"]) == (
                by_hand["stays"],
                by_hand["radio_messages"],
            )
            # the decision replay's full-game summary (of model decisions: every agent's here,
            # except in the team arm, where only the middle agent's records look like a model's)
            if "+" in row["policy"]:
                continue
            replay = full_game_summary(journal, [row["game_id"]])
            assert (replay.decisions, replay.wall_moves) == (
                by_hand["decisions"],
                by_hand["wall_moves"],
            )
            assert replay.wall_move_rate == by_hand["wall_move_rate"]
            assert (replay.fallbacks, replay.outages) == (by_hand["fallbacks"], by_hand["outages"])
    # the games hold every case the definitions tell apart
    assert all(count > 0 for count in totals.values()), totals


def test_fallback_stays_are_no_stays(escape_run: RunResult) -> None:
    assert escape_run.journal is not None
    with Journal(escape_run.journal, readonly=True) as journal:
        row = next(r for r in escape_run.rows if r["fallbacks"] and r["outages"])
        chosen = fallback = 0
        for turn in list(journal.turns(row["game_id"]))[1:]:
            for agent, event in turn.events.items():
                status = (turn.decisions.get(agent) or {}).get("status", "ok")
                if event.get("move") == "stayed":
                    chosen += status == "ok"
                    fallback += status != "ok"
    assert fallback > 0  # fallback and outage STAYs were played...
    assert row["stays"] == chosen  # ...and are not counted
    analysis = analyze_journal(escape_run.journal, [row["game_id"]]).escape
    assert sum(m.stays for m in analysis if m.agent != "team") == chosen


def test_the_runner_stores_every_decision_status_in_the_journal(escape_run: RunResult) -> None:
    # Mixed leaves the status out of the record on odd turns: the runner adds it
    assert escape_run.journal is not None
    with Journal(escape_run.journal, readonly=True) as journal:
        statuses = [
            (record or {}).get("status")
            for row in escape_run.rows
            for turn in list(journal.turns(row["game_id"]))[1:]
            for record in turn.decisions.values()
        ]
    assert statuses.count("fallback") == sum(r["fallbacks"] for r in escape_run.rows)


def test_every_report_gives_the_same_agimaze_metrics(tmp_path: Path) -> None:
    experiment = Experiment.model_validate(
        {
            "seeds": "0-1",
            "agimaze": [
                {
                    "packs": ["TUTORIAL/STAGE-01", "TRAINING/S0-keys/STAGE-01/0000.json"],
                    "budget_factor": 1,
                    "policies": [f"{HERE}:MixedAgiMaze:outages=true"],
                }
            ],
        }
    )
    result = run_experiment(experiment, tmp_path / "run", RunOptions(quiet=True, plots=False))
    assert result.journal is not None
    analysis = {m.run_key: m.row() for m in analyze_journal(result.journal).agimaze}
    walls = 0
    with Journal(result.journal, readonly=True) as journal:
        for row in result.rows:
            rescored = row_from_journal(journal, journal.game(row["game_id"]))
            assert rescored is not None
            page = agimaze_game_data(journal, row["game_id"])["metrics"]["player"]
            for source in (rescored, analysis[row["run_key"]], page):
                assert {k: source[k] for k in SHARED} == {k: row[k] for k in SHARED}
            assert analysis[row["run_key"]]["status"] == row["status"] == rescored["status"]
            tried = page["moves_tried"]
            assert row["wall_move_rate"] == wall_move_rate(row["wall_moves"], tried)
            walls += row["wall_moves"]
    assert walls > 0 and any(r["fallbacks"] for r in result.rows)
