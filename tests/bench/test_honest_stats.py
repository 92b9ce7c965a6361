"""Honest statistics (issue 13): no zero-width interval from one value or a constant sample, in
the tables and the plots; and randomised policies get their own seed in every game."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.command import main_experiment
from maze_envs.bench.report import markdown
from maze_envs.bench.results import paired_ratio, summarize
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.bench.stats import bootstrap_ratio, describe_estimate
from maze_envs.journal import Journal
from maze_envs.policies.seeds import policy_seeds


def _row(policy: str, seed: int, ratio: float | None, size: str = "9x9") -> dict[str, Any]:
    return {
        "env": "escape",
        "setup": "s",
        "size": size,
        "policy": policy,
        "seed": seed,
        "status": "ok",
        "success": ratio is not None,
        "finish_turn": None if ratio is None else 10 * ratio,
        "finish_ratio": ratio,
        "finish_ratio_censored": 60.0 if ratio is None else ratio,
    }


# --- one value, or a constant sample, has no interval ------------------------------------------


def test_a_mean_over_one_game_shows_its_n_not_a_zero_width_interval() -> None:
    rows = [_row("random", 0, 73.71)] + [_row("random", s, None) for s in range(1, 10)]
    rows += [_row("explorer", s, 2.0) for s in range(10)]  # constant: no spread either
    text = markdown({"name": "t"}, summarize(rows))
    assert "73.71 (n=1, no interval)" in text
    assert "2.00 (n=10, all equal, no interval)" in text
    assert "[73.71, 73.71]" not in text and "[2.00, 2.00]" not in text
    (random, explorer) = summarize(rows)["escape"]
    assert random["finish_ratio"] == {"mean": 73.71, "low": None, "high": None, "n": 1}
    assert explorer["finish_ratio"] == {"mean": 2.0, "low": None, "high": None, "n": 10}
    assert describe_estimate(random["finish_ratio_censored"]).count("[") == 1  # 10 values


def test_one_lonely_point_does_not_stretch_the_ratio_axis() -> None:
    pytest.importorskip("matplotlib")
    from maze_envs.bench.plots import escape_figure

    rows = []
    for size, base in (("9x9", 2.0), ("13x13", 3.0)):
        rows += [_row("explorer", s, base + 0.1 * s, size) for s in range(10)]
        rows += [_row("random", 0, 73.71 if size == "9x9" else None, size)]
        rows += [_row("random", s, None, size) for s in range(1, 10)]
    figure = escape_figure(summarize(rows)["escape"])
    low, high = figure.axes[1].get_ylim()
    assert 1 < low < 2.5 and 3.5 < high < 5  # the explorers' intervals set it, not 73.71
    texts = [t.get_text() for t in figure.axes[1].texts]
    assert any("73.7" in t and "n=1" in t for t in texts)  # drawn at the edge, labelled


def test_a_paired_ratio_of_finish_turns() -> None:
    rows = [_row("team", s, 2.0 + s % 3) for s in range(20)]
    rows += [_row("alone", s, 2 * (2.0 + s % 3)) for s in range(20)]
    (ratio,) = paired_ratio(rows, ("s", "team"), ("s", "alone")).values()
    assert ratio.mean == pytest.approx(2.0) and ratio.n == 20
    assert ratio.low is None  # every pair has the same ratio: no spread
    noisy = bootstrap_ratio([3.0, 5.0, 9.0, 4.0], [2.0, 2.0, 3.0, 2.0])
    assert noisy.mean == pytest.approx(21 / 9) and noisy.low < noisy.mean < noisy.high


# --- policy seeds ----------------------------------------------------------------------------


def test_no_two_games_of_a_main_job_arm_share_a_policy_seed() -> None:
    seeds: dict[tuple[str, str], list[int]] = defaultdict(list)
    for task in main_experiment().tasks():
        arm = (task.case.setup, task.policy.name)
        game = policy_seeds(task.seed, task.agents, task.case.salt, task.policy.policy_seed)
        seeds[arm] += game.values()
    random_arm = seeds[("random, calibration budget", "random")]
    assert len(random_arm) == 261  # one per AGI Maze bundle, all played with game seed 0
    for arm, values in seeds.items():
        assert len(set(values)) == len(values), arm


def test_policies_get_the_seeds_the_meta_records_unless_an_arm_fixes_them(tmp_path: Path) -> None:
    policy = "tests.bench.metric_policies:SeedInRecord"
    experiment = Experiment.model_validate(
        {
            "seeds": "0-1",
            "escape": {"sizes": [5, 6], "max_turns": 3, "policies": [policy]},
            "agimaze": {
                "packs": ["TUTORIAL/STAGE-01"],
                "budget_factor": 1,
                "seeds": "0",
                "policies": [policy, {"policy": policy, "policy_seed": 7, "label": "fixed"}],
            },
        }
    )
    result = run_experiment(experiment, tmp_path / "run", RunOptions(quiet=True, plots=False))
    by_arm: dict[str, list[int]] = defaultdict(list)
    with Journal(result.journal, readonly=True) as journal:  # type: ignore[arg-type]
        for row in result.rows:
            game = journal.game(row["game_id"])
            recorded = game.meta["policy_seeds"]
            got = {}
            for turn in list(journal.turns(game.id))[1:]:
                got.update({a: r["seed"] for a, r in turn.decisions.items()})
            assert got == recorded  # what the policies were handed is in the meta
            by_arm[f"{row['setup']}/{row['policy']}"] += recorded.values()
    assert len(by_arm) == 3  # Maze Escape, AGI Maze, AGI Maze with a fixed policy seed
    for arm, values in by_arm.items():
        if arm.endswith("/fixed"):
            assert len(set(values)) == 1 and len(values) > 1  # asked for: one seed everywhere
        else:
            assert len(set(values)) == len(values), arm  # never shared between games
