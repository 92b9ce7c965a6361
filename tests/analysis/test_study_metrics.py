"""The study's later behaviour metrics on hand-made games whose every value is known.

The comb board (tests/escape/boards.py): the top row is a corridor, every column hangs from it,
the exit is (4, 0) with its doorway in the south wall. A starts on (4, 4), B on (4, 2), C on
(0, 0) (absolute x = column, y = 4 - row); the tree is on (0, 2), the piano on (2, 4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maze_envs.bench.analysis import analyze_journal
from maze_envs.bench.analysis.table import render
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator
from maze_envs.escape.types import Config
from maze_envs.metrics import COMPACTION_MIN_CHARS
from tests.escape.boards import STAY, E, N, S, W, act, comb_layout, log_act

Turn = dict[str, dict[str, Any]]


def play(
    path: Path,
    script: list[Turn],
    statuses: dict[int, dict[str, str]] | None = None,
    **config: Any,
) -> None:
    """Play ``script`` on the comb board; ``statuses[t][agent]`` marks the decision of turn
    ``t`` (1-based) as a fallback or an outage in its journal record, as the runner does."""
    settings = {"width": 5, "height": 5, "max_turns": len(script), **config}
    env = MazeEscapeEnv(Config(**settings), generator=FixedGenerator(comb_layout()), journal=path)
    env.reset(seed=0)
    stay = act() if env.config.notebook_mode == "splice" else log_act()
    for t, actions in enumerate(script, start=1):
        for agent, status in (statuses or {}).get(t, {}).items():
            assert env.recorder is not None
            env.recorder.note(agent, {"status": status})
        env.step({a: actions.get(a, stay) for a in env.agents})
    env.close()


def rows(path: Path) -> dict[str, Any]:
    return {m.agent: m for m in analyze_journal(path).escape}


def append(move: int, text: str, at: int) -> dict[str, Any]:
    """A splice that appends ``text`` to a notebook of ``at`` characters."""
    return act(move, edit=(at, at, text))


def test_waiting_self_positions_and_untried_exits(tmp_path: Path) -> None:
    # C writes where it is each turn (own frame: its start is [0, 0], south is y - 1)
    c_notes = [
        "t1: at [0, 0]\n",  # right (it stays)
        "t2: at [0, -1]\n",  # right: the cell its move of this turn took it to
        "",  # turn 3: a fallback STAY, no note
        "t4: at [5, 5]; exit at [0, -4]\n",  # wrong; "exit at" is not about itself
    ]
    script: list[Turn] = [
        {"A": act(N), "C": append(STAY, c_notes[0], 0)},
        {"A": act(W), "C": append(S, c_notes[1], len(c_notes[0]))},  # A bumps on a choice
        {"A": act(N), "C": act(STAY)},  # C's fallback STAY is no wait
        {"A": act(S), "C": append(S, c_notes[3], len(c_notes[0] + c_notes[1]))},
        {"A": act(STAY), "C": act(S)},  # A waits on a used-up cell
        {"C": act(S)},  # C reaches the exit
        {"C": act(STAY)},  # C stays after reaching it: no wait
    ]
    path = tmp_path / "study.sqlite"
    play(path, script, statuses={3: {"C": "fallback"}})
    got = rows(path)
    a, b, c, team = got["A"], got["B"], got["C"], got["team"]
    assert c.first_exit_turn == 6
    assert (c.stays, c.stays_while_searching, c.plays) == (2, 1, 6)
    assert (c.self_positions, c.self_positions_right) == (3, 2)
    # A: (4,4) offers no choice; on (3,4) it came from S: W (a wall) and N are choices, the
    # second untried; on (2,4) going back S is no untried exit; then (3,4) is used up
    assert (a.exit_choices, a.untried_exit_moves) == (3, 1)
    assert (a.exhausted_turns, a.stays_while_searching) == (3, 3)
    # B stays on its start all game: its one open side is untried (never used up); it waits
    assert (b.exhausted_turns, b.stays_while_searching, b.exit_choices) == (0, 7, 0)
    assert team.stays_while_searching == 1 + 3 + 7
    assert (team.self_positions, team.self_positions_right) == (3, 2)
    # C walks south down its column: each cell it enters offers the way on (untried) or back
    assert (c.exit_choices, c.untried_exit_moves) == (3, 3)
    assert (team.exit_choices, team.untried_exit_moves, team.plays) == (6, 4, 20)
    text = render(analyze_journal(path))
    assert " wait " in text and "pos-ok" in text and "untried" in text


def test_positions_are_judged_in_the_games_frame(tmp_path: Path) -> None:
    # shared frame: origin at A's start, absolute (4, 0); C's start is absolute (0, 4)
    notes = ["at [-4, 4]\n", "at [0, 0]\n"]
    script: list[Turn] = [
        {"C": append(STAY, notes[0], 0)},
        {"C": append(STAY, notes[1], len(notes[0]))},  # its own frame, not the game's: wrong
    ]
    path = tmp_path / "shared.sqlite"
    play(path, script, coordinates="shared")
    c = rows(path)["C"]
    assert (c.self_positions, c.self_positions_right) == (2, 1)


def test_compactions_landmarks_offsets_and_trail_doubts(tmp_path: Path) -> None:
    long = "".join(f"note {i:03d}: N open, S wall, came from S\n" for i in range(8))  # 320 chars
    assert len(long) >= COMPACTION_MIN_CHARS + 100
    summary = "summary: B = A + (6,0); trail lagged behind me\n"
    more = "x" * 150 + "\n"
    script: list[Turn] = [
        {"B": act(edit=(0, 0, long), radio="exit is 2W of the piano")},
        {"B": act(edit=(0, len(long), summary))},  # a compaction: 320 characters into 47
        {"B": act(edit=(len(summary), len(summary), more))},
        # removes 100 characters: too few to be a compaction
        {"B": act(edit=(len(summary), len(summary) + 100, ""))},
        {"B": act(edit=(0, 0, summary))},  # the same lines again: not new notes
        {"C": act(radio="at [1,1], no landmark")},
    ]
    path = tmp_path / "notes.sqlite"
    play(path, script)
    b, c = rows(path)["B"], rows(path)["C"]
    assert b.notebook_compactions == 1
    assert (b.radio_landmark, c.radio_landmark) == (1, 0)
    assert (b.offset_notes, b.trail_doubts) == (1, 1)
    assert rows(path)["team"].notebook_compactions == 1


def test_a_rolling_log_is_never_compacted_by_its_agent(tmp_path: Path) -> None:
    line = "y" * 60
    script: list[Turn] = [{"B": log_act(append=line)} for _ in range(8)]
    path = tmp_path / "log.sqlite"
    # 300 bytes: from the fifth append on, the engine drops the oldest lines to make room
    play(path, script, notebook_mode="rolling_log", notebook_max_bytes=300, notebook_turn_bytes=100)
    b = rows(path)["B"]
    assert b.notebook_compactions == 0 and b.plays == 8


def test_outages_count_in_no_behaviour_metric(tmp_path: Path) -> None:
    script: list[Turn] = [
        {"C": append(STAY, "t1: at [0, 0]\n", 0)},
        {"C": act(E)},
    ]
    path = tmp_path / "outage.sqlite"
    play(path, script, statuses={1: {"C": "outage"}, 2: {"C": "outage"}})
    c = rows(path)["C"]
    assert (c.plays, c.stays_while_searching, c.self_positions, c.exit_choices) == (0, 0, 0, 0)
    assert c.outages == 2 and c.status == "outage"
