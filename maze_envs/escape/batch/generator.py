"""New boards for the batched engine, drawn many at a time: mazes, exits, landmarks, starts.

**Mazes** are uniform spanning trees of the grid, as the scalar default (Wilson) draws them, by
Wilson's algorithm run for many mazes at once (:class:`WilsonStream`, :func:`sample_mazes`):
every maze being built takes one step of its loop-erased random walk per round, so a round is a
few numpy operations over all of them and no Python loop runs over mazes. Wilson's algorithm
gives every spanning tree the same probability whatever the root and whatever order the walks
start in, so each maze walks from its lowest-numbered cell not yet in the tree, towards a tree
rooted at the centre cell (a random walk meets the centre sooner than a corner: about half the
steps on 17x17). The walk picks one of a cell's neighbours uniformly (a draw of 0..11 is
uniform over 2, 3 or 4 neighbours alike).

**Exit, landmarks and starts** are drawn as :class:`~maze_envs.escape.generator.
PerfectMazeGenerator` draws them (same distributions, not the same random stream): the exit a
uniformly chosen boundary cell, its doorway one of its outer sides, ``default_landmark_count``
landmarks with distinct names on distinct non-exit cells, and the starts distinct cells at least
``min_start_distance`` moves from the exit.

A :class:`BoardSource` takes its mazes from a :class:`WilsonStream`, which builds thousands at
once, so starting a game never costs a maze generator call of its own.

Example:
    >>> import numpy as np
    >>> from maze_envs.grid import is_perfect_maze
    >>> mazes = sample_mazes(100, 7, 5, np.random.default_rng(0))
    >>> mazes.shape, all(is_perfect_maze(maze) for maze in mazes)
    ((100, 5, 7), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NamedTuple

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.batch.types import FRAME_BITS, OPEN_BITS
from maze_envs.escape.config import Config
from maze_envs.escape.generator import default_landmark_count
from maze_envs.escape.vocab import LANDMARK_NAMES
from maze_envs.grid import DELTAS, EAST, NORTH, SOUTH, WEST

__all__ = ["BoardSource", "Boards", "WilsonStream", "sample_mazes"]

#: Neighbour choices per draw: a draw of 0..11 is uniform over 2, 3 or 4 neighbours.
_CHOICES: Final = 12
#: Mazes a stream builds at once, at least and at most (each round costs a few numpy calls over
#: all of them, so fewer would waste rounds; each slot holds ~9 bytes per cell, hence the cap)
_MIN_SLOTS: Final = 256
_SLOTS: Final = 2048
_SLOT_BYTES: Final = 8 << 20
#: Rounds whose random draws are drawn in one call.
_ROUNDS: Final = 64


class _Grid(NamedTuple):
    """What every maze of one size shares (flat cell indices)."""

    walk: NDArray[np.intp]  # [cell * 12 + draw] -> the neighbour a draw picks
    neighbour: NDArray[np.intp]  # (4, C) neighbour in direction N, E, S, W, or -1
    frame: NDArray[np.uint8]  # (C,) the frame bits of each cell
    boundary: NDArray[np.intp]  # the cells on the boundary
    sides: NDArray[np.intp]  # (len(boundary), 2) the outer sides of each (a corner has two)
    side_count: NDArray[np.intp]  # (len(boundary),)


@lru_cache(maxsize=16)
def _grid(width: int, height: int) -> _Grid:
    cells = width * height
    rows, cols = np.divmod(np.arange(cells), width)
    neighbour = np.full((4, cells), -1, np.intp)
    frame = np.zeros(cells, np.uint8)
    for k, bit in enumerate(OPEN_BITS):
        dr, dc = DELTAS[bit]
        r, c = rows + dr, cols + dc
        inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
        neighbour[k] = np.where(inside, r * width + c, -1)
        frame[~inside] |= FRAME_BITS[k]
    walk = np.empty((cells, _CHOICES), np.intp)
    for cell in range(cells):
        options = neighbour[:, cell][neighbour[:, cell] >= 0]
        walk[cell] = options[np.arange(_CHOICES) % len(options)]
    boundary = np.flatnonzero(frame)
    sides = np.zeros((len(boundary), 2), np.intp)
    side_count = np.zeros(len(boundary), np.intp)
    for i, edge_cell in enumerate(boundary):  # a corner has two outer sides
        outer = [k for k in range(4) if frame[edge_cell] & FRAME_BITS[k]]
        sides[i, : len(outer)] = outer
        side_count[i] = len(outer)
    tables = _Grid(walk.ravel(), neighbour, frame, boundary, sides, side_count)
    for array in tables:
        array.flags.writeable = False
    return tables


def sample_mazes(
    count: int, width: int, height: int, rng: np.random.Generator
) -> NDArray[np.uint8]:
    """``count`` uniform spanning trees of the ``width`` x ``height`` grid, as ``(count,
    height, width)`` open-edge masks (the maze format of :mod:`maze_envs.grid`)."""
    stream = WilsonStream(width, height, slots=slot_count(count, width * height))
    return stream.take(count, rng).reshape(count, height, width)


def slot_count(mazes: int, cells: int) -> int:
    """How many mazes a stream builds at once to serve ``mazes`` at a time: as many, but at
    least 256, at most 2048 and at most 8 MB of working arrays."""
    return max(1, min(max(mazes, _MIN_SLOTS), _SLOTS, _SLOT_BYTES // (9 * cells)))


class WilsonStream:
    """Uniform spanning trees of one grid, built ``slots`` at a time by Wilson's algorithm in
    lock step, and handed out in the order they were started.

    Each slot builds one maze: a walk from ``start`` records the exit it takes from each cell
    (``nxt``; a later exit overwrites an earlier one, which erases the loop between them) until
    it meets the tree; the loop-erased path is then retraced from ``start``, one cell a round,
    into the tree; the next walk starts from the lowest cell not in the tree. A slot whose maze
    is complete starts the next maze at once, so every round works on ``slots`` mazes and the
    slow ones hold nobody up. Mazes are handed out by the order they *started* in, never by the
    order they finished in (which would favour the mazes whose walks happened to be short): the
    n-th maze handed out is the n-th maze started, a uniform spanning tree whatever the others.
    Every index below is global (``slot * C + cell``); the tree's root is the centre cell.
    """

    def __init__(self, width: int, height: int, slots: int) -> None:
        self.width, self.height, self.cells = width, height, width * height
        self.grid = _grid(width, height)
        self.slots = max(1, slots)
        self.base = np.arange(self.slots, dtype=np.intp) * self.cells
        self.root = (height // 2) * width + width // 2
        self.restart()

    def restart(self) -> None:
        """Forget every maze started so far."""
        slots, cells = self.slots, self.cells
        self.in_tree = np.zeros(slots * cells, np.bool_)
        self.in_tree[self.base + self.root] = True
        self.nxt = np.arange(slots * cells, dtype=np.int32)  # the root's parent is itself
        self.start = self.base + (1 if self.root == 0 else 0)  # the lowest cell but the root
        self.current = self.start.copy()
        self.retracing = np.zeros(slots, np.bool_)  # else walking
        self.ident = np.arange(slots)  # the number of the maze each slot builds
        self.lowest = 0  # the lowest of them: every maze numbered below it is finished
        self.started = slots  # mazes started so far (the next one's number)
        self.handed = 0  # mazes handed out so far
        # the parents of each finished maze's cells, by number % len(store)
        self.store = np.zeros((2 * slots, cells), np.int16)
        self.draws = np.zeros((0, slots), np.uint8)  # random draws of the next rounds

    def take(self, count: int, rng: np.random.Generator) -> NDArray[np.uint8]:
        """(count, C) open-edge masks of the next ``count`` mazes (in the order they started)."""
        if self.cells == 1:
            return np.zeros((count, 1), np.uint8)
        while self.lowest - self.handed < count:
            self._round(rng)
        numbers = np.arange(self.handed, self.handed + count)
        self.handed += count
        return _masks(self.store[numbers % len(self.store)].astype(np.intp), self.width)

    def _round(self, rng: np.random.Generator) -> None:
        """One step of every slot's walk or retrace."""
        current, retracing, nxt, in_tree = self.current, self.retracing, self.nxt, self.in_tree
        if not len(self.draws):  # the draws of the next rounds, in one call
            self.draws = rng.integers(0, _CHOICES, (_ROUNDS, self.slots), dtype=np.uint8)
        draws, self.draws = self.draws[0], self.draws[1:]
        local = current - self.base
        local *= _CHOICES
        local += draws
        step = self.grid.walk.take(local)
        step += self.base
        # a walker steps on; a retracer's next cell is its path's (nxt), and it joins the tree
        new = np.where(retracing, nxt.take(current), step)
        nxt[current] = new  # a retracer's write is nxt[current] itself: no change
        in_tree[current] = retracing  # a walker's cell is not in the tree: no change
        hit = in_tree.take(new)
        # walkers that met the tree retrace from their start; retracers that reached it are done
        done = hit & retracing
        self.current = np.where(hit ^ done, self.start, new)
        retracing ^= hit
        if done.any():
            self._next_walks(np.flatnonzero(done))

    def _next_walks(self, slots: NDArray[np.intp]) -> None:
        """Start the next walk of ``slots`` (their walk just joined the tree), or, where the
        maze is complete, store it and start the next maze."""
        cells = self.cells
        outside = ~self.in_tree.reshape(-1, cells)[slots]
        first_out = np.argmax(outside, axis=1)  # the lowest cell not in the tree
        complete = ~outside[np.arange(slots.size), first_out]  # none outside
        self.start[slots] = self.base[slots] + first_out
        self.current[slots] = self.start[slots]
        if complete.any():
            self._finish(slots[complete])

    def _finish(self, slots: NDArray[np.intp]) -> None:
        cells = self.cells
        parents = self.nxt.reshape(-1, cells)[slots] - self.base[slots, None]
        numbers = self.ident[slots]
        if self.started + slots.size - self.handed > len(self.store):
            self._grow()
        self.store[numbers % len(self.store)] = parents
        # the next mazes, numbered in order
        self.ident[slots] = self.started + np.arange(slots.size)
        self.started += slots.size
        self.lowest = int(self.ident.min())
        trees = self.in_tree.reshape(-1, cells)
        trees[slots] = False
        trees[slots, self.root] = True
        self.nxt.reshape(-1, cells)[slots, self.root] = self.base[slots] + self.root
        self.start[slots] = self.base[slots] + (1 if self.root == 0 else 0)
        self.current[slots] = self.start[slots]

    def _grow(self) -> None:
        """Twice the room for finished mazes (their rows move to their new places)."""
        numbers = np.arange(self.handed, self.started)
        old = self.store
        self.store = np.zeros((2 * len(old), self.cells), np.int16)
        self.store[numbers % len(self.store)] = old[numbers % len(old)]


