"""What a Maze Escape agent can know: its position, its map of the maze, where the exit may be.

* :class:`Tracker` keeps the agent's position: the observation's coordinates when the game gives
  them, otherwise dead reckoning from its start (a move counts only once the next observation
  says ``moved``, so a refused move never corrupts the position).
* :class:`AgentMap` is the map built from what the agent has seen (each visited cell's four
  edges, landmarks, the exit) plus what teammates claimed (routes heard on the radio or read in
  a notebook). Seen facts always override claims.
* :class:`ExitLocator` narrows down the exit's position from the distance sensor: every reading
  is :func:`maze_envs.grid.straight_line_tenths` from a known position, so a few readings
  leave one cell.

Example:
    >>> locator = ExitLocator(width=5, height=5)
    >>> locator.observe((0, 0), 30); locator.observe((1, 0), 20); locator.observe((0, 1), 32)
    >>> locator.candidates
    [(3, 0)]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Final, Literal

from maze_envs.escape.types import Direction, Observation
from maze_envs.grid import straight_line, straight_line_tenths
from maze_envs.policies.escape.geometry import BACK, DELTA, DIRECTIONS, Position, step

EdgeFact = Literal["open", "wall", "claimed"]
#: Each direction with its ``(dx, dy)`` and the direction back.
_NEIGHBOURS: Final = tuple((d, *DELTA[d], BACK[d]) for d in DIRECTIONS)


class Tracker:
    """The agent's position, exact with coordinates, by dead reckoning without."""

    def __init__(self) -> None:
        self.position: Position = (0, 0)
        self._pending: Direction | None = None

    def reset(self) -> None:
        self.position = (0, 0)
        self._pending = None

    def expect(self, move: Direction | None) -> None:
        """Remember the move just chosen (``None`` for STAY)."""
        self._pending = move

    def update(self, observation: Observation) -> tuple[Direction | None, bool]:
        """Read this turn's observation: ``(the last move tried, whether it moved)``."""
        tried, self._pending = self._pending, None
        moved = observation.last_action.move == "moved"
        if observation.position is not None:
            self.position = (int(observation.position[0]), int(observation.position[1]))
        elif tried is not None and moved:
            self.position = step(self.position, tried)
        return tried, moved


