"""Grid primitives shared by every maze in the library.

A maze is a ``(height, width)`` array of ``uint8`` bit masks, one per cell, whose bits say which
of the cell's four edges are *open* (passable). Row 0 is the northern (top) row and column 0 the
western (left) column. An open edge is always stored on both cells it joins, so
``mask[r, c] & EAST`` equals ``mask[r, c + 1] & WEST``. The outer frame is closed unless a game
opens a doorway in it explicitly; doorways are a game-level concept and are not stored here.

Perfect-maze algorithms return a spanning tree of the grid: every cell is reachable and there
are no loops. Wilson's algorithm (the default) samples uniformly among all spanning trees, so
the maze distribution has no directional or corridor-length bias. The recursive backtracker is
offered for comparison: it produces long winding corridors with few junctions.

Example:
    >>> import numpy as np
    >>> from maze_envs.grid import generate_perfect_maze, is_perfect_maze
    >>> maze = generate_perfect_maze("wilson", 7, 5, np.random.default_rng(0))
    >>> maze.shape, is_perfect_maze(maze)
    ((5, 7), True)
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from functools import lru_cache
from typing import Final

import numpy as np
from numpy.typing import NDArray

NORTH: Final = 1
EAST: Final = 2
SOUTH: Final = 4
WEST: Final = 8

#: Direction bit -> (row delta, column delta).
DELTAS: Final[dict[int, tuple[int, int]]] = {
    NORTH: (-1, 0),
    EAST: (0, 1),
    SOUTH: (1, 0),
    WEST: (0, -1),
}
OPPOSITE: Final[dict[int, int]] = {NORTH: SOUTH, SOUTH: NORTH, EAST: WEST, WEST: EAST}

Maze = NDArray[np.uint8]
Cell = tuple[int, int]  # (row, column)


def empty_grid(width: int, height: int) -> Maze:
    """A grid with every edge closed."""
    return np.zeros((height, width), dtype=np.uint8)


def neighbours(cell: Cell, width: int, height: int) -> list[tuple[int, Cell]]:
    """In-grid neighbours of ``cell`` as ``(direction bit, neighbour)`` pairs, N, E, S, W order."""
    r, c = cell
    out: list[tuple[int, Cell]] = []
    for bit, (dr, dc) in DELTAS.items():
        nr, nc = r + dr, c + dc
        if 0 <= nr < height and 0 <= nc < width:
            out.append((bit, (nr, nc)))
    return out


def carve(maze: Maze, cell: Cell, direction: int) -> None:
    """Open the edge of ``cell`` in ``direction`` on both sides."""
    r, c = cell
    dr, dc = DELTAS[direction]
    maze[r, c] |= direction
    maze[r + dr, c + dc] |= OPPOSITE[direction]


@lru_cache(maxsize=64)
def _flat_neighbours(width: int, height: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per flat cell index, its ``(direction bit, neighbour flat index)`` pairs (N, E, S, W)."""
    return tuple(
        tuple(
            (bit, nr * width + nc) for bit, (nr, nc) in neighbours(divmod(f, width), width, height)
        )
        for f in range(width * height)
    )


def wilson_maze(width: int, height: int, rng: np.random.Generator) -> Maze:
    """Uniform spanning tree by Wilson's loop-erased random walks."""
    cells = width * height
    # Neighbour lists over flat cell indices (the same for every maze of this size), and random
    # numbers drawn in blocks: a call into numpy per walk step would cost more than the whole
    # rest of the walk.
    options = _flat_neighbours(width, height)
    open_bits = [0] * cells
    in_tree = [False] * cells
    order: list[int] = rng.permutation(cells).tolist()
    in_tree[order[0]] = True
    draws: list[float] = []
    used = 0
    # The last exit taken from each cell of the current walk; entries of earlier walks belong
    # to cells already in the tree, which no later walk reads.
    exit_to: list[tuple[int, int]] = [(0, 0)] * cells
    for start in order[1:]:
        if in_tree[start]:
            continue
        # Walk until the tree is hit; remembering only the last exit of each cell erases loops.
        cell = start
        while not in_tree[cell]:
            if used == len(draws):
                draws, used = rng.random(1024).tolist(), 0
            choices = options[cell]
            exit_to[cell] = step = choices[int(draws[used] * len(choices))]
            used += 1
            cell = step[1]
        cell = start
        while not in_tree[cell]:
            bit, nxt = exit_to[cell]
            open_bits[cell] |= bit
            open_bits[nxt] |= OPPOSITE[bit]
            in_tree[cell] = True
            cell = nxt
    return np.array(open_bits, dtype=np.uint8).reshape(height, width)


