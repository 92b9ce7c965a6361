"""Drafting an AGI Maze labyrinth's layout: walls, exit, rivers, pits (the generator's parts).

:class:`~maze_envs.agimaze.generator.LabyrinthGenerator` draws a spanning tree, then places the
exit, rivers and pits on a :class:`Draft` with these functions, every random choice from the rng
it is given (so a draw is a pure function of the config and the seed).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import numpy as np

from maze_envs.agimaze.types import DIRECTION_BITS, ExitGap, PitCycle, Pos, River, step_towards
from maze_envs.grid import DELTAS, EAST, OPPOSITE, SOUTH, Maze, bfs_distances, carve, neighbours


class Draft:
    """A labyrinth under construction: a wall grid and the cells already taken."""

    def __init__(self, maze: Maze, exit_gap: ExitGap) -> None:
        self.maze = maze
        self.rows, self.cols = maze.shape
        self.exit = exit_gap
        self.taken: set[Pos] = set()
        self.rivers: list[River] = []
        self.pits: list[PitCycle] = []

    def free_cells(self) -> list[Pos]:
        return [
            (r, c) for r in range(self.rows) for c in range(self.cols) if (r, c) not in self.taken
        ]

    def close(self, cell: Pos, bit: int) -> None:
        r, c = cell
        dr, dc = DELTAS[bit]
        self.maze[r, c] &= ~bit & 0xF
        self.maze[r + dr, c + dc] &= ~OPPOSITE[bit] & 0xF

    def isolate(self, cell: Pos, keep: Iterable[Pos] = ()) -> None:
        """Close every interior edge of ``cell`` except those towards ``keep``."""
        kept = set(keep)
        for bit, nb in neighbours(cell, self.cols, self.rows):
            if nb not in kept:
                self.close(cell, bit)


def only_sealed_cut_off(draft: Draft, sealed: set[Pos]) -> bool:
    """Whether every cell but the sealed ones is still reachable from the exit cell.

    Walling in an item must not cut off a cell behind it too: a player with one grenade could
    not tell which walled-in cell holds the item.
    """
    distance = bfs_distances(draft.maze, draft.exit.cell)
    return all(
        distance[r, c] >= 0 or (r, c) in sealed
        for r in range(draft.rows)
        for c in range(draft.cols)
    )


def draw_cell(cells: list[Pos], rng: np.random.Generator) -> Pos | None:
    return cells[int(rng.integers(len(cells)))] if cells else None


def open_loops(maze: Maze, count: int, rng: np.random.Generator) -> None:
    """Open ``count`` closed interior edges drawn uniformly (fewer if fewer are closed)."""
    rows, cols = maze.shape
    closed = [
        ((r, c), bit)
        for r in range(rows)
        for c in range(cols)
        for bit in (EAST, SOUTH)
        if (c + 1 < cols if bit == EAST else r + 1 < rows) and not maze[r, c] & bit
    ]
    for i in rng.permutation(len(closed))[:count]:
        cell, bit = closed[int(i)]
        carve(maze, cell, bit)


def draw_exit(rows: int, cols: int, rng: np.random.Generator) -> ExitGap:
    """One of the 2 x (rows + cols) frame segments, uniformly."""
    segments: list[tuple[Pos, str]] = [((0, c), "up") for c in range(cols)]
    segments += [((rows - 1, c), "down") for c in range(cols)]
    segments += [((r, 0), "left") for r in range(rows)]
    segments += [((r, cols - 1), "right") for r in range(rows)]
    cell, side = segments[int(rng.integers(len(segments)))]
    return ExitGap(cell=cell, side=side)


def _random_chain(
    draft: Draft, length: int, rng: np.random.Generator, first: Pos | None = None
) -> list[Pos] | None:
    """A self-avoiding chain of ``length`` free cells, or None when the walk gets stuck."""
    free = set(draft.free_cells())
    cell = first if first is not None else draw_cell(sorted(free), rng)
    if cell is None or cell not in free:
        return None
    chain = [cell]
    while len(chain) < length:
        options = [nb for _, nb in neighbours(chain[-1], draft.cols, draft.rows) if nb in free]
        options = [nb for nb in options if nb not in chain]
        nxt = draw_cell(options, rng)
        if nxt is None:
            return None
        chain.append(nxt)
    return chain


def _open_along(draft: Draft, path: list[Pos]) -> None:
    for a, b in pairwise(path):
        direction = step_towards(a, b)
        assert direction is not None
        carve(draft.maze, a, DIRECTION_BITS[direction])


def place_river(
    draft: Draft, arrows_range: tuple[int, int], in_tree: bool, rng: np.random.Generator
) -> bool:
    """One river of ``arrows_range`` arrows (drawn) plus its mouth on free cells.

    ``in_tree``: carved into the spanning tree (:func:`_carve_into_tree`), else the walls along
    it are opened on top. False when no chain of free cells that long could be drawn.
    """
    low, high = arrows_range
    arrows = int(rng.integers(low, high + 1))
    chain = _random_chain(draft, arrows + 1, rng)
    if chain is None:
        return False
    if in_tree:
        if not _carve_into_tree(draft, chain, rng):
            return False
    else:
        _open_along(draft, chain)
    draft.rivers.append(River(cells=chain[:-1], mouth=chain[-1]))
    draft.taken.update(chain)
    return True


def _river_edges(draft: Draft) -> set[frozenset[Pos]]:
    return {
        frozenset(pair) for river in draft.rivers for pair in pairwise([*river.cells, river.mouth])
    }


def _carve_into_tree(draft: Draft, chain: list[Pos], rng: np.random.Generator) -> bool:
    """Open the edges along ``chain`` in a spanning tree and keep it a tree.

    Each closed edge ``(a, b)`` of the chain closes a cycle with the tree's path from ``a`` to
    ``b``; one edge of that path that no river runs along is closed again, drawn uniformly.
    False when every edge of such a path carries a river.
    """
    keep = _river_edges(draft) | {frozenset(pair) for pair in pairwise(chain)}
    for a, b in pairwise(chain):
        bit = DIRECTION_BITS[str(step_towards(a, b))]
        if draft.maze[a] & bit:
            continue
        path = _tree_path(draft.maze, a, b)
        if path is not None:  # joining two parts of a forest closes no cycle
            options = [(x, y) for x, y in pairwise(path) if frozenset((x, y)) not in keep]
            if not options:
                return False
            x, y = options[int(rng.integers(len(options)))]
            draft.close(x, DIRECTION_BITS[str(step_towards(x, y))])
        carve(draft.maze, a, bit)
    return True


def _tree_path(maze: Maze, a: Pos, b: Pos) -> list[Pos] | None:
    """The cells of the open path from ``a`` to ``b`` (a tree has one), or None if none."""
    rows, cols = maze.shape
    parent: dict[Pos, Pos | None] = {a: None}
    queue = [a]
    for cell in queue:
        if cell == b:
            break
        for bit, nb in neighbours(cell, cols, rows):
            if maze[cell] & bit and nb not in parent:
                parent[nb] = cell
                queue.append(nb)
    if b not in parent:
        return None
    path = [b]
    while (up := parent[path[-1]]) is not None:
        path.append(up)
    return path[::-1]


def place_boat_barrier(
    draft: Draft, arrows_range: tuple[int, int], rng: np.random.Generator
) -> bool:
    """Cut the exit cell off behind a river that flows away from it.

    The exit cell keeps a single open edge, to the river's first arrow; that arrow keeps only its
    edges to the exit cell and down the river. Landing on any arrow carries a walker downstream,
    so without the boat the first arrow, and with it the exit cell, is never reached.
    """
    low, high = arrows_range
    arrows = max(int(rng.integers(low, high + 1)), 1)
    exit_cell = draft.exit.cell
    draft.taken.add(exit_cell)
    chain = _random_chain(
        draft, arrows + 1, rng, first=draw_cell(_free_neighbours(draft, exit_cell), rng)
    )
    if chain is None:
        return False
    draft.taken.discard(exit_cell)
    draft.isolate(exit_cell, keep=[chain[0]])
    draft.isolate(chain[0], keep=[exit_cell, chain[1]])
    _open_along(draft, [exit_cell, *chain])
    draft.rivers.append(River(cells=chain[:-1], mouth=chain[-1]))
    draft.taken.update([exit_cell, *chain])
    return True


def place_pit_cycle(draft: Draft, per_cycle: int, rng: np.random.Generator) -> bool:
    """``per_cycle`` free cells off the exit cell, teleporting in reading order."""
    cells = [p for p in draft.free_cells() if p != draft.exit.cell]
    if len(cells) < per_cycle:
        return False
    picks = sorted(cells[int(i)] for i in rng.choice(len(cells), size=per_cycle, replace=False))
    draft.pits.append(PitCycle(cells=picks))
    draft.taken.update(picks)
    return True


def _free_neighbours(draft: Draft, cell: Pos) -> list[Pos]:
    return [nb for _, nb in neighbours(cell, draft.cols, draft.rows) if nb not in draft.taken]
