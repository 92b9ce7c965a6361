"""The AGI Maze explorer's world model: what it has learned about a labyrinth, and planning on it.

A :class:`Frame` holds facts in one coordinate frame: the *main* frame is the labyrinth's own
``(row, col)`` (the task info gives the board size and the start), a *lost* frame is relative to
the pit the player climbed out of when it does not know where that pit is.

Facts are only ever learned from what happened to the player:

* edges: ``open`` (it moved through), ``wall`` / ``monolith`` (it bumped), ``exit`` (the exit
  refused it, or let it out); on a board of known size an edge leaving the board is the exit or
  the monolith, and once the exit is known every other such edge is the monolith;
* contents: the tile kind the formal observation names on entering a cell (``key``,
  ``treasure`` for the chest, ``river``, ``pit``, ...); a cell keeps the kind first seen, since a
  taken item later reads as an empty tile;
* river flow: each ride names its directions, so the flow of every arrow it passed is known;
* pit destinations: learned when the player finds out where it climbed out.

:func:`outcome` predicts where a move leads from these facts (or says the fact that is missing),
and :func:`plan` searches breadth-first over the predictions for the nearest goal or, failing
that, the nearest informative unknown ("frontier"). Its risk-aware order is for a player that
holds everything and lacks only the exit, where a river may be a trap: the frame edges of known
cells before any unknown cell.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from maze_envs.agimaze.types import DIRECTION_DELTAS, DIRECTIONS, OPPOSITE_DIRECTION, Labyrinth

Cell = tuple[int, int]
EdgeFact = Literal["open", "wall", "monolith", "exit"]

OPPOSITE: Final = OPPOSITE_DIRECTION
#: Tile kinds that hold an item the player takes by walking onto them.
ITEM_KINDS: Final = frozenset({"key", "treasure", "exit_key", "boat", "flashlight", "grenade_pack"})
#: What a predicted move may lead to besides a cell.
WIN: Final = "win"
PROBE: Final = "probe"  # an unknown that may reveal a new cell or the exit
SHORTCUT: Final = "shortcut"  # an unknown edge between two cells already known
PIT: Final = "pit"  # a pit whose far end is unknown: the player would be lost there
FRAME_EDGE: Final = "frame_edge"  # an unknown edge of a known cell on the frame: exit or monolith
#: Search order of the unknowns: what may reveal a new cell by walking, then a pit of unknown
#: destination (the player is lost after it, so every walkable place comes first), then edges
#: between cells already known.
RANK: Final[dict[str, int]] = {FRAME_EDGE: 0, PROBE: 0, PIT: 1, SHORTCUT: 2}
#: The risk-aware order (``plan(..., frame_edges_first=True)``): a frame edge of a known cell
#: first (a bump costs a step, never the game), then the rest, among them unknown cells, which
#: may be a river that carries the player into a trap.
RISK_AWARE_RANK: Final[dict[str, int]] = {FRAME_EDGE: 0, PROBE: 1, PIT: 2, SHORTCUT: 3}
#: The order while lost after a pit: a pit of unknown destination last, after edges between
#: known cells, which can still tell apart the places the player may be (a pit loses them).
LOST_RANK: Final[dict[str, int]] = {FRAME_EDGE: 0, PROBE: 0, SHORTCUT: 1, PIT: 2}


def neighbour(cell: Cell, direction: str) -> Cell:
    dr, dc = DIRECTION_DELTAS[direction]
    return (cell[0] + dr, cell[1] + dc)


@dataclass
class Frame:
    """Facts about the labyrinth in one coordinate frame (bounds known only in the main one)."""

    rows: int | None = None
    cols: int | None = None
    content: dict[Cell, str] = field(default_factory=dict)
    edges: dict[tuple[Cell, str], EdgeFact] = field(default_factory=dict)
    flow: dict[Cell, str] = field(default_factory=dict)
    pit_dest: dict[Cell, Cell] = field(default_factory=dict)
    pit_cycle: dict[Cell, int] = field(default_factory=dict)
    exit: tuple[Cell, str] | None = None
    #: pits whose far end could not be placed: not worth stepping into again
    dead_pits: set[Cell] = field(default_factory=set)

    @property
    def bounded(self) -> bool:
        return self.rows is not None and self.cols is not None

    def inside(self, cell: Cell) -> bool:
        assert self.rows is not None and self.cols is not None
        return 0 <= cell[0] < self.rows and 0 <= cell[1] < self.cols

    # --- learning ----------------------------------------------------------------------------
    def set_edge(self, cell: Cell, direction: str, fact: EdgeFact) -> None:
        self.edges[(cell, direction)] = fact
        if fact in ("open", "wall"):
            self.edges[(neighbour(cell, direction), OPPOSITE[direction])] = fact
        elif fact == "exit":
            self.exit = (cell, direction)

    def note_content(self, cell: Cell, kind: str) -> None:
        """Record the tile kind seen on ``cell`` (an emptied item cell keeps its item kind)."""
        known = self.content.get(cell)
        if known is None or (known == "empty" and kind != "empty"):
            self.content[cell] = kind

    # --- questions ---------------------------------------------------------------------------
    def edge(self, cell: Cell, direction: str) -> EdgeFact | None:
        """The known or implied kind of an edge (``None``: unknown)."""
        fact = self.edges.get((cell, direction))
        if fact is not None or not self.bounded:
            return fact
        if self.inside(neighbour(cell, direction)):
            return None
        if self.exit is None:
            return None  # a frame edge: the monolith, or maybe the exit
        return "exit" if self.exit == (cell, direction) else "monolith"

    def ride(self, start: Cell) -> Cell | None:
        """Where the current takes a player on the arrow ``start`` (``None``: not known)."""
        cell = start
        for hop in range(2):
            flow = self.flow.get(cell)
            if flow is None:
                return None
            cell = neighbour(cell, flow)
            kind = self.content.get(cell)
            if kind == "river_mouth":
                break
            if kind is None and hop == 0:
                return None  # the mouth (stop) or another arrow (go on)?
        return cell


def outcome(frame: Frame, cell: Cell, direction: str, boat: bool, can_win: bool) -> Cell | str:
    """The predicted result of moving ``direction`` from ``cell``.

    A cell (possibly ``cell`` itself: the player stays), :data:`WIN`, or what is unknown:
    :data:`PROBE`, :data:`SHORTCUT` or :data:`PIT`.
    """
    fact = frame.edge(cell, direction)
    if fact is None:
        there = neighbour(cell, direction)
        if frame.bounded and not frame.inside(there):
            return PROBE  # the monolith, or the exit
        kind = frame.content.get(there)
        if kind is None:
            return PROBE
        if kind == "pit" and there not in frame.pit_dest and there not in frame.dead_pits:
            return PIT  # if the edge is open, the player falls in
        return SHORTCUT
    if fact in ("wall", "monolith"):
        if frame.content.get(cell) == "river" and not boat:
            ride = frame.ride(cell)
            return PROBE if ride is None else ride
        return cell
    if fact == "exit":
        return WIN if can_win else cell
    there = neighbour(cell, direction)
    kind = frame.content.get(there)
    if kind is None:
        return PROBE
    if kind == "river" and not boat:
        ride = frame.ride(there)
        return PROBE if ride is None else ride
    if kind == "pit":
        if there in frame.pit_dest:
            return frame.pit_dest[there]
        return there if there in frame.dead_pits else PIT
    return there


@dataclass(frozen=True)
class Plan:
    """The first move of the chosen plan, what it aims at and its length."""

    action: str
    aim: Literal["win", "goal", "probe", "shortcut", "pit", "frame_edge"]
    length: int


def plan(
    frame: Frame,
    start: Cell,
    *,
    boat: bool,
    can_win: bool,
    goals: Iterable[Cell] = (),
    order: Sequence[str] = DIRECTIONS,
    frame_edges_first: bool = False,
    pits_last: bool = False,
) -> Plan | None:
    """The shortest way to a win or a goal cell; else to the cheapest unknown worth learning.

    Breadth-first over predicted moves; unknowns are ranked by :data:`RANK`, nearest first.
    ``frame_edges_first`` ranks the unknown frame edges of known cells before every other
    unknown (:data:`RISK_AWARE_RANK`; on a board of known size); ``pits_last`` ranks pits of
    unknown destination after every other unknown (:data:`LOST_RANK`). ``order`` is the order
    moves are tried in, which breaks ties between equally good plans.
    """
    goal_set = set(goals)
    risk_aware = frame_edges_first and frame.bounded
    ranks = LOST_RANK if pits_last else RISK_AWARE_RANK if risk_aware else RANK
    first: dict[Cell, str | None] = {start: None}
    depth = {start: 0}
    queue = deque([start])
    best: tuple[tuple[int, int], str, str] | None = None  # ((rank, cost), action, aim)
    while queue:
        cell = queue.popleft()
        for direction in order:
            result = outcome(frame, cell, direction, boat, can_win)
            move = first[cell] or direction
            cost = depth[cell] + 1
            if result == WIN:
                return Plan(move, "win", cost)
            if isinstance(result, str):
                if risk_aware and result == PROBE and not frame.inside(neighbour(cell, direction)):
                    result = FRAME_EDGE
                key = (ranks[result], cost)
                if best is None or key < best[0]:
                    best = (key, move, result)
                continue
            if result in first:
                continue
            first[result] = move
            depth[result] = cost
            if result in goal_set:
                return Plan(move, "goal", cost)
            queue.append(result)
    if best is None:
        return None
    (_, cost), move, aim = best
    return Plan(move, aim, cost)  # type: ignore[arg-type]


# --- predicting what a move will show -----------------------------------------------------------


def ride_moves(frame: Frame, start: Cell) -> tuple[str, ...] | None:
    """The directions the current carries a player on the arrow ``start`` (``None``: unknown)."""
    cell, moves = start, []
    for hop in range(2):
        flow = frame.flow.get(cell)
        if flow is None:
            return None
        moves.append(flow)
        cell = neighbour(cell, flow)
        kind = frame.content.get(cell)
        if kind == "river_mouth":
            break
        if kind is None and hop == 0:
            return None  # the mouth (stop) or another arrow (go on)?
    return tuple(moves)


def expect(
    frame: Frame, here: Cell, direction: str, boat: bool, held: Mapping[str, object]
) -> tuple[object, ...] | None:
    """What moving ``direction`` from ``here`` will show, as far as ``frame`` knows.

    ``("exit",)``; ``("wall" | "monolith", ride directions)``; ``("moved", tile seen, ride
    directions, pit)``; ``None`` when the frame does not know. Two positions whose expectations
    differ are told apart by making the move.
    """
    fact = frame.edge(here, direction)
    if fact is None:
        return None
    if fact == "exit":
        return ("exit",)
    if fact in ("wall", "monolith"):
        moves: tuple[str, ...] | None = ()
        if frame.content.get(here) == "river" and not boat:
            moves = ride_moves(frame, here)
        return None if moves is None else (fact, moves)
    there = neighbour(here, direction)
    kind = frame.content.get(there)
    if kind is None or kind == "grenade_pack":  # which packs were taken is not known
        return None
    shown = "empty" if kind in ITEM_KINDS and held.get(kind) else kind
    if kind == "river" and not boat:
        moves = ride_moves(frame, there)
        return None if moves is None else ("moved", shown, moves, False)
    return ("moved", shown, (), kind == "pit")


# --- loading an open map ------------------------------------------------------------------------


def frame_from_labyrinth(lab: Labyrinth) -> Frame:
    """Every fact an open map shows: walls, the exit gap, items, river arrows, pits.

    The destination of a pit is filled in only for cycles of two pits (the other one); longer
    cycles are learned by trying, since the map does not show their order.
    """
    frame = Frame(rows=lab.rows, cols=lab.cols)
    bits = {"up": 1, "right": 2, "down": 4, "left": 8}
    for r in range(lab.rows):
        for c in range(lab.cols):
            frame.content[(r, c)] = "empty"
            for direction in DIRECTIONS:
                there = neighbour((r, c), direction)
                if frame.inside(there):
                    is_open = lab.open_edges[r][c] & bits[direction]
                    frame.edges[((r, c), direction)] = "open" if is_open else "wall"
                elif (lab.exit.cell, lab.exit.side) == ((r, c), direction):
                    frame.set_edge((r, c), direction, "exit")
                else:
                    frame.edges[((r, c), direction)] = "monolith"
    for name in ("key", "exit_key", "boat", "flashlight"):
        pos = getattr(lab, name)
        if pos is not None:
            frame.content[pos] = name
    if lab.chest is not None:
        frame.content[lab.chest] = "treasure"
    for pack in lab.grenade_packs:
        frame.content[pack.cell] = "grenade_pack"
    for river in lab.rivers:
        for i, cell in enumerate(river.cells):
            frame.content[cell] = "river"
            frame.flow[cell] = river.flow_direction(i)
        frame.content[river.mouth] = "river_mouth"
    for number, cycle in enumerate(lab.pits):
        for cell in cycle.cells:
            frame.content[cell] = "pit"
            frame.pit_cycle[cell] = number
        if len(cycle.cells) == 2:
            a, b = cycle.cells
            frame.pit_dest[a], frame.pit_dest[b] = b, a
    return frame


# --- being lost after a pit ---------------------------------------------------------------------


def compatible(a: str, b: str, held: Mapping[str, object]) -> bool:
    """Whether two tile kinds seen on one cell agree (a taken item reads as an empty tile)."""
    if a == b:
        return True
    item = b if a == "empty" else a if b == "empty" else None
    if item is None or item not in ITEM_KINDS:
        return False
    return item == "grenade_pack" or bool(held.get(item))


def consistent(lost: Frame, offset: Cell, main: Frame, held: Mapping[str, object]) -> bool:
    """Whether the lost frame's facts fit the main frame with the lost origin at ``offset``."""
    dr, dc = offset

    def at(cell: Cell) -> Cell:
        return (cell[0] + dr, cell[1] + dc)

    for cell, kind in lost.content.items():
        there = at(cell)
        if main.bounded and not main.inside(there):
            return False
        known = main.content.get(there)
        if known is not None and not compatible(known, kind, held):
            return False
        flow = lost.flow.get(cell)
        if flow is not None and main.flow.get(there, flow) != flow:
            return False
    for (cell, direction), fact in lost.edges.items():
        there = at(cell)
        beyond = neighbour(there, direction)
        if main.bounded:
            leaves = not main.inside(beyond)
            if leaves != (fact in ("monolith", "exit")) or not main.inside(there):
                return False
        known = main.edges.get((there, direction))
        if known is not None and known != fact:
            return False
        if (
            main.exit is not None
            and fact in ("monolith", "exit")
            and (main.exit == (there, direction)) != (fact == "exit")
        ):
            return False
    return True


