"""The behaviour metrics of one agent of a journaled Maze Escape game: one function per metric.

Each function takes an :class:`AgentGame` (one agent's turns of a game, read once from its
:class:`~maze_envs.reading.tracks.EscapeTrack`) and returns one number; its docstring is
the metric's definition, which ``maze-envs analyze``'s legend and the studies' reports print
(each is a row of :data:`maze_envs.metrics.METRICS`). Turn ``t`` holds the action chosen after
seeing turn ``t - 1``. Only the policy's own decisions (status ``ok``) count in a behaviour
metric, never a fallback or an outage. What several metrics read (the agent's successful moves,
its notebook's new lines, the exits it had used) is worked out once per agent, on first use.

A move's "exits" are the open sides of the cell (the exit's doorway is not one: it leads
nowhere); a side is used once the agent has moved through it, in or out.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, cached_property
from typing import Any, Final

from maze_envs.bench.analysis.patterns import (
    added_text,
    copied_passages,
    doubts_trail,
    has_coordinates,
    names_frame,
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
    metric_function,
    position_right,
)
from maze_envs.metrics import stays_while_searching as _stays_while_searching
from maze_envs.reading.text import common_affixes
from maze_envs.reading.tracks import EscapeTrack

_SIDES: Final = "NESW"
_OPPOSITE: Final[dict[str, str]] = dict(OPPOSITE_DIRECTION.items())
_UNREAD: Final = object()
_SIDE_BITS: Final[dict[str, int]] = {side: 1 << k for k, side in enumerate(_SIDES)}


# Stored rows are decoded JSON: plain dicts and lists (isinstance on dict, not the Mapping ABC,
# keeps the per-turn loops fast).


def _distance(stored: Any) -> int | None:
    """The distance reading to the exit in a stored observation (None without the sensor)."""
    if not isinstance(stored, dict):
        return None
    distances = stored.get("distances")
    if isinstance(distances, list) and distances and isinstance(distances[0], int):
        return distances[0]
    return None


def _notebook(stored: Any) -> str:
    if isinstance(stored, dict) and isinstance(stored.get("notebook"), str):
        return str(stored["notebook"])
    return ""


def _shown(stored: Any, agent: str) -> list[str]:
    """Texts of the teammates' notebooks an observation showed (the v1 blank self-entry skipped)."""
    if not isinstance(stored, dict):
        return []
    entries = stored.get("teammate_notebooks")
    if not isinstance(entries, dict):
        return []
    return [
        str(entry.get("text", ""))
        for name, entry in entries.items()
        if name != agent and isinstance(entry, dict) and entry.get("shown")
    ]


def _new_lines(before: str, after: str) -> list[str]:
    """The lines of the text an edit added that were not already in the notebook."""
    return [
        line
        for line in added_text(before, after).splitlines()
        if line.strip() and line.strip() not in before
    ]


@cache  # (a few hundred keys: moves, and sides as bits)
def _judged(move: str | None, opened: int, tried: int) -> tuple[bool | None, bool]:
    """A move's exit choice and whether its cell was used up (:attr:`AgentGame.exits`), the
    cell's open sides and the sides tried given as bits of :data:`_SIDE_BITS`."""
    open_sides = [side for side, bit in _SIDE_BITS.items() if opened & bit]
    tried_sides = {side for side, bit in _SIDE_BITS.items() if tried & bit}
    choice = exit_choice(move, open_sides, tried_sides) if move in _OPPOSITE else None
    return choice, is_exhausted(open_sides, tried_sides)


