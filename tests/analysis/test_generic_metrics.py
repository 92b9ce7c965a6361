"""``maze-envs analyze`` on games of foreign environments: generic rows instead of a skip."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from maze_envs.bench.analysis import analyze_journal
from maze_envs.bench.analysis.cli import main
from maze_envs.journal import Journal
from tests.view.test_generic_page import play_cartpole, play_toy


def test_cartpole_row_counts_steps_and_reward(tmp_path: Path) -> None:
    played = play_cartpole(tmp_path / "games.sqlite")
    analysis = analyze_journal(played.path)
    assert analysis.skipped == [] and analysis.escape == [] and analysis.agimaze == []
    (row,) = analysis.generic
    assert (row.game, row.env_id, row.seed, row.agent) == (1, "CartPole-v1", 4, "agent")
    assert row.steps == row.turns == played.steps
    assert row.total_reward == sum(r for r in played.rewards["agent"] if r is not None)
    assert (row.terminated, row.truncated) == (
        played.terminated["agent"],
        played.truncated["agent"],
    )
    assert row.distinct_observations == len({tuple(o) for o in played.obs["agent"]})
    assert row.outcome == "finished" and row.note == ""


def test_parallel_rows_per_agent(tmp_path: Path) -> None:
    played = play_toy(tmp_path / "games.sqlite")
    rows = {m.agent: m for m in analyze_journal(played.path).generic}
    assert list(rows) == ["a", "b"]
    for agent, row in rows.items():
        rewards = [r for r in played.rewards[agent] if r is not None]
        assert row.steps == len(rewards), agent
        assert row.total_reward == pytest.approx(sum(rewards)), agent
        assert (row.terminated, row.truncated) == (
            played.terminated[agent],
            played.truncated[agent],
        ), agent
        assert row.turns == played.steps == 12
    assert rows["b"].steps == 3 and rows["b"].terminated and not rows["b"].truncated
    assert rows["a"].steps == 12 and rows["a"].truncated
    seen = {repr(o) for o in played.obs["b"] if o is not None}
    assert rows["b"].distinct_observations == len(seen)


def test_table_and_csv_hold_the_generic_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    cartpole = play_cartpole(path)
    toy = play_toy(path)  # game 2 of the same journal
    with Journal(path) as journal:  # a game that recorded nothing is still skipped
        journal.start_game(env_id="someone/Else-v0", config={}, seed=1, library_version="x")
    out = tmp_path / "rows.csv"
    assert main([str(path), "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Other environments: steps and rewards per agent and game" in printed
    assert "game 3: skipped (no behavioural metrics for someone/Else-v0)" in printed
    assert "wrote 3 rows" in printed
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["kind"], r["game"], r["agent"]) for r in rows] == [
        ("generic", "1", "agent"),
        ("generic", "2", "a"),
        ("generic", "2", "b"),
    ]
    total = sum(r for r in cartpole.rewards["agent"] if r is not None)
    assert float(rows[0]["total_reward"]) == total
    assert int(rows[0]["steps"]) == cartpole.steps
    assert rows[0]["terminated"] == str(cartpole.terminated["agent"])
    assert float(rows[2]["total_reward"]) == pytest.approx(
        sum(r for r in toy.rewards["b"] if r is not None)
    )
    line = next(x for x in printed.splitlines() if "CartPole-v1" in x)
    steps = str(cartpole.steps)
    assert line.split()[:7] == ["1", "CartPole-v1", "4", "agent", steps, steps, f"{total:g}"]


def test_an_edited_row_stops_the_rows_there(tmp_path: Path) -> None:
    from tests.journal.tamper import edit_turn

    played = play_toy(tmp_path / "games.sqlite")
    edit_turn(played.path, 1, 5, "observations", lambda _: "{}")
    rows = analyze_journal(played.path).generic
    assert [m.steps for m in rows] == [4, 3]  # turns 1-4 only for a; b had left at turn 3
    assert all(m.note.startswith("turn 5") for m in rows)