def _masks(parent: NDArray[np.intp], width: int) -> NDArray[np.uint8]:
    """(count, C) open-edge masks of the trees given by each cell's parent (the root's is
    itself): a cell's edge towards its parent, and the edges its children come in by."""
    cells = parent.shape[1]
    # the direction bit towards the parent, by parent - cell (-W N, +1 E, +W S, -1 W, 0 root)
    toward = np.zeros(2 * width + 1, np.uint8)
    toward[[0, width + 1, 2 * width, width - 1]] = OPEN_BITS
    step = parent - np.arange(cells)
    step += width
    masks = toward.take(step)
    up = masks.copy()  # the edges towards the parents, before the children's are added
    # a cell whose east neighbour's parent it is has an east edge, and so on
    masks[:, :-1] |= (up[:, 1:] == WEST) * np.uint8(EAST)
    masks[:, 1:] |= (up[:, :-1] == EAST) * np.uint8(WEST)
    masks[:, :-width] |= (up[:, width:] == NORTH) * np.uint8(SOUTH)
    masks[:, width:] |= (up[:, :-width] == SOUTH) * np.uint8(NORTH)
    return masks


@dataclass(frozen=True, eq=False)  # identity: holds arrays
class Boards:
    """The boards of ``k`` new games (arrays with a leading game axis)."""

    board: NDArray[np.uint8]  # (k, C) open edges | frame edges << 4, doorway open and in frame
    landmark: NDArray[np.uint8]  # (k, C) 0 none, else 1 + index into LANDMARK_NAMES
    exit_cell: NDArray[np.intp]  # (k,)
    doorway: NDArray[np.uint8]  # (k,) the doorway's direction (0..3, N E S W)
    starts: NDArray[np.intp]  # (k, n)


