"""The runner end to end, in process: journal, rows, results, resume, errors, async, records."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import orjson
import pytest

from maze_envs.bench.rollout import play
from maze_envs.bench.runner import RunError, RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal
from tests.bench import ESCAPE_VERSION
from tests.bench.policies import SlowAsync

HERE = "tests.bench.policies"


def escape(policies: list[Any], seeds: str = "0-2", **setup: Any) -> Experiment:
    base = {"version": ESCAPE_VERSION, "sizes": [7], "max_turns": 60, "policies": policies}
    return Experiment.model_validate(
        {"name": "test", "seeds": seeds, "escape": [{**base, **setup}]}
    )


def games_by_key(path: Path) -> dict[str, Any]:
    with Journal(path, create=False) as journal:
        return {g.meta["run_key"]: g for g in journal.games() if g.meta}


def test_a_run_journals_every_game_once_with_its_meta_and_verifies(tmp_path: Path) -> None:
    exp = escape(["explorer", "oracle", "wall-follower-left"])
    result = run_experiment(exp, tmp_path / "run", RunOptions(verify=True, quiet=True))
    tasks = exp.tasks()
    assert (result.played, result.skipped) == (9, 0)
    assert [r["run_key"] for r in result.rows] == [t.run_key for t in tasks]
    assert result.verified is not None and all(r.status == "ok" for r in result.verified)
    games = games_by_key(tmp_path / "run" / "games.sqlite")
    assert sorted(games) == sorted(t.run_key for t in tasks)
    for row, task in zip(result.rows, tasks, strict=True):
        game = games[task.run_key]
        assert row["game_id"] == game.id and game.seed == task.seed
        assert game.env_id == f"maze_envs/MazeEscape-v{ESCAPE_VERSION}"
        assert game.meta["policies"] == dict.fromkeys("ABC", task.policy.name)
        assert game.outcome["success"] == row["success"]
        assert game.outcome["turns"] == row["turns"]
        assert row["fastest"] == game.outcome["fastest_possible_finish"]
    oracle = [r for r in result.rows if r["policy"] == "oracle"]
    assert all(r["privileged"] and r["success"] and r["finish_ratio"] == 1.0 for r in oracle)
    assert all(games[r["run_key"]].meta["privileged"] == ["A", "B", "C"] for r in oracle)
    assert not any(r["privileged"] for r in result.rows if r["policy"] != "oracle")
    lines = list(csv.DictReader((tmp_path / "run" / "results.csv").open()))
    assert len(lines) == 9 and lines[0]["policy"] == "explorer"
    data = orjson.loads((tmp_path / "run" / "results.json").read_bytes())
    assert data["experiment"]["name"] == "test" and len(data["games"]) == 9
    assert (
        f"| v{ESCAPE_VERSION} default max_turns=60 | 7x7 | oracle (privileged) |"
        in (tmp_path / "run" / "summary.md").read_text()
    )


def test_the_same_game_is_the_same_in_a_rerun(tmp_path: Path) -> None:
    exp = escape(["explorer", "random"], seeds="4")
    first = run_experiment(exp, tmp_path / "a", RunOptions(quiet=True, plots=False))
    again = run_experiment(exp, tmp_path / "b", RunOptions(quiet=True, plots=False, journal=False))
    ignore = {"elapsed_s", "game_id"}
    strip = [{k: v for k, v in r.items() if k not in ignore} for r in first.rows]
    assert strip == [{k: v for k, v in r.items() if k not in ignore} for r in again.rows]


def test_resume_skips_finished_games_and_plays_only_new_ones(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_experiment(escape(["explorer"], seeds="0-3"), out, RunOptions(quiet=True, plots=False))
    with pytest.raises(RunError, match="already holds a run; pass --resume"):
        run_experiment(escape(["explorer"], seeds="0-3"), out, RunOptions(quiet=True))
    again = run_experiment(
        escape(["explorer"], seeds="0-3"), out, RunOptions(resume=True, quiet=True, plots=False)
    )
    assert (again.played, again.skipped) == (0, 4)
    more = run_experiment(
        escape(["explorer"], seeds="0-5"), out, RunOptions(resume=True, quiet=True, plots=False)
    )
    assert (more.played, more.skipped) == (2, 4)
    assert len(more.rows) == 6
    with Journal(out / "games.sqlite", create=False) as journal:
        assert len(journal.game_ids()) == 6  # never a game twice
    fresh = run_experiment(
        escape(["explorer"], seeds="0"), out, RunOptions(fresh=True, quiet=True, plots=False)
    )
    assert fresh.played == 1
    with Journal(out / "games.sqlite", create=False) as journal:
        assert len(journal.game_ids()) == 1


def test_a_resume_that_plays_nothing_keeps_the_results_it_would_write_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    first = run_experiment(escape(["explorer"], seeds="0-2"), out, RunOptions(quiet=True))
    written = {p: p.stat().st_mtime_ns for p in [*first.paths.values(), *first.plots]}
    assert any(p.suffix == ".png" for p in written) or first.notes  # plots (or why not)
    again = run_experiment(
        escape(["explorer"], seeds="0-2"), out, RunOptions(resume=True, quiet=True)
    )
    assert again.played == 0 and again.paths == first.paths and again.plots == first.plots
    assert {p: p.stat().st_mtime_ns for p in written} == written  # not written again
    assert again.summary == first.summary
    # a removed file, or one more game, and everything is written again
    (out / "summary.md").unlink()
    run_experiment(escape(["explorer"], seeds="0-2"), out, RunOptions(resume=True, quiet=True))
    assert (out / "summary.md").is_file()
    more = run_experiment(
        escape(["explorer"], seeds="0-3"), out, RunOptions(resume=True, quiet=True)
    )
    assert more.played == 1
    data = orjson.loads((out / "results.json").read_bytes())
    assert len(data["games"]) == 4


def test_resume_scores_a_game_whose_row_was_lost(tmp_path: Path) -> None:
    out = tmp_path / "run"
    exp = escape(["explorer"], seeds="0-2")
    first = run_experiment(exp, out, RunOptions(quiet=True, plots=False))
    lines = (out / "rows.jsonl").read_bytes().splitlines()
    (out / "rows.jsonl").write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:40])  # cut short
    again = run_experiment(exp, out, RunOptions(resume=True, quiet=True, plots=False))
    assert again.played == 0 and any("scored again" in n for n in again.notes)
    keep = ("run_key", "game_id", "success", "turns", "finish_turn", "stays", "wall_moves")
    assert [{k: r[k] for k in keep} for r in again.rows] == [
        {k: r[k] for k in keep} for r in first.rows
    ]


def test_a_policy_that_raises_fails_its_game_and_the_run_goes_on(tmp_path: Path) -> None:
    exp = escape([f"{HERE}:RaiseOnTurn:turn=3", "explorer"], seeds="0-1")
    result = run_experiment(exp, tmp_path / "run", RunOptions(quiet=True, verify=True))
    broken = [r for r in result.rows if r["policy"].endswith("RaiseOnTurn:turn=3")]
    assert len(broken) == 2
    for row in broken:
        assert row["status"] == "error" and row["success"] is False
        assert row["error"] == "A: RuntimeError: the policy broke on turn 3"
        assert row["turns"] == 3
    assert all(r["status"] == "ok" for r in result.rows if r["policy"] == "explorer")
    assert result.verified is not None and result.verified_ok
    with Journal(tmp_path / "run" / "games.sqlite", create=False) as journal:
        game = journal.game(broken[0]["game_id"])
    assert game.outcome["aborted"] is True and game.outcome["stopped"] == "error"
    assert "the policy broke on turn 3" in game.outcome["error"]
    again = run_experiment(exp, tmp_path / "run", RunOptions(resume=True, quiet=True))
    assert again.played == 2  # errors are played again on resume, finished games are not


def test_an_action_the_env_refuses_is_the_policys_error(tmp_path: Path) -> None:
    row = play(escape([f"{HERE}:BadMove"], seeds="0").tasks()[0])
    assert row["status"] == "error" and "move" in row["error"] and row["turns"] == 0


def test_a_stop_request_ends_the_game_cleanly(tmp_path: Path) -> None:
    result = run_experiment(
        escape([f"{HERE}:StopAfter:turns=2"], seeds="0"), tmp_path / "run", RunOptions(quiet=True)
    )
    (row,) = result.rows
    assert row["status"] == "stopped" and row["turns"] == 2
    assert row["stop_reason"] == "A: cost cap reached" and row["error"] is None
    again = run_experiment(
        escape([f"{HERE}:StopAfter:turns=2"], seeds="0"),
        tmp_path / "run",
        RunOptions(resume=True, quiet=True),
    )
    assert again.played == 0  # a stopped game is a result


def test_decision_records_usage_and_harness_reach_the_journal_and_results(tmp_path: Path) -> None:
    result = run_experiment(
        escape([f"{HERE}:Recorded"], seeds="0", max_turns=5),
        tmp_path / "run",
        RunOptions(quiet=True, verify=True),
    )
    (row,) = result.rows
    assert result.verified_ok
    assert (row["decisions"], row["input_tokens"], row["output_tokens"]) == (15, 1500, 105)
    assert row["cost_usd"] == pytest.approx(0.015) and row["cost_status"] == "priced"
    assert row["quirks"] == {"code_fence": 15}
    with Journal(tmp_path / "run" / "games.sqlite", create=False) as journal:
        game = journal.game(row["game_id"])
        turns = list(journal.turns(row["game_id"]))
    assert game.meta["harness"]["A"] == {"prompt_version": "v-test", "temperature": 0.3}
    assert turns[0].decisions == {}
    assert turns[1].decisions["B"]["turn"] == 0 and turns[5].decisions["C"]["turn"] == 4
    group = result.summary["escape"][0]
    assert group["input_tokens"] == 1500 and group["quirks"] == {"code_fence": 15}
    assert "1,500/105" in (tmp_path / "run" / "summary.md").read_text()


def test_async_policies_are_awaited_together_and_games_overlap(tmp_path: Path) -> None:
    SlowAsync.most_in_flight = 0
    exp = escape([f"{HERE}:SlowAsync"], seeds="0-5", max_turns=4)
    result = run_experiment(exp, tmp_path / "run", RunOptions(quiet=True, concurrency=3))
    assert len(result.rows) == 6 and all(r["status"] == "ok" for r in result.rows)
    assert SlowAsync.most_in_flight == 9  # 3 agents of a turn x 3 games at once
    SlowAsync.most_in_flight = 0
    play(exp.tasks()[0])  # one game alone: the three agents of each turn still overlap
    assert SlowAsync.most_in_flight == 3


def test_policies_are_checked_before_any_game(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="no-such-policy"):
        run_experiment(escape(["explorer", "no-such-policy"]), tmp_path / "run", RunOptions())
    assert not (tmp_path / "run" / "games.sqlite").exists()


def test_a_file_is_not_an_output_folder(tmp_path: Path) -> None:
    path = tmp_path / "taken"
    path.write_text("")
    with pytest.raises(RunError, match="it is a file"):
        run_experiment(escape(["explorer"]), path, RunOptions(quiet=True))


def test_agimaze_games_score_like_the_benchmark(tmp_path: Path) -> None:
    exp = Experiment.model_validate(
        {"agimaze": {"packs": ["TUTORIAL/STAGE-02"], "policies": ["oracle", "explorer", "random"]}}
    )
    result = run_experiment(exp, tmp_path / "run", RunOptions(quiet=True, verify=True))
    assert result.verified_ok and len(result.rows) == 9
    for row in result.rows:
        assert (row["group"], row["family"], row["stage"]) == ("TUTORIAL", "TUTORIAL", "STAGE-02")
        assert row["env_id"] == "maze_envs/AgiMaze-v0" and row["status"] == "ok"
    oracle = [r for r in result.rows if r["policy"] == "oracle"]
    assert all(r["privileged"] and r["rhae70"] == 1.0 for r in oracle)
    assert all(r["steps"] == r["optimal_steps"] and r["good"] for r in oracle)
    assert all(r["solved"] for r in result.rows if r["policy"] == "explorer")
    stages = result.summary["agimaze"]["stage"]
    assert [(s["policy"], s["privileged"]) for s in stages] == [
        ("oracle", True),
        ("explorer", False),
        ("random", False),
    ]
    assert "| TUTORIAL | STAGE-02 |" in (tmp_path / "run" / "summary.md").read_text()


def test_a_runs_journal_stores_16_byte_hashes_and_verifies(tmp_path: Path) -> None:
    """The runner writes games of 16-byte hashes (docs/journal.md, "Hash sizes")."""
    result = run_experiment(
        escape(["explorer"], seeds="0-1"), tmp_path / "run", RunOptions(verify=True, quiet=True)
    )
    assert result.verified is not None and [r.status for r in result.verified] == ["ok", "ok"]
    with Journal(tmp_path / "run" / "games.sqlite", readonly=True) as journal:
        for game_id in journal.game_ids():
            rows = list(journal.raw_turns(game_id))
            assert rows and {(len(row[2]), len(row[3])) for row in rows} == {(16, 16)}