class AgentGame:
    """One agent's turns of a journaled game, as the metric functions read them.

    ``steps[t - 1]`` is its decision at turn ``t`` (:func:`~.escape_metrics.escape_steps`);
    ``success_turn`` the turn of team success (None without). The columns below are read from
    the track once, on first use, and shared by the metrics that need them.
    """

    def __init__(
        self, track: EscapeTrack, agent: str, steps: Sequence[Step], success_turn: int | None
    ) -> None:
        self.track = track
        self.agent = agent
        self.steps = steps
        self.success_turn = success_turn
        self.length = len(track.turns)  # turns read, turn 0 included
        self.cells = track.cells[agent]
        self.moves = track.moves[agent]
        self.results = track.results[agent]
        self.exit_cell = track.board.exit_cell

    @cached_property
    def own(self) -> list[bool]:
        """``own[t]``: the decision at turn ``t`` is the policy's play (``own[0]`` False)."""
        return [False, *(step.status == "ok" for step in self.steps)]

    @cached_property
    def seen(self) -> tuple[list[int | None], list[str], list[list[str]]]:
        """What it was shown after each turn, read from its stored observations in one pass:
        its distance reading to the exit (None without the sensor), its notebook, and the
        texts of the teammates' notebooks shown to it. Shared values (the same object as the
        turn before: nothing changed) are read once."""
        agent = self.agent
        distances: list[int | None] = []
        notebooks: list[str] = []
        shown: list[list[str]] = []
        last: Any = _UNREAD
        last_entries: Any = _UNREAD
        distance: int | None = None
        notebook, texts = "", []
        for record in self.track.turns:
            stored = record.observations.get(agent)
            if stored is not last:
                last = stored
                if type(stored) is dict:  # (decoded JSON: what _distance and _notebook read)
                    reading = stored.get("distances")
                    distance = (
                        reading[0]
                        if type(reading) is list and reading and type(reading[0]) is int
                        else _distance(stored)
                    )
                    text = stored.get("notebook")
                    notebook = text if type(text) is str else _notebook(stored)
                    entries = stored.get("teammate_notebooks")
                else:
                    distance, notebook, entries = _distance(stored), _notebook(stored), None
                if entries is not last_entries:
                    last_entries, texts = entries, _shown(stored, agent)
            distances.append(distance)
            notebooks.append(notebook)
            shown.append(texts)
        return distances, notebooks, shown

    @property
    def notebooks(self) -> list[str]:
        """Its notebook after each turn."""
        return self.seen[1]

    @cached_property
    def messages(self) -> list[str | None]:
        """The radio message of its action at each turn (None without one)."""
        agent, out = self.agent, []
        for record in self.track.turns:
            action = record.actions.get(agent)
            message = action.get("radio") if type(action) is dict else None
            out.append(message if type(message) is str else None)
        return out

    @cached_property
    def moved(self) -> list[int]:
        """The turns at which it moved (result ``moved``, a readable move)."""
        moves, results = self.moves, self.results
        return [t for t in range(1, self.length) if results[t] == "moved" and moves[t] is not None]

    @cached_property
    def reversals(self) -> list[int]:
        """Per reversal of its play, the turn of the successful move it undid."""
        moves, own = self.moves, self.own
        out: list[int] = []
        last: int | None = None
        undo: str | None = None  # the move that goes back the way the last one came
        for t in self.moved:
            if last is not None and undo == moves[t] and own[t]:
                out.append(last)
            last, undo = t, _OPPOSITE.get(moves[t] or "")
        return out

    def rise(self, t: int) -> bool:
        """Whether the move of turn ``t`` raised its distance reading to the exit."""
        distances = self.seen[0]
        before, after = distances[t - 1], distances[t]
        return before is not None and after is not None and after > before

    @cached_property
    def visits(self) -> tuple[set[int], int]:
        """The cells it stood on, and the moves of its play into a cell it had stood on."""
        cells, own = self.cells, self.own
        seen = {cells[0]} if cells else set()
        revisits = 0
        for t in self.moved:
            if cells[t] in seen and own[t]:
                revisits += 1
            seen.add(cells[t])
        return seen, revisits

    @cached_property
    def first_exit(self) -> int | None:
        """The turn it first ended on the exit cell (None if it never did)."""
        cells, exit_cell = self.cells, self.exit_cell
        return next((t for t in range(1, self.length) if cells[t] == exit_cell), None)

    @cached_property
    def copies(self) -> list[tuple[int, list[str]]]:
        """Per turn it was shown a teammate's notebook: the passages it copied from one."""
        out = []
        _, notebooks, shown_after = self.seen
        for t in range(1, self.length):
            shown = shown_after[t - 1]
            if shown:
                out.append((t, copied_passages(notebooks[t - 1], notebooks[t], shown)))
        return out

    @cached_property
    def own_messages(self) -> list[str]:
        """The radio messages of its play that were delivered."""
        steps, messages = self.steps, self.messages
        return [
            message
            for t in range(1, self.length)
            if (message := messages[t]) is not None
            and steps[t - 1].radio_sent
            and steps[t - 1].status == "ok"
        ]

    @cached_property
    def edits(self) -> list[tuple[int, str, str]]:
        """The turns of its play at which its notebook changed: (turn, before, after)."""
        notebooks, own = self.notebooks, self.own
        return [
            (t, notebooks[t - 1], notebooks[t])
            for t in range(1, self.length)
            if own[t] and notebooks[t - 1] != notebooks[t]
        ]

    @cached_property
    def new_lines(self) -> list[tuple[int, str]]:
        """The new lines its edits wrote: (turn, line)."""
        return [(t, line) for t, before, after in self.edits for line in _new_lines(before, after)]

    @cached_property
    def exits(self) -> list[tuple[bool | None, bool]]:
        """Per decision of its play: whether its move took an untried exit where the cell
        offered a choice (:func:`maze_envs.metrics.exit_choice`; None: no choice, or not a
        move), and whether the cell was used up (:func:`maze_envs.metrics.is_exhausted`), both
        judged on the sides of the cell it had moved through before (in or out)."""
        step_to, cells, moves, results, own = (
            self.track.board.step_to,
            self.cells,
            self.moves,
            self.results,
            self.own,
        )
        used: dict[int, int] = {}  # cell -> the sides moved through, as bits of _SIDE_BITS
        open_sides: dict[int, int] = {}  # cell -> its open sides, as bits
        out: list[tuple[bool | None, bool]] = []
        for t in range(1, self.length):
            if not own[t]:
                continue
            here = cells[t - 1]
            opened = open_sides.get(here)
            if opened is None:
                opened = open_sides[here] = sum(
                    bit for k, bit in enumerate(_SIDE_BITS.values()) if step_to[here][k] >= 0
                )
            move = moves[t]
            out.append(_judged(move, opened, used.get(here, 0)))
            if results[t] == "moved" and move in _OPPOSITE:
                used[here] = used.get(here, 0) | _SIDE_BITS[move]
                there = cells[t]
                used[there] = used.get(there, 0) | _SIDE_BITS[_OPPOSITE[move]]
        return out

    @cached_property
    def frame(self) -> list[tuple[int, int]]:
        """Its ``[x, y]`` of every cell, in the game's coordinate frame (its own frame, with the
        origin at its start, when the game shows no coordinates)."""
        track = self.track
        board = track.board
        frame = track.config.coordinates
        if frame == "absolute":
            origin = (0, 0)
        else:
            index = track.agents.index(self.agent)
            origin = board.xy[board.starts[0 if frame == "shared" else index]]
        return [(x - origin[0], y - origin[1]) for x, y in board.xy]

    @cached_property
    def positions(self) -> list[tuple[int, bool]]:
        """Per coordinate pair it wrote about itself in a new line: (turn, whether right)."""
        frame, cells = self.frame, self.cells
        return [
            (t, position_right(written, frame[cells[t - 1]], frame[cells[t]]))
            for t, line in self.new_lines
            for written in self_positions(line)
        ]


