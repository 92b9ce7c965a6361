"""Outages are not play (issue 13): a run whose model could not be reached exits non-zero and
says which model and endpoint failed and how many decisions were outages; games an outage touched
(status ``outage``) or a cap stopped (``stopped``) are counted apart from the games played, in
the rates, intervals and tables, and a resume plays the outage games again."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.analysis import analyze_journal
from maze_envs.bench.command import EXIT_OUTAGE, main
from maze_envs.bench.results import escape_summary, paired_difference
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.verify import verify_journal
from tests.bench.metric_policies import ERROR, MODEL

HERE = "tests.bench.metric_policies"


def _escape(policies: list[Any], seeds: str = "0-2", turns: int = 8) -> Experiment:
    setup = {"sizes": [5], "max_turns": turns, "policies": policies}
    return Experiment.model_validate({"name": "outages", "seeds": seeds, "escape": [setup]})


def test_an_unreachable_model_exits_non_zero_naming_model_and_outages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["--env", "escape", "--size", "5", "--max-turns", "4", "--seeds", "0-1"]
    code = main([*args, "--policy", f"{HERE}:Unreachable", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == EXIT_OUTAGE == 4
    assert f"model {MODEL} at its default endpoint could not be reached" in captured.err
    assert "24 of 24 decisions in 2 game(s) were outages" in captured.err
    assert ERROR in captured.err and "--resume" in captured.err
    # not counted as two team failures: no game was played
    assert "2 touched by a model outage" in captured.out
    summary = (out / "summary.md").read_text()
    assert "| 2 (2 outage) |" in summary and "0/0" not in summary
    assert "'excluded' games" in summary


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # nothing listens there once closed


def test_no_server_at_the_endpoint_is_an_outage_not_a_team_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pydantic_ai", reason="needs the llm extra")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    spec = f"openai-chat:gpt-4o-mini:base_url={url},max_consecutive_fallbacks=2"
    out = tmp_path / "run"
    code = main(["--env", "escape", "--size", "5", "--policy", spec, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == EXIT_OUTAGE
    assert f"model openai-chat:gpt-4o-mini at {url} could not be reached" in err
    assert "6 of 6 decisions in 1 game(s) were outages" in err
    # the server was asked once before the first game: no decision spent the retry budget
    assert "could not be reached when the run began" in err
    journal = out / "games.sqlite"
    assert all(report.ok for report in verify_journal(journal))
    rows = {m.agent: m for m in analyze_journal(journal).escape}
    team = rows["team"]
    assert team.status == "outage" and team.outages == 6
    assert team.stays == 0 and team.moves_tried == 0  # the fallback STAYs are not the model's


def test_outage_and_stopped_games_are_counted_apart_from_the_games_played() -> None:
    def row(seed: int, success: bool, status: str = "ok") -> dict[str, Any]:
        return {
            "env": "escape",
            "setup": "s",
            "size": "9x9",
            "policy": "llm",
            "seed": seed,
            "status": status,
            "success": success,
            "finish_turn": 40 if success else None,
            "finish_ratio": 2.0 if success else None,
            "finish_ratio_censored": 2.0 if success else 30.0,
            "stays": 0 if status == "outage" else 3,
        }

    rows = [row(0, True), row(1, False), row(2, False, "outage"), row(3, False, "stopped")]
    (group,) = escape_summary(rows)
    assert (group["games"], group["successes"], group["success_rate"]) == (2, 1, 0.5)
    assert (group["excluded"], group["outage_games"], group["stopped_games"]) == (2, 1, 1)
    assert group["finish_ratio_censored"]["n"] == 2 and group["stays"]["mean"] == 3.0
    # paired comparisons leave out the pairs an outage or a cap touched
    other = [{**r, "policy": "explorer", "status": "ok"} for r in rows]
    diffs = paired_difference([*rows, *other], ("s", "llm"), ("s", "explorer"), "stays")
    assert diffs["9x9"].n == 2


def test_the_tables_give_the_rate_counting_excluded_games_as_failures_beside_it() -> None:
    from maze_envs.bench.report import escape_table

    def row(seed: int, success: bool, status: str = "ok") -> dict[str, Any]:
        return {
            "env": "escape",
            "setup": "s",
            "size": "9x9",
            "policy": "llm",
            "seed": seed,
            "status": status,
            "success": success,
            "finish_turn": 40 if success else None,
            "finish_ratio": 2.0 if success else None,
            "finish_ratio_censored": 2.0 if success else 30.0,
        }

    rows = [row(0, True), row(1, True), row(2, False, "outage"), row(3, False, "stopped")]
    (group,) = escape_summary(rows)
    assert group["success_rate"] == 1.0  # over the games played
    assert group["success_rate_with_excluded"] == 0.5  # the excluded games as failures
    assert (
        0 < group["success_rate_with_excluded_low"] < 0.5 < group["success_rate_with_excluded_high"]
    )
    table = escape_table([group])
    assert "team success, excluded as failures (95% CI)" in table
    assert "| 2/2 = 100% [" in table and "| 2/4 = 50% [" in table


def test_a_cap_that_stops_a_game_is_no_failure_and_resume_plays_outage_games_again(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "server-is-back"
    exp = _escape([f"{HERE}:Unreachable:marker={marker}", "tests.bench.policies:StopAfter"])
    out = tmp_path / "run"
    first = run_experiment(exp, out, RunOptions(quiet=True, plots=False))
    statuses = sorted({(r["policy"].split(":")[1], r["status"]) for r in first.rows})
    assert statuses == [("StopAfter", "stopped"), ("Unreachable", "outage")]
    for group in first.summary["escape"]:
        assert group["games"] == 0 and group["success_rate"] is None and group["excluded"] == 3
    marker.write_text("up")
    # a plain resume keeps the outage games as they are (reported apart)
    kept = run_experiment(exp, out, RunOptions(resume=True, quiet=True, plots=False))
    assert kept.played == 0
    options = RunOptions(resume=True, retry_outages=True, quiet=True, plots=False)
    again = run_experiment(exp, out, options)
    assert again.played == 3  # the outage games, not the stopped ones (a cap is a result)
    llm = [r for r in again.rows if "Unreachable" in r["policy"]]
    assert [r["status"] for r in llm] == ["ok"] * 3 and not any(r["outages"] for r in llm)
    assert all(report.ok for report in verify_journal(out / "games.sqlite"))


def test_an_all_outage_run_writes_no_plot_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23: such a run wrote an empty escape_by_size.png."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "run"
    args = ["--env", "escape", "--size", "5", "--max-turns", "4", "--seeds", "0-1"]
    assert main([*args, "--policy", f"{HERE}:Unreachable", "--out", str(out)]) == EXIT_OUTAGE
    printed = capsys.readouterr().out
    assert not list(out.glob("*.png"))
    assert "note: escape_by_size.png not written: no Maze Escape game was played to the end: " in (
        printed
    )
    assert "2 ended by a model outage" in printed
    assert (out / "index.html").is_file()  # the front page is written all the same
