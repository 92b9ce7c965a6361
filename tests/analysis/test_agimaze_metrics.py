"""AGI Maze behavioural metrics on hand-made games whose every value is known."""

from __future__ import annotations

from pathlib import Path

from maze_envs.bench.analysis import analyze_journal
from maze_envs.journal import Journal
from tests.view.journals import record_agimaze
from tests.view.test_agimaze_page import corridor


def test_single_labyrinth(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    # bump the monolith, then right, back left, right again (two reversals), right, out
    record_agimaze(
        path, {"labyrinth": corridor()}, ["left", "right", "left", "right", "right", "right"]
    )
    (m,) = analyze_journal(path).agimaze
    assert (m.decisions, m.steps, m.solved, m.bad_actions) == (6, 6, 1, 0)
    assert (m.wall_moves, m.wall_move_rate, m.reversals) == (1, 1 / 6, 2)
    assert (m.cells_visited, m.coverage, m.revisits) == (3, 1.0, 2)


def test_labyrinth_set(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    actions = ["up", "start", "right", "start", "right", "right", "start", "left", "right"]
    record_agimaze(path, {"labyrinths": [corridor(), corridor()]}, actions, labyrinth_set=True)
    (m,) = analyze_journal(path).agimaze
    assert (m.decisions, m.bad_actions, m.solved, m.steps) == (9, 2, 1, 5)
    assert (m.wall_moves, m.reversals, m.revisits) == (1, 0, 0)
    assert (m.cells_visited, m.coverage) == (5, 5 / 6)
    assert m.labyrinths == "2 labyrinths"


def test_games_of_both_environments_in_one_journal(tmp_path: Path) -> None:
    from tests.analysis.test_escape_metrics import MOVES_SCRIPT, play

    path = tmp_path / "games.sqlite"
    play(path, MOVES_SCRIPT)
    record_agimaze(path, {"labyrinth": corridor()}, ["right", "right", "right"])
    with Journal(path) as journal:
        journal.start_game(env_id="someone/Else-v0", config={}, seed=1, library_version="x")
    analysis = analyze_journal(path)
    assert [m.game for m in analysis.escape] == [1] * 4
    assert [m.game for m in analysis.agimaze] == [2]
    assert analysis.skipped == [(3, "no behavioural metrics for someone/Else-v0")]


def test_lost_at_tells_an_unwinnable_episode_from_a_slow_one(tmp_path: Path) -> None:
    from maze_envs.bench.analysis.table import render
    from tests.view.test_agimaze_page import river_trap

    path = tmp_path / "games.sqlite"
    record_agimaze(path, {"labyrinth": river_trap()}, ["right", "left"] * 4)  # slow
    record_agimaze(path, {"labyrinth": river_trap()}, ["right"] * 4 + ["left"] * 4)  # lost
    analysis = analyze_journal(path)
    slow, lost = analysis.agimaze
    assert slow.lost_at is None and slow.solved == 0
    assert lost.lost_at == 4 and lost.lost_labyrinth == "<labyrinth>"
    text = render(analysis)
    assert "lost at" in text and "step 4" in text
    assert lost.row()["lost_at"] == 4