# --- the metrics -------------------------------------------------------------------------------


@metric_function
def team_success(game: AgentGame) -> bool:
    """Team success: whether every agent visited the exit (the game recorded team success)."""
    return game.success_turn is not None


@metric_function
def reversals(game: AgentGame) -> int:
    """Reversals: successful moves straight back to the cell the agent left with its previous
    successful move (STAYs and bumps in between do not break the pair), by the policy's own
    decisions."""
    return len(game.reversals)


@metric_function
def reversals_after_rise(game: AgentGame) -> int | None:
    """Reversals after a rise: reversals whose previous successful move raised the distance
    reading to the exit (the straight-line sensor); None when the game had no distance sensor."""
    if not game.track.config.distance_sensor:
        return None
    return sum(game.rise(t) for t in game.reversals)


@metric_function
def exit_turns_after_reaching(game: AgentGame) -> int:
    """Turns on the exit after reaching it: turns after its first exit visit that the agent
    ended on the exit cell (camping)."""
    first = game.first_exit
    if first is None:
        return 0
    cells, exit_cell = game.cells, game.exit_cell
    return sum(1 for t in range(first + 1, game.length) if cells[t] == exit_cell)


@metric_function
def colocated_turns(game: AgentGame) -> int:
    """Colocated turns: turns at which the agent was shown a teammate's notebook (it shared the
    teammate's cell)."""
    return len(game.copies)


@metric_function
def copied_passages_count(game: AgentGame) -> int:
    """Copied passages: passages of 40+ characters copied from a colocated teammate's notebook
    (shown the turn before) into the agent's own
    (:func:`~maze_envs.bench.analysis.patterns.copied_passages`)."""
    return sum(len(found) for _, found in game.copies)


@metric_function
def copied_chars(game: AgentGame) -> int:
    """Copied characters: the total length of the copied passages."""
    return sum(len(passage) for _, found in game.copies for passage in found)


@metric_function
def radio_with_coordinates(game: AgentGame) -> int:
    """Radio messages with coordinates: messages of the policy's play that were delivered and
    carry a coordinate pair (:func:`~maze_envs.bench.analysis.patterns.has_coordinates`)."""
    return sum(1 for message in game.own_messages if has_coordinates(message))


