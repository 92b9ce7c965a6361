"""``maze-envs analyze`` names each game's benchmark arm (issue 13): setup, policy (as in the
benchmark results), each agent's own policy and the run key, so a multi-policy benchmark can be
grouped from the analysis alone."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from maze_envs.bench.analysis.cli import main as analyze
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment


def test_analyze_rows_carry_setup_and_policy(tmp_path: Path) -> None:
    experiment = Experiment.model_validate(
        {
            "seeds": "0-1",
            "escape": [
                {"label": "radio on", "sizes": [5], "max_turns": 30, "policies": ["explorer"]},
                {
                    "label": "radio off",
                    "sizes": [5],
                    "max_turns": 30,
                    "set": {"radio": False},
                    "policies": [
                        "random",
                        {"team": ["explorer", "random", "explorer"], "label": "mixed team"},
                    ],
                },
            ],
            "agimaze": {"packs": ["TUTORIAL/STAGE-01/0000.json"], "policies": ["explorer"]},
        }
    )
    out = tmp_path / "run"
    result = run_experiment(experiment, out, RunOptions(quiet=True, plots=False))
    assert analyze([str(out / "games.sqlite"), "--csv", str(tmp_path / "a.csv"), "--quiet"]) == 0
    with (tmp_path / "a.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    teams = [r for r in rows if r["kind"] == "escape" and r["agent"] == "team"]
    arms = Counter((r["setup"], r["policy"]) for r in teams)
    assert arms == {
        ("radio on", "explorer"): 2,
        ("radio off", "random"): 2,
        ("radio off", "mixed team"): 2,
    }
    # the same arm as the benchmark's own row of that game
    by_key = {r["run_key"]: r for r in result.rows}
    for row in [*teams, *(r for r in rows if r["kind"] == "agimaze")]:
        game = by_key[row["run_key"]]
        assert (row["setup"], row["policy"]) == (game["setup"], game["policy"])
        assert row["status"] == game["status"] == "ok"
    mixed = {r["agent"]: r["agent_policy"] for r in rows if r.get("policy") == "mixed team"}
    assert mixed == {"A": "explorer", "B": "random", "C": "explorer", "team": "mixed team"}
    agimaze = [(r["setup"], r["policy"]) for r in rows if r["kind"] == "agimaze"]
    assert agimaze == [("TUTORIAL/STAGE-01/0000.json", "explorer")] * 2


def test_games_outside_a_benchmark_have_no_arm(tmp_path: Path) -> None:
    from tests.analysis.test_escape_metrics import MOVES_SCRIPT, play

    path = tmp_path / "games.sqlite"
    play(path, MOVES_SCRIPT)
    assert analyze([str(path), "--csv", str(tmp_path / "a.csv"), "--quiet"]) == 0
    with (tmp_path / "a.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {(r["setup"], r["policy"], r["status"]) for r in rows} == {("", "", "ok")}
