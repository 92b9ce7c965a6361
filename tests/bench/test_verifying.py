"""Games verified in the workers as they end (:mod:`maze_envs.bench.verifying`): the run's verdicts
are those of ``maze-envs verify`` of its journal, and a copy unlike what the worker verified is
verified from the journal instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maze_envs.bench.command import main as bench_main
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.bench.verifying import WorkerVerdicts, stored_digest, verify_played
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal
from tests.bench import ESCAPE_VERSION
from tests.journal.tamper import edit_turn


def _experiment() -> Experiment:
    return Experiment.model_validate(
        {
            "name": "test",
            "seeds": "0-2",
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [7],
                    "max_turns": 40,
                    "policies": ["explorer", "random"],
                }
            ],
            "agimaze": [{"packs": ["TUTORIAL/STAGE-02"], "policies": ["explorer"]}],
        }
    )


def _verdicts(reports: Any) -> list[tuple[int, str, int, bool, Any]]:
    return [(r.game_id, r.status, r.turns_verified, r.replayed, r.problem) for r in reports]


def test_a_process_run_verifies_each_game_in_its_worker_as_maze_envs_verify_does(
    tmp_path: Path,
) -> None:
    options = RunOptions(executor="process", workers=2, verify=True, quiet=True, plots=False)
    result = run_experiment(_experiment(), tmp_path / "run", options)
    journal = tmp_path / "run" / "games.sqlite"
    games = len(result.rows)
    assert games > 6 and result.verified is not None and len(result.verified) == games
    assert result.verified_in_workers == games  # none was left for a pass after the games
    assert _verdicts(result.verified) == _verdicts(verify_journal(journal, workers=1))
    assert all(report.status == "ok" for report in result.verified)


def test_the_report_says_where_the_games_were_verified(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "run"
    argv = ["--env", "escape", "--size", "7", "--policy", "explorer", "--seeds", "0-1"]
    status = bench_main([*argv, "--executor", "process", "--verify", "--out", str(out)])
    assert status == 0
    printed = capsys.readouterr().out
    assert "verify: 2 of 2 games replayed and verified (2 by the worker that played it" in printed


def _one_game(path: Path) -> int:
    options = RunOptions(verify=False, quiet=True, plots=False)
    experiment = Experiment.model_validate(
        {
            "seeds": "0",
            "escape": [
                {"version": ESCAPE_VERSION, "sizes": [7], "max_turns": 30, "policies": ["random"]}
            ],
        }
    )
    result = run_experiment(experiment, path, options)
    return int(result.rows[0]["game_id"])


def test_a_verdict_is_adopted_only_for_a_byte_for_byte_copy(tmp_path: Path) -> None:
    game_id = _one_game(tmp_path / "worker")
    with Journal(tmp_path / "worker" / "games.sqlite") as shard:
        verdict = verify_played(shard, game_id)
        rows = shard.stored_game(game_id)
    assert verdict.report.status == "ok" and verdict.digest == stored_digest(rows)
    copies = tmp_path / "copies.sqlite"
    with Journal(copies, hash_size=16) as journal:
        exact = journal.add_stored_game(rows)
        edited = journal.add_stored_game(rows)
    # the second copy: a byte more in the stored events of turn 3 than the worker verified
    edit_turn(copies, edited, 3, "events", lambda text: text + " ")
    verdicts = WorkerVerdicts()
    with Journal(copies) as journal:
        verdicts.adopt(journal, exact, verdict)
        verdicts.adopt(journal, edited, verdict)
    assert set(verdicts.reports) == {exact} and verdicts.differed == 1
    assert verdicts.reports[exact].game_id == exact
    checked_after: list[list[int]] = []

    def verify(path: Any, ids: list[int]) -> Any:
        checked_after.append(ids)
        return verify_journal(path, ids, workers=1)

    reports = verdicts.complete(copies, verify)
    assert checked_after == [[edited]]  # only the copy that differs is replayed again
    assert [(r.game_id, r.status) for r in reports] == [(exact, "ok"), (edited, "failed")]
    assert _verdicts(reports) == _verdicts(verify_journal(copies, workers=1))