def merge(lost: Frame, offset: Cell, main: Frame) -> None:
    """Copy the lost frame's facts into the main frame, the lost origin at ``offset``."""
    dr, dc = offset

    def at(cell: Cell) -> Cell:
        return (cell[0] + dr, cell[1] + dc)

    for cell, kind in lost.content.items():
        main.note_content(at(cell), kind)
    for (cell, direction), fact in lost.edges.items():
        main.set_edge(at(cell), direction, fact)
    for cell, flow in lost.flow.items():
        main.flow[at(cell)] = flow
    for cell, dest in lost.pit_dest.items():
        main.pit_dest[at(cell)] = at(dest)


def lost_view(lost: Frame, candidates: Iterable[Cell], main: Frame) -> Frame:
    """The lost frame plus what the main frame says at *every* place the player may be.

    For planning while lost: a fact the main frame knows in the same way under every candidate
    offset is as good as seen. A cell that is a pit under *some* candidate is treated as a pit,
    so the player does not stumble into one it could have foreseen.
    """
    offsets = list(candidates)
    view = Frame(
        content=dict(lost.content),
        edges=dict(lost.edges),
        flow=dict(lost.flow),
        pit_dest=dict(lost.pit_dest),
        exit=lost.exit,
    )
    if not offsets or not main.bounded:
        return view
    assert main.rows is not None and main.cols is not None
    # only cells next to what the lost frame knows matter to a plan made in it
    cells = {neighbour(cell, d) for cell in lost.content for d in DIRECTIONS} | set(lost.content)
    for cell in cells:
        places = [(cell[0] + o[0], cell[1] + o[1]) for o in offsets]
        if not all(main.inside(p) for p in places):
            continue
        kinds = {main.content.get(p) for p in places}
        if cell not in view.content:
            if len(kinds) == 1 and None not in kinds:
                view.content[cell] = kinds.pop()  # type: ignore[assignment]
            elif "pit" in kinds:
                view.content[cell] = "pit"
        flows = {main.flow.get(p) for p in places}
        if len(flows) == 1 and None not in flows and cell not in view.flow:
            view.flow[cell] = flows.pop()  # type: ignore[assignment]
        for direction in DIRECTIONS:
            if (cell, direction) in view.edges:
                continue
            facts = {main.edge(p, direction) for p in places}
            if len(facts) == 1 and None not in facts:
                view.edges[(cell, direction)] = facts.pop()  # type: ignore[assignment]
    return view
