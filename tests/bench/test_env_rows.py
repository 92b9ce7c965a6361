"""Each environment of the table is a row of the runner too (issue 26): its setup class, named by
``EnvEntry.setup``, supplies the word, the experiment table, the cases, the adapter, the summary
and the report section; nothing in the runner asks which environment a case is."""

from __future__ import annotations

import importlib
import subprocess
import sys
import typing

import pytest

from maze_envs._registration import ENVIRONMENTS, load
from maze_envs.bench.envs import make_adapter
from maze_envs.bench.report import markdown
from maze_envs.bench.results import summarize
from maze_envs.bench.rollout import play
from maze_envs.bench.spec import ENV_KINDS, Case, Experiment, setup_classes
from maze_envs.bench.specbase import CaseBase, SetupBase

#: one small setup of each word, as an experiment file gives it
SMALL = {
    "escape": {"sizes": [5], "max_turns": 6, "set": {"num_agents": 2}},
    "agimaze": {"packs": ["TUTORIAL/STAGE-01/0000.json"], "budget_factor": 0.2},
    "agimaze-set": {"paths": ["TUTORIAL/STAGE-01/0000.json"], "budget_factor": 0.2},
}


def test_every_row_names_a_setup_class_that_supplies_its_runner_row() -> None:
    words = []
    for entry in ENVIRONMENTS:
        setup = load(entry.setup)
        assert issubclass(setup, SetupBase), entry.id
        word = setup.model_fields["kind"].default
        words.append(word)
        assert setup.table in Experiment.model_fields, f"Experiment lacks [[{setup.table}]]"
        assert callable(load(setup.summary)) and callable(load(setup.report)), entry.id
    assert tuple(dict.fromkeys(words)) == ENV_KINDS
    assert set(setup_classes()) == set(SMALL), "a new row needs a small setup in this test"


def test_the_experiment_fields_and_the_case_union_follow_the_rows() -> None:
    tables = {cls.table for cls in setup_classes().values()}
    assert tables == set(Experiment.model_fields) - {"name", "description", "seeds"}
    (union, *_) = typing.get_args(Case)
    case_kinds = {c.model_fields["kind"].default for c in typing.get_args(union)}
    assert case_kinds == set(ENV_KINDS)


def _any_group(part: object) -> bool:
    if isinstance(part, dict):
        return any(_any_group(value) for value in part.values())
    return bool(part)


@pytest.mark.parametrize("word", list(SMALL))
def test_each_row_plays_summarizes_and_reports_a_game(word: str) -> None:
    cls = setup_classes()[word]
    experiment = Experiment.model_validate(
        {"name": word, cls.table: [{**SMALL[word], "policies": ["random"]}]}
    )
    (task,) = experiment.tasks()
    assert isinstance(task.case, CaseBase) and task.case.kind == word
    assert type(make_adapter(task, None)) is load(task.case.adapter)
    row = play(task)
    assert row["env"] == word and row["case"] == task.case.name and row["status"] == "ok"
    summary = summarize([row])
    assert set(summary) == {c.table for c in setup_classes().values()}
    filled = {table for table, part in summary.items() if _any_group(part)}
    assert filled == {cls.table}, f"{word}: its game is aggregated under {filled}"
    text = markdown({"name": word}, summary)
    assert text.count("\n## ") == 1, text


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("maze_envs.bench.setspec", ["AgiMazeSetSetup", "AgiMazeSetCase", "default_tutorials"]),
        ("maze_envs.bench.setgames", ["AgiMazeSetAdapter", "agimaze_set_scores"]),
    ],
)
def test_the_old_set_modules_still_import_with_a_deprecation_warning(
    module: str, names: list[str]
) -> None:
    code = (
        "import warnings, importlib\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    mod = importlib.import_module({module!r})\n"
        "print([str(w.category.__name__) for w in caught if 'deprecated' in str(w.message)])\n"
        f"print(all(hasattr(mod, n) for n in {names!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['DeprecationWarning']", "True"], out.stdout + out.stderr
    assert importlib.import_module("maze_envs.bench.agimaze_spec").AgiMazeSetSetup
