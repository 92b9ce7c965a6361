"""``inspect eval maze_envs/escape ...`` as typed, through the entry point of pyproject.toml."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from maze_envs.journal import Journal
from tests.conftest import REPO_ROOT


def test_pyproject_registers_the_tasks_module_under_maze_envs() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["inspect_ai"] == {"maze_envs": "llm_policies.apps.inspect.tasks"}
    extras = project["optional-dependencies"]
    assert any(r.startswith("inspect-ai") for r in extras["inspect"])
    assert any("inspect" in r for r in extras["test"] if r.startswith("maze-envs["))
    module = importlib.import_module("llm_policies.apps.inspect.tasks")
    for name in ("escape", "agimaze", "agimaze_set"):
        assert callable(getattr(module, name))


def test_the_installed_entry_point_when_the_metadata_has_it() -> None:
    installed = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    if "maze_envs" not in installed:
        pytest.skip("the package metadata predates the inspect_ai entry point: pip install -e .")
    assert installed["maze_envs"] == "llm_policies.apps.inspect.tasks"


def test_inspect_eval_maze_envs_escape_from_the_command_line(tmp_path: Path) -> None:
    journal = tmp_path / "games.sqlite"
    # The script puts the checkout at the END of sys.path: ahead of site-packages, its
    # maze_envs.egg-info (written by `pip install -e`) would hide the installed metadata by
    # which Inspect names the tasks `maze_envs/...`, as it never does for a researcher.
    env = dict(os.environ)
    env.pop("INSPECT_LOG_DIR", None)
    command = [
        sys.executable, str(REPO_ROOT / "tests" / "inspect" / "cli_main.py"), "eval",
        "maze_envs/escape",
        "--model", "mazescripted/wall-follower",
        "-T", "preset=navigator", "-T", "sizes=5", "-T", "max_turns=60", "-T", "seeds=0-1",
        "-T", "check=optional", "-T", "radio=true", "-T", f"journal={journal}",
        "--log-dir", str(tmp_path / "logs"), "--display", "none", "--max-retries", "2",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (info,) = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.eval.task == "maze_envs/escape" and log.status == "success"
    assert log.eval.model == "mazescripted/wall-follower"
    assert log.results is not None
    (success, _ratio) = log.results.scores
    assert success.name == "team_success" and success.metrics["mean"].value == 1.0
    with Journal(journal, readonly=True) as opened:
        games = list(opened.games())
    assert len(games) == 2
    harness = games[0].meta["harness"]["A"]
    assert (
        harness["check"] == "optional" and harness["model"] == "inspect:mazescripted/wall-follower"
    )
    assert harness["inspect"]["generate_config"]["max_retries"] == 2  # Inspect's, recorded
    verified = subprocess.run(
        [sys.executable, "-m", "maze_envs", "verify", str(journal)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout


def test_maze_envs_bench_plays_through_an_inspect_model_by_import_path(tmp_path: Path) -> None:
    import tests.inspect.cli_main  # noqa: F401  (registers the provider mazescripted)
    from maze_envs.bench.runner import RunOptions, run_experiment
    from maze_envs.bench.spec import Experiment

    policy = "llm_policies.apps.inspect.policy:escape_policy:model=mazescripted/wall-follower"
    experiment = Experiment.model_validate(
        {
            "seeds": "0",
            "escape": [
                {"preset": "navigator", "sizes": [5], "max_turns": 60, "policies": [policy]}
            ],
        }
    )
    result = run_experiment(
        experiment, tmp_path / "out", RunOptions(verify=True, quiet=True, plots=False)
    )
    (row,) = result.rows
    assert row["status"] == "ok" and row["success"] is True and result.verified_ok
    assert row["requests"] == row["decisions"] > 0
    # a provider neither local nor in genai-prices: the cost is unknown, never 0
    assert row["cost_status"] == "unknown" and row["cost_usd"] is None


def test_the_offline_quick_try_of_the_docs(tmp_path: Path) -> None:
    """Issue 23: `inspect eval maze_envs/escape --model mockllm/model --limit 2` offline made
    every decision an outage (the mock's tokenizer downloads its tables) and printed nan with
    exit 0. The documented quick try is the stand-in model: it plays, offline, every game
    scored. Downloads are made impossible here (a proxy that refuses every connection)."""
    env = dict(os.environ)
    env.pop("INSPECT_LOG_DIR", None)
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    command = [
        sys.executable, str(REPO_ROOT / "tests" / "inspect" / "cli_main.py"), "eval",
        "maze_envs/escape", "--model", "stand-in/wall-follower", "--limit", "2",
        "--log-dir", str(tmp_path / "logs"), "--display", "plain",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "nan" not in done.stdout and "left out of the metrics" not in done.stdout + done.stderr
    (info,) = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and log.results is not None
    success = log.results.scores[0]
    assert success.name == "team_success" and success.scored_samples == 2
    assert success.unscored_samples == 0 and success.metrics["mean"].value == 1.0
    assert (tmp_path / "logs" / "maze_envs.sqlite").is_file()


def test_an_unknown_stand_in_names_the_known_ones() -> None:
    from inspect_ai.model import get_model

    import llm_policies.apps.inspect.tasks  # noqa: F401  (registers the provider stand-in/...)

    with pytest.raises(ValueError, match=r"no stand-in model 'stand-in:nope'; the stand-ins are"):
        get_model("stand-in/nope")
