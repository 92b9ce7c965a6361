"""Behavioural metrics on hand-made games whose every value is known (the comb board).

Comb board (tests/escape/boards.py): the top row is a corridor, every column hangs from it, the
exit is (4, 0) with its doorway in the south wall. A starts on (4, 4), B on (4, 2), C on (0, 0).
Straight-line distance to the exit grows going north in columns 2 and 4 and shrinks going south
in column 0.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.analysis import analyze_journal, render, write_csv
from maze_envs.bench.analysis.cli import main
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator
from maze_envs.escape.types import Config
from tests.escape.boards import STAY, E, N, S, W, act, comb_layout

NOTE_C = "C: exit is 5W,1N of the picture; route N3,W,S,W,S,E then south"


def play(path: Path, script: list[dict[str, dict[str, Any]]], **config: Any) -> None:
    settings = {"width": 5, "height": 5, "max_turns": len(script), **config}
    env = MazeEscapeEnv(Config(**settings), generator=FixedGenerator(comb_layout()), journal=path)
    env.reset(seed=0)
    for actions in script:
        env.step({a: actions.get(a, act(STAY)) for a in env.agents})
    env.close()


MOVES_SCRIPT = [
    {"A": act(N), "B": act(W), "C": act(S)},  # 1: A up (reading rises), B bumps, C down
    {"A": act(S), "C": act(N)},  # 2: both reverse; A's after a rise, C's after a fall
    {"A": act(W), "C": act(S)},  # 3: A bumps; C reverses after its rise
    {"A": act(N), "B": act(N), "C": act(S)},  # 4: A reverses (after a fall)
    {"A": act(N), "B": act(S), "C": act(S)},  # 5: B reverses after a rise
    {"C": act(S)},  # 6: C reaches the exit
    {},  # 7: C camps on the exit
    {"C": act(N)},  # 8: C leaves it (a reversal after a fall)
    {"C": act(S)},  # 9: C comes back (a reversal after a rise), camping again
]


def rows_by_agent(path: Path) -> dict[str, Any]:
    return {m.agent: m for m in analyze_journal(path).escape}


def test_moves_reversals_stays_camping_coverage(tmp_path: Path) -> None:
    path = tmp_path / "moves.sqlite"
    play(path, MOVES_SCRIPT)
    rows = rows_by_agent(path)
    a, b, c, team = rows["A"], rows["B"], rows["C"], rows["team"]
    # wall-move rate = wall moves / moves tried (STAYs excluded), as in the benchmark results
    assert (a.decisions, a.moves_tried, a.wall_moves, a.wall_move_rate) == (9, 5, 1, 1 / 5)
    assert (a.reversals, a.reversals_after_rise, a.stays) == (2, 1, 4)
    assert (a.cells_visited, a.revisits, a.first_exit_turn) == (3, 2, None)
    assert (b.wall_moves, b.reversals, b.reversals_after_rise, b.stays) == (1, 1, 1, 6)
    assert (b.cells_visited, b.revisits) == (2, 1)
    assert (c.wall_moves, c.reversals, c.reversals_after_rise, c.stays) == (0, 4, 2, 1)
    assert (c.cells_visited, c.revisits, c.coverage) == (5, 4, 5 / 25)
    assert (c.first_exit_turn, c.exit_turns_after_reaching) == (6, 2)
    assert c.turns_to_team_success is None and not c.team_success
    assert (team.decisions, team.moves_tried, team.wall_moves) == (27, 16, 2)
    assert team.wall_move_rate == 2 / 16 and (team.fallbacks, team.outages) == (0, 0)
    assert (team.reversals, team.reversals_after_rise, team.stays) == (7, 4, 11)
    assert (team.cells_visited, team.coverage, team.first_exit_turn) == (10, 10 / 25, 6)


def test_without_the_sensor_reversals_after_a_rise_do_not_apply(tmp_path: Path) -> None:
    path = tmp_path / "nosensor.sqlite"
    play(path, MOVES_SCRIPT, distance_sensor=False)
    rows = rows_by_agent(path)
    assert rows["C"].reversals == 4 and rows["C"].reversals_after_rise is None
    assert rows["team"].reversals_after_rise is None


def test_turns_to_team_success(tmp_path: Path) -> None:
    path = tmp_path / "success.sqlite"
    # C is on the exit after 4 moves; A needs 12 and B 10: they all walk the shortest routes
    route_a = [N] * 4 + [W] * 4 + [S] * 4
    route_b = [N] * 4 + [W] * 2 + [S] * 4
    script = []
    for t in range(12):
        script.append(
            {
                "A": act(route_a[t]),
                "B": act(route_b[t]) if t < len(route_b) else act(STAY),
                "C": act(S) if t < 4 else act(STAY),
            }
        )
    play(path, script)
    rows = rows_by_agent(path)
    assert rows["team"].team_success and rows["team"].turns == 12
    assert [rows[x].first_exit_turn for x in "ABC"] == [12, 10, 4]
    assert [rows[x].turns_to_team_success for x in "ABC"] == [0, 2, 8]
    assert [rows[x].exit_turns_after_reaching for x in "ABC"] == [0, 2, 8]
    assert rows["team"].turns_to_team_success == 8
    assert [rows[x].reversals for x in "ABC"] == [0, 0, 0]


def notebook_script() -> list[dict[str, dict[str, Any]]]:
    """C writes a route and radios with a frame; B walks to C, meets it and copies the route."""
    copy = "copied" + NOTE_C[1:]  # ": exit is 5W,..." is C's text from its second character
    return [
        {"B": act(N), "C": act(E, edit=(0, 0, NOTE_C), radio="exit at [0,-4] my frame")},
        {"B": act(N), "C": act(E), "A": act(radio="going north")},
        {"B": act(N, radio="exit at [2,5]")},
        {"B": act(N)},  # 4: B reaches (0, 2), where C stands: each sees the other's notebook
        {"B": act(edit=(0, 0, copy + " route short"))},  # 5: a 40+ passage copied, once
        {"B": act(edit=(0, 0, NOTE_C[:30]))},  # 6: the same text again, and a short piece
    ]


def test_copied_passages_and_radio_frames(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    play(path, notebook_script())
    rows = rows_by_agent(path)
    b, c = rows["B"], rows["C"]
    assert (b.colocated_turns, b.copied_passages, b.copied_chars) == (2, 1, len(NOTE_C) - 1)
    assert (c.colocated_turns, c.copied_passages) == (2, 0)
    assert (rows["A"].radio_sent, rows["A"].radio_with_coordinates) == (1, 0)
    assert (b.radio_sent, b.radio_with_coordinates, b.radio_frame_named) == (1, 1, 0)
    assert (c.radio_sent, c.radio_with_coordinates, c.radio_frame_named) == (1, 1, 1)
    team = rows["team"]
    assert (team.radio_sent, team.radio_with_coordinates, team.radio_frame_named) == (3, 2, 1)
    assert team.copied_passages == 1


def test_table_csv_and_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.sqlite"
    play(path, MOVES_SCRIPT)
    play(path, notebook_script())
    analysis = analyze_journal(path, workers=2)  # two processes: the same rows, in id order
    assert [(m.game, m.agent) for m in analysis.escape] == [
        (g, a) for g in (1, 2) for a in ("A", "B", "C", "team")
    ]
    assert analysis.escape == analyze_journal(path, workers=1).escape
    text = render(analysis)
    assert "wall%" in text and "20.0%" in text  # A's one wall move in five moves tried
    out = tmp_path / "metrics.csv"
    assert write_csv(analysis, out) == 8
    with out.open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert table[2]["agent"] == "C" and table[2]["reversals"] == "4"
    assert table[0]["reversals_after_rise"] == "1" and table[0]["first_exit_turn"] == ""
    assert main([str(path), "--csv", str(tmp_path / "again.csv"), "--quiet"]) == 0
    assert (tmp_path / "again.csv").read_text() == out.read_text()
    assert main([str(path), "--game", "9"]) == 2
    assert main([str(tmp_path / "missing.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "no game 9" in err and "missing.sqlite" in err


def test_version_1_games_give_the_same_metrics(tmp_path: Path) -> None:
    from maze_envs.escape.env import MazeEscapeV1Env

    metrics = []
    for kind in (MazeEscapeEnv, MazeEscapeV1Env):
        path = tmp_path / f"{kind.__name__}.sqlite"
        env = kind(
            Config(width=5, height=5, max_turns=6),
            generator=FixedGenerator(comb_layout()),
            journal=path,
        )
        env.reset(seed=0)
        for actions in notebook_script():
            env.step({a: actions.get(a, act(STAY)) for a in env.agents})
        env.close()
        metrics.append([{**m.row(), "env_id": ""} for m in analyze_journal(path).escape])
    assert metrics[0] == metrics[1]
    assert metrics[1][1]["copied_passages"] == 1  # B copied C's route (v1: its own entry blank)
