"""The behaviour metrics of the Maze Escape study's later questions, per agent of one game.

Each is counted from the journal alone (what the agent saw, wrote and sent, its decisions'
statuses, and its true cells rebuilt by :func:`maze_envs.reading.tracks.escape_track`), over
the policy's own decisions (status ``ok``): a fallback or an outage never counts. The definitions
are the functions named below, each defined once:

``plays``
    Decisions of the policy's play (status ``ok``).
``stays_while_searching``
    Turns waiting for messages: STAYs chosen before the agent first stood on the exit
    (:func:`maze_envs.metrics.stays_while_searching`).
``self_positions``, ``self_positions_right``
    Coordinate pairs the agent wrote about itself in the new lines of its notebook
    (:func:`~maze_envs.bench.analysis.patterns.self_positions`; a line already in its notebook,
    moved by a rewrite, is not new), and of those the ones equal to its true position in its
    frame (:func:`maze_envs.metrics.position_right`).
``notebook_compactions``
    Edits that rewrote its notebook into less text (:func:`maze_envs.metrics.is_compaction`).
``exit_choices``, ``untried_exit_moves``
    Moves made on a cell that offered a choice between untried and used exits, and of those the
    ones through an untried exit (:func:`maze_envs.metrics.exit_choice`).
``exhausted_turns``
    Decisions made on a cell whose every open side the agent had already moved through
    (:func:`maze_envs.metrics.is_exhausted`).
``radio_landmark``
    Messages delivered that name one of the maze's landmarks
    (:func:`~maze_envs.bench.analysis.patterns.names_landmark`).
``offset_notes``, ``trail_doubts``
    New notebook lines stating an offset between two agents' frames
    (:func:`~maze_envs.bench.analysis.patterns.states_offset`), and lines doubting the trail
    (:func:`~maze_envs.bench.analysis.patterns.doubts_trail`).

A move's "exits" are the open sides of the cell (the exit's doorway is not one: it leads
nowhere); a side is used once the agent has moved through it, in or out.
"""

from __future__ import annotations

from typing import Any, Final

from maze_envs.bench.analysis.patterns import (
    added_text,
    doubts_trail,
    names_landmark,
    self_positions,
    states_offset,
)
from maze_envs.escape.vocab import OPPOSITE_DIRECTION
from maze_envs.metrics import (
    Step,
    exit_choice,
    is_compaction,
    is_exhausted,
    is_play,
    position_right,
    stays_while_searching,
)
from maze_envs.reading.text import common_affixes
from maze_envs.reading.tracks import EscapeTrack

_SIDES: Final = "NESW"
_OPPOSITE: Final[dict[str, str]] = dict(OPPOSITE_DIRECTION.items())
#: The fields this module adds to an agent's row, in order (the team row sums them).
FIELDS: Final = (
    "plays",
    "stays_while_searching",
    "self_positions",
    "self_positions_right",
    "notebook_compactions",
    "exit_choices",
    "untried_exit_moves",
    "exhausted_turns",
    "radio_landmark",
    "offset_notes",
    "trail_doubts",
)


def _notebook(stored: Any) -> str:
    if isinstance(stored, dict) and isinstance(stored.get("notebook"), str):
        return str(stored["notebook"])
    return ""


def frame_of(track: EscapeTrack, agent: str) -> list[tuple[int, int]]:
    """The agent's ``[x, y]`` of every cell, in the game's coordinate frame (its own frame, with
    the origin at its start, when the game shows no coordinates)."""
    board = track.board
    index = track.agents.index(agent)
    frame = track.config.coordinates
    if frame == "absolute":
        origin = (0, 0)
    else:
        origin = board.xy[board.starts[0 if frame == "shared" else index]]
    return [(x - origin[0], y - origin[1]) for x, y in board.xy]


def _new_lines(before: str, after: str) -> list[str]:
    """The lines of the text an edit added that were not already in the notebook."""
    return [
        line
        for line in added_text(before, after).splitlines()
        if line.strip() and line.strip() not in before
    ]


def study_metrics(track: EscapeTrack, agent: str, steps: list[Step]) -> dict[str, int]:
    """The fields of :data:`FIELDS` for one agent (see the module docstring); ``steps`` are its
    decisions at turns 1 to the last (:func:`~.escape_metrics.escape_steps`)."""
    turns, cells, moves = track.turns, track.cells[agent], track.moves[agent]
    board = track.board
    frame = frame_of(track, agent)
    landmarks = [name for _, name in track.layout.landmarks]
    splice = track.config.notebook_mode == "splice"
    used: dict[int, set[str]] = {}
    out = dict.fromkeys(FIELDS, 0)
    searching: list[bool] = []
    reached = False
    for t in range(1, len(turns)):
        step = steps[t - 1]
        here = cells[t - 1]
        searching.append(not reached)
        reached = reached or cells[t] == board.exit_cell
        if not is_play(step):
            continue
        out["plays"] += 1
        opened = [d for k, d in enumerate(_SIDES) if board.step_to[here][k] >= 0]
        tried = used.get(here, set())
        move = moves[t]
        if move in _OPPOSITE:
            choice = exit_choice(move, opened, tried)
            if choice is not None:
                out["exit_choices"] += 1
                out["untried_exit_moves"] += choice
        out["exhausted_turns"] += is_exhausted(opened, tried)
        if track.results[agent][t] == "moved" and move in _OPPOSITE:
            used.setdefault(here, set()).add(move)
            used.setdefault(cells[t], set()).add(_OPPOSITE[move])
        before = _notebook(turns[t - 1].observations.get(agent))
        after = _notebook(turns[t].observations.get(agent))
        if before != after:
            if splice and is_compaction(before, after, common_affixes(before, after)):
                out["notebook_compactions"] += 1
            for line in _new_lines(before, after):
                for written in self_positions(line):
                    out["self_positions"] += 1
                    out["self_positions_right"] += position_right(
                        written, frame[here], frame[cells[t]]
                    )
                out["offset_notes"] += states_offset(line)
                out["trail_doubts"] += doubts_trail(line)
        action = turns[t].actions.get(agent)
        message = action.get("radio") if isinstance(action, dict) else None
        if step.radio_sent and isinstance(message, str):
            out["radio_landmark"] += names_landmark(message, landmarks)
    out["stays_while_searching"] = stays_while_searching(steps, searching)
    return out
