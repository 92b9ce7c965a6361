"""Labyrinth sets and pack versions in ``maze-envs bench``: specs, games, rows, tables, resume."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError

from maze_envs.agimaze.packs import list_bundles, resolve_pack_path, version_root
from maze_envs.agimaze.set_env import TUTORIAL_PATHS
from maze_envs.bench.command import main
from maze_envs.bench.metrics import agimaze_set_scores
from maze_envs.bench.rollout import play
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.setresults import agimaze_set_summary, agimaze_set_tables
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal

TARGET = "CLASSIC/EASY/keys/4x4/0005.json"


def sets(**setup: object) -> Experiment:
    return Experiment.model_validate(
        {"name": "sets", "seeds": "0-1", "agimaze_set": [{"policies": ["explorer"], **setup}]}
    )


def test_targets_expand_into_one_set_each_after_the_tutorials() -> None:
    exp = sets(targets=["CLASSIC/EASY/keys/4x4", "EXTENDED/boat/STAGE-01-4x4/0009.json"])
    tasks = exp.tasks()
    cases = {task.case.target: task.case for task in tasks}
    assert len(tasks) == 2 * 11
    assert sorted(cases) == sorted(
        [*list_bundles("CLASSIC/EASY/keys/4x4/"), "EXTENDED/boat/STAGE-01-4x4/0009.json"]
    )
    case = cases[TARGET]
    assert case.paths == (*TUTORIAL_PATHS, TARGET) and case.kind == "agimaze-set"
    assert (case.group, case.size, case.env_id) == ("CLASSIC", "4x4", "maze_envs/AgiMazeSet-v0")
    assert case.hard_max_steps == resolve_pack_path(TARGET)[1].labyrinth.max_steps
    alone = sets(targets=[TARGET], tutorials=[]).tasks()[0].case
    assert alone.paths == (TARGET,)
    explicit = sets(paths=["TUTORIAL/STAGE-04/0001.json", TARGET]).tasks()
    assert explicit[0].case.paths == ("TUTORIAL/STAGE-04/0001.json", TARGET)
    # the run key follows the set, so another curriculum is another game
    assert (
        len(
            {
                t.run_key
                for t in [
                    *tasks[:1],
                    *explicit[:1],
                    *sets(targets=[TARGET], tutorials=[]).tasks()[:1],
                ]
            }
        )
        == 3
    )


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({}, "needs targets"),
        ({"targets": [TARGET], "paths": [TARGET]}, "not both"),
        ({"paths": [TARGET], "tutorials": []}, "tutorials go with targets"),
        ({"targets": ["CLASSIC/NOPE"]}, "no pack entry"),
        ({"targets": [TARGET], "pack_version": "nope"}, "no pack version"),
    ],
)
def test_bad_set_setups_say_what_is_wrong(setup: dict[str, object], message: str) -> None:
    with pytest.raises((ValidationError, ValueError), match=message):
        sets(**setup).tasks()


def test_a_set_game_is_scored_on_its_target_with_every_labyrinth_kept() -> None:
    task = sets(targets=[TARGET]).tasks()[0]
    row = play(task)
    assert row["status"] == "ok" and row["env"] == "agimaze-set" and row["case"] == TARGET
    labyrinths = row["labyrinths"]
    assert [lab["name"] for lab in labyrinths] == [*TUTORIAL_PATHS, TARGET]
    target = labyrinths[-1]
    assert row["solved"] == target["solved"] and row["steps"] == target["steps"]
    assert row["rhae70"] == target["rhae70"] and row["max_steps"] == target["max_steps"]
    assert row["set_steps"] == sum(lab["steps"] for lab in labyrinths)
    assert row["set_solved"] == sum(lab["solved"] for lab in labyrinths) == 8  # the explorer
    assert row["group"] == "CLASSIC" and row["optimal_steps"] is not None


def test_an_unfinished_set_scores_nothing_for_its_target() -> None:
    first = {"name": "T", "steps": 9, "max_steps": 30, "budget": 150, "solved": True, "rhae": 1.0}
    scores = agimaze_set_scores([first], count=2, soft_good_steps=None)
    assert scores["solved"] is False and scores["rhae70"] == 0.0 and scores["steps"] == 0
    assert scores["set_steps"] == 9 and scores["set_solved"] == 1 and scores["set_labyrinths"] == 2


def test_set_summaries_count_outage_and_stopped_sets_apart() -> None:
    def row(solved: bool, status: str) -> dict[str, object]:
        lab = {"name": TARGET, "steps": 10, "solved": solved, "rhae70": float(solved)}
        return {
            "env": "agimaze-set",
            "setup": "s",
            "policy": "p",
            "status": status,
            "solved": solved,
            "x1_solved": solved,
            "rhae70": float(solved),
            "set_steps": 10,
            "labyrinths": [lab],
        }

    rows = [row(True, "ok"), row(False, "outage"), row(False, "stopped")]
    (summary,) = agimaze_set_summary(rows)
    assert summary["sets"] == 1 and summary["solved"] == 1 and summary["solved_rate"] == 1.0
    assert (summary["excluded"], summary["outage_games"], summary["stopped_games"]) == (2, 1, 1)
    assert summary["labyrinths"][0]["played"] == 1
    table = agimaze_set_tables([summary])[0]
    assert "2 (1 outage, 1 stopped)" in table and "n=1, no interval" in table


def test_sets_run_journal_verify_resume_and_report(tmp_path: Path) -> None:
    exp = Experiment.model_validate(
        {
            "name": "sets",
            "seeds": "0-1",
            "agimaze_set": [
                {"targets": [TARGET], "policies": ["explorer", "random"], "budget_factor": 2}
            ],
        }
    )
    out = tmp_path / "run"
    result = run_experiment(exp, out, RunOptions(verify=True, quiet=True))
    assert result.played == 4 and result.verified is not None
    assert all(report.ok for report in result.verified)
    (summary,) = [s for s in result.summary["agimaze_set"] if s["policy"] == "explorer"]
    assert summary["sets"] == 2 and summary["solved"] == 2 and summary["rhae70"]["mean"] == 1.0
    assert [lab["position"] for lab in summary["labyrinths"]] == list(range(1, 9))
    assert summary["labyrinths"][-1]["name"] == TARGET
    markdown = (out / "summary.md").read_text()
    assert "## AGI Maze labyrinth sets" in markdown and "RHAE70 of the target" in markdown
    assert f"| 8 | {TARGET} |" in markdown
    rows = orjson.loads((out / "results.json").read_bytes())["games"]
    # a rerun that lost its row cache scores the games again from the journal, alike
    (out / "rows.jsonl").unlink()
    again = run_experiment(exp, out, RunOptions(resume=True, verify=False, quiet=True))
    assert again.played == 0
    for before, after in zip(rows, again.rows, strict=True):
        columns = ("solved", "steps", "rhae70", "set_steps", "labyrinths", "wall_moves")
        for column in (*columns, "wall_move_rate"):
            assert before[column] == after[column], column
    with Journal(out / "games.sqlite", readonly=True) as journal:
        assert {g.env_id for g in journal.games()} == {"maze_envs/AgiMazeSet-v0"}


def test_the_command_line_plays_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = [
        "--env",
        "agimaze-set",
        "--target",
        TARGET,
        "--tutorials",
        "TUTORIAL/STAGE-01/0000.json",
    ]
    assert main([*args, "--seeds", "0", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "AGI Maze labyrinth sets" in printed and "RHAE70 of the target" in printed
    (game,) = orjson.loads((out / "results.json").read_bytes())["games"]
    assert [lab["name"] for lab in game["labyrinths"]] == ["TUTORIAL/STAGE-01/0000.json", TARGET]
    with pytest.raises(SystemExit) as exc:
        main(["--env", "agimaze-set", "--pack", "TRAINING", "--out", str(out)])
    assert exc.value.code == 2
    assert "--pack does not apply to --env agimaze-set" in capsys.readouterr().err


def test_bench_plays_an_earlier_pack_version_by_name(tmp_path: Path) -> None:
    path = "TRAINING/S3-full/STAGE-01/0004.json"
    exp = Experiment.model_validate(
        {
            "seeds": "0",
            "agimaze": [
                {"packs": [path], "pack_version": "agimaze-packs-2", "policies": ["oracle"]}
            ],
        }
    )
    (task,) = exp.tasks()
    assert task.case.pack_version == "agimaze-packs-2"
    result = run_experiment(exp, tmp_path / "run", RunOptions(verify=True, quiet=True))
    (row,) = result.rows
    old = resolve_pack_path(path, root=version_root("agimaze-packs-2"))[1]
    assert row["solved"] and row["steps"] == old.meta.optimal_steps
    assert result.verified is not None and result.verified[0].ok
    current = Experiment.model_validate(
        {"seeds": "0", "agimaze": [{"packs": [path], "policies": ["oracle"]}]}
    ).tasks()[0]
    assert current.run_key != task.run_key  # another pack version is another game
    with pytest.raises(ValueError, match="pack_root or pack_version"):
        Experiment.model_validate(
            {
                "agimaze": [
                    {
                        "packs": [path],
                        "pack_version": "agimaze-packs-2",
                        "pack_root": str(tmp_path),
                        "policies": ["oracle"],
                    }
                ]
            }
        ).tasks()