class BoardSource:
    """Draws the boards of new games for one configuration, its mazes from a
    :class:`WilsonStream` of ``slots`` mazes at a time.

    ``ValueError`` at construction for a configuration the batched engine cannot start games
    of (a maze algorithm other than Wilson's, more agents than start cells).
    """

    def __init__(self, config: Config, slots: int = 1024) -> None:
        if config.maze_algorithm != "wilson":
            raise ValueError(
                f"the batched engine samples uniform spanning trees (maze_algorithm='wilson'); "
                f"maze_algorithm={config.maze_algorithm!r} does not batch"
            )
        cells = config.width * config.height
        if config.num_agents > cells - 1:
            raise ValueError(
                f"{config.num_agents} agents need as many start cells, and a "
                f"{config.width}x{config.height} maze has {cells - 1} besides the exit"
            )
        self.config = config
        self.grid = _grid(config.width, config.height)
        self.landmarks = default_landmark_count(config)
        self.stream = WilsonStream(config.width, config.height, slot_count(slots, cells))

    def clear(self) -> None:
        """Forget the mazes started so far (a new seed starts a new stream)."""
        self.stream.restart()

    def mazes(self, k: int, rng: np.random.Generator) -> NDArray[np.uint8]:
        """(k, C) open-edge masks of ``k`` new mazes."""
        return self.stream.take(k, rng)

    def draw(self, k: int, rng: np.random.Generator) -> Boards:
        """The boards of ``k`` new games."""
        config, grid = self.config, self.grid
        cells = config.width * config.height
        games = np.arange(k)
        board = self.mazes(k, rng) | grid.frame[None, :]
        pick = rng.integers(0, len(grid.boundary), k)
        exit_cell = grid.boundary[pick]
        side = (rng.random(k) * grid.side_count[pick]).astype(np.intp)
        doorway = grid.sides[pick, side]
        board[games, exit_cell] |= np.array(OPEN_BITS, np.uint8)[doorway]
        landmark = np.zeros((k, cells), np.uint8)
        if self.landmarks:
            where = _distinct(rng, np.arange(cells)[None, :] != exit_cell[:, None], self.landmarks)
            names = np.argsort(rng.random((k, len(LANDMARK_NAMES))), axis=1)[:, : self.landmarks]
            landmark[games[:, None], where] = (names + 1).astype(np.uint8)
        if config.min_start_distance > 1:
            eligible = _exit_distances(board, exit_cell, grid) >= config.min_start_distance
            short = eligible.sum(axis=1) < config.num_agents
            if short.any():
                raise ValueError(
                    f"a maze has only {int(eligible.sum(axis=1).min())} cells at least "
                    f"{config.min_start_distance} moves from the exit, too few for "
                    f"{config.num_agents} agents; lower min_start_distance"
                )
        else:
            eligible = np.arange(cells)[None, :] != exit_cell[:, None]
        starts = _distinct(rng, eligible, config.num_agents)
        return Boards(board, landmark, exit_cell, doorway.astype(np.uint8), starts)


