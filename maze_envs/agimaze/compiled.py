"""Runtime representations of the AGI Maze engine: compiled labyrinth, player state, transition.

A :class:`~maze_envs.agimaze.types.Labyrinth` is validated pydantic data; stepping it through
pydantic would cost far too much per step. :func:`compile_labyrinth` turns it once into plain
dicts and tuples keyed by ``(row, col)`` cells, and the engine only reads those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from maze_envs.agimaze import narration
from maze_envs.agimaze.types import (
    BOMB_ACTIONS,
    DIRECTION_BITS,
    DIRECTION_DELTAS,
    DIRECTIONS,
    LOOK_ACTIONS,
    Labyrinth,
    Pos,
)

#: Markers for the four neighbours of a cell that are not an open cell.
WALL: Final = "wall"
MONOLITH: Final = "monolith"
EXIT: Final = "exit"

#: Operation codes of the action table.
MOVE: Final = 0
LOOK: Final = 1
BOMB: Final = 2

#: Longest ride of a river current, in cells.
RIVER_RIDE_CELLS: Final = 2


@dataclass(frozen=True, slots=True)
class PlayerState:
    """Everything about a game that can affect its future (hashable: a planner's search node).

    ``pos`` is the player's cell; after the win it is the cell just outside the exit gap, e.g.
    ``(0, -1)``, and ``won`` is set. The key, chest, exit key, boat and flashlight are unique, so
    holding one means it was taken from the board; grenade packs taken are the bits of
    ``packs_taken`` and blown walls are edge ids in ``blown``.
    """

    pos: Pos
    key: bool = False
    treasure: bool = False
    exit_key: bool = False
    boat: bool = False
    flashlight: bool = False
    grenades: int = 0
    packs_taken: int = 0
    blown: frozenset[int] = field(default_factory=frozenset)
    won: bool = False

    def moved(self, pos: Pos) -> PlayerState:
        """The same state with the player on ``pos`` (fast path of the engine)."""
        return make_state(
            pos,
            self.key,
            self.treasure,
            self.exit_key,
            self.boat,
            self.flashlight,
            self.grenades,
            self.packs_taken,
            self.blown,
            self.won,
        )


def _slot_setters() -> tuple[Any, ...]:
    names = (
        "pos",
        "key",
        "treasure",
        "exit_key",
        "boat",
        "flashlight",
        "grenades",
        "packs_taken",
        "blown",
        "won",
    )
    return tuple(PlayerState.__dict__[name].__set__ for name in names)


_SET_POS, _SET_KEY, _SET_TREASURE, _SET_EXIT_KEY, _SET_BOAT, _SET_FLASHLIGHT = _slot_setters()[:6]
_SET_GRENADES, _SET_PACKS, _SET_BLOWN, _SET_WON = _slot_setters()[6:]
_new_object = object.__new__


def make_state(
    pos: Pos,
    key: bool,
    treasure: bool,
    exit_key: bool,
    boat: bool,
    flashlight: bool,
    grenades: int,
    packs_taken: int,
    blown: frozenset[int],
    won: bool,
) -> PlayerState:
    """Build a PlayerState without the frozen-dataclass ``__init__`` (several times faster).

    The engine creates one state per step, and the generated ``__init__`` of a frozen dataclass
    routes every field through ``object.__setattr__``; the slot descriptors set them directly.
    All arguments are positional and required, so no default is skipped by mistake.
    """
    state = _new_object(PlayerState)
    _SET_POS(state, pos)
    _SET_KEY(state, key)
    _SET_TREASURE(state, treasure)
    _SET_EXIT_KEY(state, exit_key)
    _SET_BOAT(state, boat)
    _SET_FLASHLIGHT(state, flashlight)
    _SET_GRENADES(state, grenades)
    _SET_PACKS(state, packs_taken)
    _SET_BLOWN(state, blown)
    _SET_WON(state, won)
    return state


@dataclass(slots=True)
class Transition:
    """The result of one action: the next state, the narration and the formal observation.

    ``events`` is the same list as ``formal["events"]``; every call builds fresh objects.
    """

    state: PlayerState
    text: str
    formal: dict[str, Any]
    events: list[str]
    won: bool


@dataclass(frozen=True, slots=True)
class Ride:
    """Where the current takes a player standing on an arrow cell."""

    dest: Pos
    cells: int
    to_mouth: bool
    sentence: str


@dataclass(frozen=True, slots=True)
class CompiledLabyrinth:
    """Lookup tables built once from a labyrinth (see :func:`compile_labyrinth`)."""

    labyrinth: Labyrinth
    rows: int
    cols: int
    actions: tuple[str, ...]
    #: action -> (operation code, direction name, direction index)
    ops: dict[str, tuple[int, str, int]]
    #: cell -> its four neighbours in DIRECTIONS order: a cell, or WALL / MONOLITH / EXIT
    steps: dict[Pos, tuple[Pos | str, Pos | str, Pos | str, Pos | str]]
    #: (cell, direction index) -> (edge id, cell beyond) for every interior wall
    walls: dict[tuple[Pos, int], tuple[int, Pos]]
    #: cell -> content kind (formal ``observe`` names); absent means empty floor
    content: dict[Pos, str]
    rides: dict[Pos, Ride]
    arrow_flow: dict[Pos, str]
    pit_next: dict[Pos, Pos]
    #: grenade-pack cell -> (bit in PlayerState.packs_taken, grenade count)
    packs: dict[Pos, tuple[int, int]]
    needs_exit_key: bool
    exit_outside: Pos


def edge_id(cols: int, a: Pos, b: Pos) -> int:
    """Stable id of the interior edge between neighbours ``a`` and ``b``."""
    first, second = min(a, b), max(a, b)
    vertical = second[0] != first[0]  # the edge lies between two rows
    return (first[0] * cols + first[1]) * 2 + (1 if vertical else 0)


def compile_labyrinth(lab: Labyrinth) -> CompiledLabyrinth:
    """Build the lookup tables of ``lab``; do this once per labyrinth, not per step."""
    ops: dict[str, tuple[int, str, int]] = {}
    for i, d in enumerate(DIRECTIONS):
        ops[d] = (MOVE, d, i)
    actions = lab.actions
    for i, d in enumerate(DIRECTIONS):
        if LOOK_ACTIONS[i] in actions:
            ops[LOOK_ACTIONS[i]] = (LOOK, d, i)
        if BOMB_ACTIONS[i] in actions:
            ops[BOMB_ACTIONS[i]] = (BOMB, d, i)

    steps: dict[Pos, tuple[Pos | str, Pos | str, Pos | str, Pos | str]] = {}
    walls: dict[tuple[Pos, int], tuple[int, Pos]] = {}
    for r in range(lab.rows):
        for c in range(lab.cols):
            mask = lab.open_edges[r][c]
            entries: list[Pos | str] = []
            for i, d in enumerate(DIRECTIONS):
                dr, dc = DIRECTION_DELTAS[d]
                nb = (r + dr, c + dc)
                if mask & DIRECTION_BITS[d]:
                    entries.append(nb)
                elif lab.in_bounds(nb):
                    entries.append(WALL)
                    walls[((r, c), i)] = (edge_id(lab.cols, (r, c), nb), nb)
                elif lab.exit.cell == (r, c) and lab.exit.side == d:
                    entries.append(EXIT)
                else:
                    entries.append(MONOLITH)
            steps[(r, c)] = (entries[0], entries[1], entries[2], entries[3])

    content: dict[Pos, str] = {}
    for name, kind in (
        ("key", "key"),
        ("chest", "treasure"),
        ("exit_key", "exit_key"),
        ("boat", "boat"),
        ("flashlight", "flashlight"),
    ):
        pos = getattr(lab, name)
        if pos is not None:
            content[pos] = kind
    packs: dict[Pos, tuple[int, int]] = {}
    for i, pack in enumerate(lab.grenade_packs):
        content[pack.cell] = "grenade_pack"
        packs[pack.cell] = (1 << i, pack.count)

    rides: dict[Pos, Ride] = {}
    arrow_flow: dict[Pos, str] = {}
    for river in lab.rivers:
        path = [*river.cells, river.mouth]
        content[river.mouth] = "river_mouth"
        for i, cell in enumerate(river.cells):
            content[cell] = "river"
            arrow_flow[cell] = river.flow_direction(i)
            end = min(i + RIVER_RIDE_CELLS, len(river.cells))
            moves = [river.flow_direction(j) for j in range(i, end)]
            to_mouth = end == len(river.cells)
            rides[cell] = Ride(path[end], end - i, to_mouth, narration.river_ride(moves, to_mouth))

    pit_next: dict[Pos, Pos] = {}
    for cycle in lab.pits:
        for i, cell in enumerate(cycle.cells):
            content[cell] = "pit"
            pit_next[cell] = cycle.cells[(i + 1) % len(cycle.cells)]

    dr, dc = DIRECTION_DELTAS[lab.exit.side]
    exit_outside = (lab.exit.cell[0] + dr, lab.exit.cell[1] + dc)
    return CompiledLabyrinth(
        labyrinth=lab,
        rows=lab.rows,
        cols=lab.cols,
        actions=tuple(actions),
        ops=ops,
        steps=steps,
        walls=walls,
        content=content,
        rides=rides,
        arrow_flow=arrow_flow,
        pit_next=pit_next,
        packs=packs,
        needs_exit_key=lab.exit_key is not None,
        exit_outside=exit_outside,
    )