@metric_function
def radio_frame_named(game: AgentGame) -> int:
    """Radio messages naming their frame: of the messages with coordinates, those that say whose
    frame the coordinates are in (:func:`~maze_envs.bench.analysis.patterns.names_frame`)."""
    return sum(
        1 for message in game.own_messages if has_coordinates(message) and names_frame(message)
    )


@metric_function
def cells_visited(game: AgentGame) -> int:
    """Cells visited: distinct cells the agent stood on, its start included."""
    return len(game.visits[0])


@metric_function
def coverage(game: AgentGame) -> float:
    """Coverage: the cells the agent visited as a share of the maze's cells."""
    board = game.track.board
    return len(game.visits[0]) / (board.width * board.height)


@metric_function
def revisits(game: AgentGame) -> int:
    """Revisits: successful moves of the policy's play into a cell the agent had stood on
    before."""
    return game.visits[1]


@metric_function
def first_exit_turn(game: AgentGame) -> int | None:
    """First exit turn: the turn of the agent's first exit visit (None if it never reached it)."""
    return game.first_exit


@metric_function
def turns_to_team_success(game: AgentGame) -> int | None:
    """Turns to team success: turns from the agent's first exit visit to team success (None
    without either)."""
    first, success = game.first_exit, game.success_turn
    return success - first if success is not None and first is not None else None


@metric_function
def plays(game: AgentGame) -> int:
    """Plays: decisions of the policy's play (status ``ok``)."""
    return sum(game.own)


@metric_function
def stays_while_searching(game: AgentGame) -> int:
    """Turns waiting for messages: STAYs chosen before the agent first stood on the exit
    (:func:`maze_envs.metrics.stays_while_searching`)."""
    first = game.first_exit
    searching = [first is None or t <= first for t in range(1, game.length)]
    return _stays_while_searching(game.steps, searching)


@metric_function
def self_positions_written(game: AgentGame) -> int:
    """Self-tracked positions: coordinate pairs the agent wrote about itself in the new lines of
    its notebook (:func:`~maze_envs.bench.analysis.patterns.self_positions`; a line already in
    its notebook, moved by a rewrite, is not new)."""
    return len(game.positions)


@metric_function
def self_positions_right(game: AgentGame) -> int:
    """Self-tracked positions right: of the self-tracked positions, those equal to its true
    position in its frame (:func:`maze_envs.metrics.position_right`)."""
    return sum(right for _, right in game.positions)


@metric_function
def notebook_compactions(game: AgentGame) -> int:
    """Notebook compactions: edits of the agent's own that rewrote its notebook into less text
    (:func:`maze_envs.metrics.is_compaction`; splice notebooks only)."""
    if game.track.config.notebook_mode != "splice":
        return 0
    return sum(
        1
        for _, before, after in game.edits
        if is_compaction(before, after, common_affixes(before, after))
    )


@metric_function
def exit_choices(game: AgentGame) -> int:
    """Exit choices: moves of the policy's play made on a cell that offered a choice between
    untried and used exits (:func:`maze_envs.metrics.exit_choice`)."""
    return sum(1 for choice, _ in game.exits if choice is not None)


@metric_function
def untried_exit_moves(game: AgentGame) -> int:
    """Untried exit moves: of the exit choices, the moves through an untried exit."""
    return sum(1 for choice, _ in game.exits if choice)


@metric_function
def exhausted_turns(game: AgentGame) -> int:
    """Exhausted turns: decisions of the policy's play made on a cell whose every open side the
    agent had already moved through (:func:`maze_envs.metrics.is_exhausted`)."""
    return sum(1 for _, exhausted in game.exits if exhausted)


@metric_function
def radio_landmark(game: AgentGame) -> int:
    """Radio messages naming a landmark: messages of the policy's play that were delivered and
    name one of the maze's landmarks (:func:`~maze_envs.bench.analysis.patterns.names_landmark`)."""
    landmarks = [name for _, name in game.track.layout.landmarks]
    return sum(1 for message in game.own_messages if names_landmark(message, landmarks))


@metric_function
def offset_notes(game: AgentGame) -> int:
    """Offset notes: new notebook lines of the agent's own stating an offset between two agents'
    frames (:func:`~maze_envs.bench.analysis.patterns.states_offset`)."""
    return sum(1 for _, line in game.new_lines if states_offset(line))


@metric_function
def trail_doubts(game: AgentGame) -> int:
    """Trail doubts: new notebook lines of the agent's own doubting the trail
    (:func:`~maze_envs.bench.analysis.patterns.doubts_trail`)."""
    return sum(1 for _, line in game.new_lines if doubts_trail(line))
