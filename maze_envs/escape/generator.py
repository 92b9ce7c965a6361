"""Maze Escape instances: the maze, the exit doorway, the landmarks and the start cells.

A generator is any object with ``generate(config, rng) -> Layout``; the environment picks one by
name (``Config.maze_algorithm``) or takes one injected through its constructor, so a new instance
distribution never needs a subclass of the environment.

Wilson's algorithm is the default because it samples *uniformly* among all perfect mazes of the
grid: no direction, corridor length or dead-end density is favoured, so results measured on it are
not an artefact of a generator's bias. ``backtracker`` gives long corridors for comparison.

Example:
    >>> import numpy as np
    >>> from maze_envs.escape.generator import PerfectMazeGenerator
    >>> from maze_envs.escape.types import Config
    >>> layout = PerfectMazeGenerator().generate(Config(), np.random.default_rng(0))
    >>> len(layout.starts), layout.maze.shape
    (3, (10, 10))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.config import Config
from maze_envs.escape.vocab import LANDMARK_NAMES
from maze_envs.grid import (
    ALGORITHMS,
    EAST,
    NORTH,
    SOUTH,
    WEST,
    Cell,
    Maze,
    bfs_distances,
    generate_perfect_maze,
    straight_line_tenths,
    tenths_table,
)

__all__ = [
    "FixedGenerator",
    "Generator",
    "Layout",
    "PerfectMazeGenerator",
    "default_landmark_count",
    "describe_generator",
    "generator_from_description",
    "make_generator",
    "straight_line_tenths",  # re-exported from maze_envs.grid, where it lives now
    "tenths_table",
]


@dataclass(frozen=True, eq=False)  # identity: holds arrays
class Layout:
    """A fixed game board. Cells are ``(row, column)``, row 0 north.

    ``doorway`` is the direction bit (``grid.NORTH`` ...) of the exit cell's outer edge that holds
    the doorway; ``landmarks`` pairs each landmark cell with its name.
    """

    maze: Maze
    exit_cell: Cell
    doorway: int
    landmarks: tuple[tuple[Cell, str], ...]
    starts: tuple[Cell, ...]

    @cached_property
    def exit_distances(self) -> NDArray[np.int32]:
        """Moves from the exit to every cell, ``(height, width)`` (computed once, read-only)."""
        distances = bfs_distances(self.maze, self.exit_cell)
        distances.flags.writeable = False
        return distances

    @property
    def height(self) -> int:
        return int(self.maze.shape[0])

    @property
    def width(self) -> int:
        return int(self.maze.shape[1])

    def validate(self, config: Config) -> None:
        """Raise ``ValueError`` if this layout cannot host a game of ``config``."""
        h, w = self.height, self.width
        if (w, h) != (config.width, config.height):
            raise ValueError(
                f"layout is {w}x{h} but the config asks for {config.width}x{config.height}"
            )
        r, c = self.exit_cell
        outer = _outer_sides((r, c), w, h)
        if not outer:
            raise ValueError(f"exit cell {self.exit_cell} is not on the outer boundary")
        if self.doorway not in outer:
            raise ValueError(
                f"doorway {self.doorway} is not an outer edge of exit {self.exit_cell}"
            )
        if len(self.starts) != config.num_agents:
            raise ValueError(f"layout has {len(self.starts)} starts for {config.num_agents} agents")
        cells = list(self.starts)
        if len(set(cells)) != len(cells) or self.exit_cell in cells:
            raise ValueError("starts must be distinct cells other than the exit")
        lm_cells = [cell for cell, _ in self.landmarks]
        names = [name for _, name in self.landmarks]
        if len(set(lm_cells)) != len(lm_cells) or len(set(names)) != len(names):
            raise ValueError("landmarks must have distinct cells and distinct names")
        unknown = set(names) - set(LANDMARK_NAMES)
        if unknown:
            raise ValueError(f"unknown landmark names {sorted(unknown)}; allowed: {LANDMARK_NAMES}")
        for cell in (*cells, *lm_cells):
            if not (0 <= cell[0] < h and 0 <= cell[1] < w):
                raise ValueError(f"cell {cell} is outside the {w}x{h} maze")


class Generator(Protocol):
    """Anything that builds layouts from a config and a seeded random generator."""

    def generate(self, config: Config, rng: np.random.Generator) -> Layout: ...


def default_landmark_count(config: Config) -> int:
    """Landmarks for a config: the explicit count, or a count that scales with the maze area."""
    if config.landmark_count is not None:
        return config.landmark_count
    cells = config.width * config.height
    if config.landmark_density == "few":
        count = round(cells / 33)  # 3 on 10x10, 4 on 12x12
    else:
        count = round(10 + 4 * (cells - 81) / (289 - 81))  # 10 on 9x9 .. 14 on 17x17
    return max(1, min(count, len(LANDMARK_NAMES), cells - 1))


def _outer_sides(cell: Cell, width: int, height: int) -> list[int]:
    r, c = cell
    sides = []
    if r == 0:
        sides.append(NORTH)
    if c == width - 1:
        sides.append(EAST)
    if r == height - 1:
        sides.append(SOUTH)
    if c == 0:
        sides.append(WEST)
    return sides


@lru_cache(maxsize=16)
def _boundary_cells(width: int, height: int) -> tuple[Cell, ...]:
    return tuple(
        (r, c) for r in range(height) for c in range(width) if _outer_sides((r, c), width, height)
    )


@dataclass(frozen=True)
class PerfectMazeGenerator:
    """A perfect maze from :mod:`maze_envs.grid`, then exit, landmarks and starts at random.

    The exit is a uniformly chosen boundary cell (a corner picks one of its two outer sides for the
    doorway); landmarks go on distinct non-exit cells; starts on distinct non-exit cells at least
    ``config.min_start_distance`` moves from the exit.
    """

    algorithm: str = "wilson"

    def generate(self, config: Config, rng: np.random.Generator) -> Layout:
        w, h = config.width, config.height
        maze = generate_perfect_maze(self.algorithm, w, h, rng)
        boundary = _boundary_cells(w, h)
        exit_cell = boundary[int(rng.integers(len(boundary)))]
        sides = _outer_sides(exit_cell, w, h)
        doorway = sides[int(rng.integers(len(sides)))]
        exit_flat = exit_cell[0] * w + exit_cell[1]

        count = default_landmark_count(config)
        others = np.delete(np.arange(w * h), exit_flat)
        lm_flat = rng.choice(others, size=count, replace=False)
        names = rng.choice(len(LANDMARK_NAMES), size=count, replace=False)
        landmarks = tuple(
            ((int(f) // w, int(f) % w), LANDMARK_NAMES[int(n)])
            for f, n in zip(lm_flat, names, strict=True)
        )

        # A layout without starts yet gives the exit distances the starts are drawn by; the
        # finished layout keeps them (one search per game instead of two).
        distances = Layout(maze, exit_cell, doorway, landmarks, ()).exit_distances
        dist = distances.ravel()
        eligible = np.flatnonzero(dist >= config.min_start_distance)
        if len(eligible) < config.num_agents:
            raise ValueError(
                f"only {len(eligible)} cells are at least {config.min_start_distance} moves from "
                f"the exit, too few for {config.num_agents} agents; lower min_start_distance "
                f"(this maze's farthest cell is {int(dist.max())} moves away)"
            )
        start_flat = rng.choice(eligible, size=config.num_agents, replace=False)
        starts = tuple((int(f) // w, int(f) % w) for f in start_flat)
        layout = Layout(maze, exit_cell, doorway, landmarks, starts)
        layout.__dict__["exit_distances"] = distances  # the cached_property's slot: no 2nd BFS
        return layout


@dataclass(frozen=True)
class FixedGenerator:
    """Always the same layout (hand-made boards for tests and teaching)."""

    layout: Layout

    def generate(self, config: Config, rng: np.random.Generator) -> Layout:
        self.layout.validate(config)
        return self.layout


def describe_generator(generator: Generator, config: Config) -> dict[str, Any] | None:
    """What a journal stores so a replay can rebuild ``generator``'s games.

    ``None`` when the config says it all (the config's own ``maze_algorithm``). Raises
    ``ValueError`` for a generator the library cannot describe, so that no game is journaled that
    a replay could not rebuild.
    """
    if isinstance(generator, PerfectMazeGenerator):
        if generator.algorithm == config.maze_algorithm:
            return None
        return {"kind": "perfect_maze", "algorithm": generator.algorithm}
    if isinstance(generator, FixedGenerator):
        layout = generator.layout
        return {
            "kind": "fixed",
            "maze": layout.maze.tolist(),
            "exit_cell": list(layout.exit_cell),
            "doorway": layout.doorway,
            "landmarks": [[r, c, name] for (r, c), name in layout.landmarks],
            "starts": [list(cell) for cell in layout.starts],
        }
    raise ValueError(
        f"cannot journal games of an injected {type(generator).__name__}: a replay could not "
        "rebuild them from the journal. Journal games made by a PerfectMazeGenerator, a "
        "FixedGenerator or the config's maze_algorithm, or play this generator unjournaled"
    )


def generator_from_description(data: Mapping[str, Any]) -> Generator:
    """The generator :func:`describe_generator` described (``ValueError`` if malformed)."""
    try:
        kind = data["kind"]
        if kind == "perfect_maze":
            return make_generator(str(data["algorithm"]))
        if kind == "fixed":
            layout = Layout(
                maze=np.array(data["maze"], dtype=np.uint8),
                exit_cell=(int(data["exit_cell"][0]), int(data["exit_cell"][1])),
                doorway=int(data["doorway"]),
                landmarks=tuple(((int(r), int(c)), str(name)) for r, c, name in data["landmarks"]),
                starts=tuple((int(r), int(c)) for r, c in data["starts"]),
            )
            return FixedGenerator(layout)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"unreadable generator description: {exc!r}") from None
    raise ValueError(f"unknown generator kind {kind!r}; known: 'perfect_maze', 'fixed'")


def make_generator(name: str) -> Generator:
    """The generator for a maze algorithm name (one of ``grid.ALGORITHMS``)."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown maze_algorithm {name!r}; choose one of {sorted(ALGORITHMS)}")
    return PerfectMazeGenerator(name)
