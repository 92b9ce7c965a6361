"""The Inspect tasks as the inspect_evals register checks them, and their parts on their own.

* ``inspect-evals-lint`` passes on the tasks the way the register's lint service runs it
  (``lint_task_files`` on the task file, the register's configuration, nothing of ours);
* the register's lint asks that every custom solver and scorer be exercised by a test: here
  the solver ``play_game`` and each scorer (``escape_score``, ``agimaze_score``,
  ``agimaze_set_score``) compose a task of one's own, as a researcher reusing them would, and
  score what the games did;
* the tasks resolve by name through the package (``llm_policies.apps.inspect.escape``...).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset

import llm_policies.apps.inspect as inspect_tasks
from llm_policies.apps.inspect import tasks
from llm_policies.apps.inspect.games import agimaze_games, escape_games, game_sample, set_games
from llm_policies.apps.inspect.scorer import agimaze_score, agimaze_set_score, escape_score
from llm_policies.apps.inspect.solver import play_game
from maze_envs.agimaze.scoring import rhae
from maze_envs.agimaze.set_env import TUTORIAL_PATHS
from tests.conftest import REPO_ROOT
from tests.inspect.support import agimaze_player, mock_model, run, wall_follower
from tests.llm.bench_support import agimaze_plan

TASK_FILE = "llm_policies/apps/inspect/tasks.py"


def test_inspect_evals_lint_passes_as_the_register_runs_it() -> None:
    lint = pytest.importorskip(
        "inspect_evals_lint", reason="inspect-evals-lint comes with the dev extra"
    )
    report = lint.lint_task_files(REPO_ROOT, [TASK_FILE])
    (package,) = report.packages
    failed = [
        f"{d.rule.code} {d.rule.name} {d.location}: {d.message}"
        for d in package.diagnostics
        if d.status == "fail"
    ]
    assert package.passed() and not failed, "\n".join(failed)


def test_the_tasks_are_exported_by_the_package() -> None:
    assert inspect_tasks.escape is tasks.escape
    assert {inspect_tasks.agimaze, inspect_tasks.agimaze_set} == {tasks.agimaze, tasks.agimaze_set}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = inspect_tasks.nothing


def _task(games: list, scorer: object, journal: Path) -> Task:
    return Task(
        dataset=MemoryDataset([game_sample(g) for g in games]),
        solver=play_game(str(journal)),
        scorer=scorer,
    )


def test_play_game_and_escape_score_make_a_task_of_ones_own(tmp_path: Path) -> None:
    games = escape_games({"preset": "navigator", "sizes": [5], "max_turns": 60}, "0-1", {})
    log = run(
        _task(games, escape_score(), tmp_path / "g.sqlite"),
        mock_model(wall_follower).model,
        tmp_path / "logs",
    )
    assert log.status == "success" and log.samples is not None
    for sample in log.samples:
        (score,) = sample.scores.values()
        row = score.metadata
        assert score.value["team_success"] == float(row["success"])
        assert row["success"] and math.isclose(
            score.value["finish_ratio"], row["finish_turn"] / row["fastest"]
        )


def test_agimaze_score_scores_a_labyrinth_by_solved_and_rhae70(tmp_path: Path) -> None:
    pack = "TUTORIAL/STAGE-02/0001.json"
    plan = agimaze_plan(pack)
    games = agimaze_games({"packs": [pack]}, "0", {})
    log = run(
        _task(games, agimaze_score(), tmp_path / "g.sqlite"),
        mock_model(agimaze_player([plan])).model,
        tmp_path / "logs",
    )
    assert log.samples is not None
    (score,) = log.samples[0].scores.values()
    max_steps = score.metadata["max_steps"]
    assert score.value == {"solved": 1.0, "rhae70": rhae(len(plan), max_steps, True)}


def test_agimaze_set_score_scores_a_set_by_its_target(tmp_path: Path) -> None:
    paths = [TUTORIAL_PATHS[0], TUTORIAL_PATHS[2]]
    plans = [agimaze_plan(p) for p in paths]
    games = set_games(
        targets=None, paths=paths, budget_factor=5, pack_root=None, seeds="0", options={}
    )
    log = run(
        _task(games, agimaze_set_score(), tmp_path / "g.sqlite"),
        mock_model(agimaze_player(plans)).model,
        tmp_path / "logs",
    )
    assert log.samples is not None
    (score,) = log.samples[0].scores.values()
    target = score.metadata["labyrinths"][-1]
    assert score.value["solved"] == 1.0 and score.value["labyrinths_solved"] == 1.0
    assert (
        score.value["rhae70"] == target["rhae70"] == rhae(len(plans[1]), target["max_steps"], True)
    )
