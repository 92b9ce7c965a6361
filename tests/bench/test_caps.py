"""Per-run caps hold across every worker of a run (issue 15): one budget, a ledger the runner owns.

The ``Metered`` test policy reports usage with every decision and, like the LLM policies, keeps a
budget of its own per process (so before the runner shared one, a 2-worker run spent up to twice
its cap, and each worker's later games each spent a turn before stopping).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.ledger import RUN_CAP_PREFIX, CapTable, LocalLedger, charge_of
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal
from maze_envs.policies.interface import Usage
from maze_envs.verify import verify_journal
from tests.bench import ESCAPE_VERSION

HERE = "tests.bench.policies"
TOKENS = 100  # per decision; 3 agents: 300 a turn
TURN = 3 * TOKENS
GAMES = 16


def metered(seeds: str = f"0-{GAMES - 1}", **options: Any) -> Experiment:
    spec = f"{HERE}:Metered:tokens={TOKENS}" + "".join(f",{k}={v}" for k, v in options.items())
    return Experiment.model_validate(
        {
            "name": "caps",
            "seeds": seeds,
            "escape": [
                {"version": ESCAPE_VERSION, "sizes": [5], "max_turns": 30, "policies": [spec]}
            ],
        }
    )


def tokens_of(rows: list[dict[str, Any]]) -> int:
    return sum((row.get("input_tokens") or 0) + (row.get("output_tokens") or 0) for row in rows)


def check_journal(out: Path, rows: list[dict[str, Any]]) -> None:
    """Each played game (ok or stopped mid-way) once in the journal, which verifies."""
    with Journal(out / "games.sqlite", readonly=True) as journal:
        keys = sorted(g.meta["run_key"] for g in journal.games() if g.meta)
    assert keys == sorted(r["run_key"] for r in rows if r["game_id"] is not None)
    assert all(report.ok for report in verify_journal(str(out / "games.sqlite")))


@pytest.mark.parametrize("workers", [2, 3])
def test_a_policys_run_cap_is_one_budget_across_the_process_pool(
    workers: int, tmp_path: Path
) -> None:
    cap = 3000
    experiment = metered(max_tokens_per_run=cap, run="capped")
    options = RunOptions(executor="process", workers=workers, quiet=True, plots=False)
    result = run_experiment(experiment, tmp_path / "run", options)
    rows = result.rows
    assert len(rows) == GAMES
    # reached once by all workers together: at most one turn over, per game in flight
    assert cap <= tokens_of(rows) <= cap + workers * TURN, tokens_of(rows)
    stopped = [r for r in rows if r["status"] == "stopped"]
    assert stopped and all(r["status"] in ("ok", "stopped") for r in rows)
    reason = "run cap: token cap of the run capped reached"
    assert all(str(r["stop_reason"]).startswith(reason) for r in stopped), stopped[0]
    not_started = [r for r in stopped if r["game_id"] is None]
    assert not_started, "the runner kept dispatching games after the cap"
    assert all(not r.get("decisions") for r in not_started)
    check_journal(tmp_path / "run", rows)
    assert any(reason in note for note in result.notes)


def test_a_run_wide_cost_cap_stops_the_run_and_a_resume_with_a_higher_cap_completes_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    experiment = metered(cost=0.001)
    capped = RunOptions(executor="process", workers=2, quiet=True, plots=False)
    capped.max_cost_per_run = 0.5  # 500 decisions: 167 turns of the 16 x 30
    first = run_experiment(experiment, out, capped)
    cost = sum(r.get("cost_usd") or 0.0 for r in first.rows)
    assert 0.5 <= cost <= 0.5 + 2 * 3 * 0.001 + 1e-9, cost
    stopped = [r for r in first.rows if r["status"] == "stopped"]
    assert stopped and all(r["stop_reason"].startswith(RUN_CAP_PREFIX) for r in stopped)
    assert "cost cap of the run reached" in stopped[0]["stop_reason"]
    # the same cap again: the spend so far counts, nothing more is played
    again = run_experiment(experiment, out, RunOptions(resume=True, quiet=True, plots=False))
    assert {r["run_key"] for r in again.rows if r["status"] == "ok"} >= {
        r["run_key"] for r in first.rows if r["status"] == "ok"
    }
    assert all(r["status"] == "ok" for r in again.rows)  # no cap this time: every game played
    with Journal(out / "games.sqlite", readonly=True) as journal:
        completed = journal.completed_keys()
    assert completed == {task.run_key for task in experiment.tasks()}


def test_a_resume_counts_what_the_run_spent_before(tmp_path: Path) -> None:
    out = tmp_path / "run"
    experiment = metered()
    options = RunOptions(quiet=True, plots=False, max_tokens_per_run=2500)
    first = run_experiment(experiment, out, options)
    assert tokens_of(first.rows) >= 2500
    options.resume = True
    again = run_experiment(experiment, out, options)
    assert tokens_of(again.rows) == tokens_of(first.rows)  # the cap was spent: nothing played
    assert all(
        r["game_id"] is None
        for r in again.rows
        if r["status"] == "stopped" and r["run_key"] not in {x["run_key"] for x in first.rows}
    )


def test_the_ledger_and_its_table() -> None:
    experiment = metered(max_tokens_per_run=500)
    table = CapTable.build(experiment.tasks(), max_cost_usd=1.0)
    assert table is not None
    assert [cap.name for cap in table.caps] == ["run", "run default"]
    task = experiment.tasks()[0]
    assert table.budgets(task) == {"A": (0, 1), "B": (0, 1), "C": (0, 1)}
    ledger = LocalLedger(table)
    assert ledger.update({1: charge_of(Usage(input_tokens=499))}, (0, 1)) is None
    assert ledger.update({1: charge_of(Usage(output_tokens=1))}, (0,)) is None  # not watched
    reason = ledger.update({}, (0, 1))
    assert reason == (
        "token cap of the run default reached: 500 tokens used by all its games, cap 500"
    )
    unknown = Usage(input_tokens=1, cost_status="unknown")
    assert "cannot be checked" in str(ledger.update({0: charge_of(unknown)}, (0,)))
    assert CapTable.build(metered().tasks()) is None  # no caps: no ledger at all
    with pytest.raises(ValueError, match="a token cap must be positive"):
        CapTable.build(experiment.tasks(), max_tokens=0)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def test_a_run_cap_is_one_budget_across_ray_workers(local_ray: Any, tmp_path: Path) -> None:
    cap = 3000
    experiment = metered(max_tokens_per_run=cap)
    options = RunOptions(executor="ray", workers=2, quiet=True, plots=False)
    result = run_experiment(experiment, tmp_path / "run", options)
    assert cap <= tokens_of(result.rows) <= cap + 2 * TURN, tokens_of(result.rows)
    assert any(r["status"] == "stopped" and r["game_id"] is None for r in result.rows)
    check_journal(tmp_path / "run", result.rows)