def _distinct(rng: np.random.Generator, allowed: NDArray[np.bool_], count: int) -> NDArray[np.intp]:
    """(k, count) distinct cells per row, uniformly among the ``allowed`` ones, in random order
    (each row has at least ``count`` allowed cells)."""
    keys = rng.random(allowed.shape)
    keys[~allowed] = 2.0  # past every allowed cell
    return np.argsort(keys, axis=1)[:, :count].astype(np.intp)


def _exit_distances(
    board: NDArray[np.uint8], exit_cell: NDArray[np.intp], grid: _Grid
) -> NDArray[np.int64]:
    """(k, C) moves from the exit to every cell (breadth-first, all boards at once)."""
    k, cells = board.shape
    distance = np.full((k, cells), -1, np.int64)
    games = np.arange(k)
    distance[games, exit_cell] = 0
    frontier = np.zeros((k, cells), np.bool_)
    frontier[games, exit_cell] = True
    steps = 0
    while frontier.any():
        steps += 1
        reached = np.zeros((k, cells), np.bool_)
        for direction, bit in enumerate(OPEN_BITS):
            neighbour = grid.neighbour[direction]
            inside = np.flatnonzero(neighbour >= 0)
            # a cell is reached from its neighbour in this direction through an open edge
            through = (board[:, inside] & bit).astype(np.bool_) & frontier[:, neighbour[inside]]
            reached[:, inside] |= through
        frontier = reached & (distance < 0)
        distance[frontier] = steps
    return distance