def backtracker_maze(width: int, height: int, rng: np.random.Generator) -> Maze:
    """Depth-first (recursive backtracker) spanning tree: long corridors, few junctions."""
    maze = empty_grid(width, height)
    seen = np.zeros((height, width), dtype=bool)
    start = (int(rng.integers(height)), int(rng.integers(width)))
    seen[start] = True
    stack = [start]
    while stack:
        cell = stack[-1]
        options = [(b, n) for b, n in neighbours(cell, width, height) if not seen[n]]
        if not options:
            stack.pop()
            continue
        bit, nxt = options[int(rng.integers(len(options)))]
        carve(maze, cell, bit)
        seen[nxt] = True
        stack.append(nxt)
    return maze


MazeAlgorithm = Callable[[int, int, np.random.Generator], Maze]

#: Perfect-maze algorithms by name.
ALGORITHMS: Final[dict[str, MazeAlgorithm]] = {
    "wilson": wilson_maze,
    "backtracker": backtracker_maze,
}


def generate_perfect_maze(
    algorithm: str, width: int, height: int, rng: np.random.Generator
) -> Maze:
    """Generate a perfect maze with the named algorithm (see :data:`ALGORITHMS`)."""
    try:
        build = ALGORITHMS[algorithm]
    except KeyError:
        raise ValueError(
            f"unknown maze algorithm {algorithm!r}; choose one of {sorted(ALGORITHMS)}"
        ) from None
    if width < 1 or height < 1:
        raise ValueError(f"maze size must be positive, got {width}x{height}")
    return build(width, height, rng)


def bfs_distances(maze: Maze, start: Cell) -> NDArray[np.int32]:
    """Path length from ``start`` to every cell through open edges; -1 where unreachable."""
    height, width = maze.shape
    masks: list[int] = maze.ravel().tolist()
    steps = [(bit, dr * width + dc) for bit, (dr, dc) in DELTAS.items()]
    # Plain lists over flat indices: numpy element access per cell is several times slower.
    dist = [-1] * (height * width)
    origin = start[0] * width + start[1]
    dist[origin] = 0
    queue = deque([origin])
    while queue:
        cell = queue.popleft()
        mask = masks[cell]
        for bit, offset in steps:
            if mask & bit and dist[cell + offset] < 0:
                dist[cell + offset] = dist[cell] + 1
                queue.append(cell + offset)
    return np.array(dist, dtype=np.int32).reshape(height, width)


def open_edge_count(maze: Maze) -> int:
    """Number of open interior edges (each counted once)."""
    east = np.count_nonzero(maze[:, :-1] & EAST)
    south = np.count_nonzero(maze[:-1, :] & SOUTH)
    return int(east + south)


def is_perfect_maze(maze: Maze) -> bool:
    """True when every cell is reachable and there are no loops (a spanning tree)."""
    height, width = maze.shape
    if np.any(maze[0, :] & NORTH) or np.any(maze[-1, :] & SOUTH):
        return False
    if np.any(maze[:, 0] & WEST) or np.any(maze[:, -1] & EAST):
        return False
    reachable = bool(np.all(bfs_distances(maze, (0, 0)) >= 0))
    return reachable and open_edge_count(maze) == width * height - 1


def straight_line(dx: float, dy: float) -> float:
    """Euclidean distance between cell centres ``dx`` columns and ``dy`` rows apart, in cells:
    the one straight-line distance of the library.

    Example:
        >>> straight_line(3, 4)
        5.0
    """
    return math.hypot(dx, dy)


def straight_line_tenths(dx: int, dy: int) -> int:
    """:func:`straight_line` in whole tenths of a cell (rounded half to even).

    Example:
        >>> straight_line_tenths(4, 4), straight_line_tenths(0, 3)
        (57, 30)
    """
    return round(10 * straight_line(dx, dy))


@lru_cache(maxsize=8)
def tenths_table(span: int) -> tuple[tuple[int, ...], ...]:
    """``table[abs(dx)][abs(dy)]`` = :func:`straight_line_tenths` for offsets below ``span``
    (a lookup on the step path instead of a square root)."""
    return tuple(tuple(straight_line_tenths(dx, dy) for dy in range(span)) for dx in range(span))