class AgentMap:
    """The agent's map: seen cells and edges, landmarks, the exit, and teammates' claims."""

    def __init__(self) -> None:
        self.visited: set[Position] = set()
        self.edges: dict[tuple[Position, Direction], EdgeFact] = {}
        self.landmarks: dict[str, Position] = {}
        self.exit: Position | None = None
        #: cells a teammate's route passes through (known to exist, edges partly claimed)
        self.claimed_cells: set[Position] = set()
        #: where routes heard say the exit is (dropped when seen to be wrong)
        self.exit_claims: set[Position] = set()
        #: moves tried that did not leave the cell although its edge reads open (the doorway)
        self.refused: set[tuple[Position, Direction]] = set()
        self._version = 0  # bumped on every change; keys the cached tree of routes to the exit
        self._tree: tuple[int, dict[Position, Direction | None]] | None = None
        #: routes claimed whole (start, moves): claiming one again changes nothing, since
        #: edges, claimed cells and exit claims are never taken back
        self._claimed: set[tuple[Position, tuple[Direction, ...]]] = set()

    # --- facts -------------------------------------------------------------------------------
    def observe(self, position: Position, observation: Observation) -> None:
        """Record the cell the agent stands on: its edges, landmark and whether it is the exit."""
        if position not in self.visited:
            self._version += 1
        self.visited.add(position)
        # each edge seen from both of its cells (what _set_edge(..., seen=True) does, inlined:
        # four a turn for every agent of every game)
        edges, seen = self.edges, observation.edges
        x, y = position
        changes = 0
        for direction, dx, dy, back in _NEIGHBOURS:
            fact: EdgeFact = "open" if seen[direction] == "open" else "wall"
            key = (position, direction)
            if edges.get(key) != fact:
                edges[key] = fact
                changes += 1
            key = ((x + dx, y + dy), back)
            if edges.get(key) != fact:
                edges[key] = fact
                changes += 1
        self._version += changes
        if observation.landmark is not None:
            self.landmarks[observation.landmark] = position
        if observation.on_exit and self.exit != position:
            self.exit = position
            self._version += 1

    def mark_closed(self, position: Position, direction: Direction) -> None:
        """A move from ``position`` did not leave it (a bump, or the exit's doorway)."""
        self.refused.add((position, direction))
        self._set_edge(position, direction, "wall", seen=True)
        self._version += 1

    def claim_route(self, start: Position, moves: Iterable[Direction]) -> None:
        """A teammate says ``moves`` lead from ``start`` to the exit."""
        route = (start, tuple(moves))
        if route in self._claimed:
            return
        here = start
        cells = [here]
        for move in route[1]:
            if self.edges.get((here, move)) == "wall":
                return  # contradicts what this agent saw: ignore the whole claim
            cells.append(step(here, move))
            here = cells[-1]
        here = start
        for move in route[1]:
            self._set_edge(here, move, "claimed", seen=False)
            here = step(here, move)
        if not self.claimed_cells.issuperset(cells) or here not in self.exit_claims:
            self._version += 1
        self.claimed_cells.update(cells)
        self.exit_claims.add(here)
        self._claimed.add(route)

    def _set_edge(
        self, position: Position, direction: Direction, fact: EdgeFact, seen: bool
    ) -> None:
        other = (step(position, direction), BACK[direction])
        for key in ((position, direction), other):
            if (seen or self.edges.get(key) is None) and self.edges.get(key) != fact:
                self.edges[key] = fact
                self._version += 1

    # --- questions ---------------------------------------------------------------------------
    def passable(self, position: Position, direction: Direction) -> bool:
        key = (position, direction)
        return self.edges.get(key) in ("open", "claimed") and key not in self.refused

    def leads_to_unvisited(self, position: Position, direction: Direction) -> bool:
        """An open edge of a visited cell into a cell nobody has stood on yet."""
        return (
            self.edges.get((position, direction)) == "open"
            and (position, direction) not in self.refused
            and step(position, direction) not in self.visited
        )

    def known(self, position: Position) -> bool:
        return position in self.visited or position in self.claimed_cells

    def exit_goals(self) -> set[Position]:
        """Where the exit is, or is claimed to be (a claim on a visited cell proved wrong)."""
        if self.exit is not None:
            return {self.exit}
        return self.exit_claims - self.visited

    def path(
        self, start: Position, goal: Callable[[Position], bool], limit: int = 1_000_000
    ) -> list[Direction] | None:
        """A shortest list of moves through known cells from ``start`` to a cell ``goal`` likes."""
        if goal(start):
            return []
        parent: dict[Position, tuple[Position, Direction] | None] = {start: None}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for direction in DIRECTIONS:
                there = step(here, direction)
                if there in parent or not self.passable(here, direction) or not self.known(there):
                    continue
                parent[there] = (here, direction)
                if goal(there):
                    moves: list[Direction] = []
                    node = there
                    while (link := parent[node]) is not None:
                        node, move = link
                        moves.append(move)
                    moves.reverse()
                    return moves
                if len(parent) >= limit:
                    return None
                queue.append(there)
        return None

    def path_to_exit(self, start: Position) -> list[Direction] | None:
        """A shortest known list of moves from ``start`` to the exit (or a claimed exit)."""
        if self.exit is None:
            goals = self.exit_goals()
            return self.path(start, goals.__contains__) if goals else None
        tree = self._exit_tree()
        if start not in tree:
            # ``start`` may be a cell just beyond the known map: one step back onto it
            for direction in DIRECTIONS:
                back = step(start, direction)
                if back in tree and self.passable(back, BACK[direction]):
                    rest = self.path_to_exit(back)
                    return None if rest is None else [direction, *rest]
            return None
        moves: list[Direction] = []
        cell = start
        while (move := tree[cell]) is not None:
            moves.append(move)
            cell = step(cell, move)
        return moves

    def _exit_tree(self) -> dict[Position, Direction | None]:
        """For every known cell joined to the exit, its first move on a shortest way there."""
        if self._tree is not None and self._tree[0] == self._version:
            return self._tree[1]
        assert self.exit is not None
        tree: dict[Position, Direction | None] = {self.exit: None}
        queue = deque([self.exit])
        while queue:
            here = queue.popleft()
            for direction in DIRECTIONS:
                there = step(here, direction)
                if (
                    there not in tree
                    and self.known(there)
                    and self.passable(there, BACK[direction])
                ):
                    tree[there] = BACK[direction]
                    queue.append(there)
        self._tree = (self._version, tree)
        return tree

    def frontier_path(self, start: Position) -> list[Direction] | None:
        """Moves to the nearest open edge into an unvisited cell, that edge included."""

        def has_frontier(cell: Position) -> bool:
            return cell in self.visited and any(
                self.leads_to_unvisited(cell, d) for d in DIRECTIONS
            )

        route = self.path(start, has_frontier)
        if route is None:
            return None
        cell = start
        for move in route:
            cell = step(cell, move)
        last = next(d for d in DIRECTIONS if self.leads_to_unvisited(cell, d))
        return [*route, last]


class ExitLocator:
    """Candidate exit positions consistent with every distance reading so far.

    A reading ``d`` taken at ``p`` keeps the cells ``c`` with ``round(10 * |c - p|) == d``; the
    exit lies within ``width - 1`` columns and ``height - 1`` rows of any cell of the maze.
    """

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self._candidates: list[Position] | None = None

    @property
    def candidates(self) -> list[Position]:
        return list(self._candidates or [])

    def observe(self, position: Position, tenths: int) -> None:
        x, y = position
        if self._candidates is None:
            self._candidates = [
                (x + dx, y + dy)
                for dx in range(-(self.width - 1), self.width)
                for dy in range(-(self.height - 1), self.height)
                if straight_line_tenths(dx, dy) == tenths
            ]
            return
        kept = [c for c in self._candidates if straight_line_tenths(c[0] - x, c[1] - y) == tenths]
        # readings are exact, so an empty set means an assumption failed: start again from this one
        if kept:
            self._candidates = kept
        else:
            self._candidates = None
            self.observe(position, tenths)

    def expected_distance(self, position: Position) -> float:
        """Mean straight-line distance from ``position`` to the candidates (0 when none)."""
        if not self._candidates:
            return 0.0
        x, y = position
        return sum(straight_line(cx - x, cy - y) for cx, cy in self._candidates) / len(
            self._candidates
        )
