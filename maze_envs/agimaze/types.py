"""The AGI Maze labyrinth data model (pydantic, JSON-serializable).

A labyrinth is a ``rows x cols`` grid. Walls are stored as per-cell open-edge bit masks in the
convention of :mod:`maze_envs.grid` (N=1, E=2, S=4, W=8; an open edge is stored on both cells it
joins). The outer frame (the *monolith*) is closed everywhere in ``open_edges``; its single
opening is the :class:`ExitGap`. Coordinates are ``(row, col)``, zero-based, row 0 at the top.

Cell contents: the key ``K``, the treasure chest ``T``, the exit key ``E``, rivers (chains of
arrow cells ending in a mouth), pit cycles and the extension items (boat, grenade packs,
flashlight). Every content occupies its own cell.

Example:
    >>> lab = Labyrinth(
    ...     rows=1, cols=2, open_edges=[[2, 8]], exit=ExitGap(cell=(0, 1), side="right"),
    ...     start=(0, 0), chest=(0, 1), key=None,
    ... )
    >>> lab.actions
    ['up', 'down', 'left', 'right']
"""

from __future__ import annotations

from itertools import pairwise
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from maze_envs.grid import EAST, NORTH, OPPOSITE, SOUTH, WEST

Pos = tuple[int, int]
Direction = Literal["up", "down", "left", "right"]

#: Movement directions in the authoritative action order.
DIRECTIONS: Final[tuple[Direction, ...]] = ("up", "down", "left", "right")
#: Direction -> (row delta, col delta).
DIRECTION_DELTAS: Final[dict[str, Pos]] = {
    "up": (-1, 0),
    "down": (1, 0),
    "left": (0, -1),
    "right": (0, 1),
}
#: Direction -> edge bit of :mod:`maze_envs.grid`.
DIRECTION_BITS: Final[dict[str, int]] = {"up": NORTH, "down": SOUTH, "left": WEST, "right": EAST}
_BY_BIT: Final = {DIRECTION_BITS[name]: name for name in DIRECTIONS}
#: The direction back where a move came from (from the grid's opposite edges).
OPPOSITE_DIRECTION: Final[dict[str, str]] = {
    name: _BY_BIT[OPPOSITE[DIRECTION_BITS[name]]] for name in DIRECTIONS
}
#: Formal events of a move into a wall (an interior wall or the monolith frame).
WALL_EVENTS: Final[frozenset[str]] = frozenset({"bumped_wall", "bumped_monolith"})
#: Formal events of a move that met an obstacle and stayed: a wall, or the exit closed to it.
BLOCKED_EVENTS: Final[tuple[str, ...]] = (
    "bumped_wall",
    "bumped_monolith",
    "exit_blocked",
    "exit_locked",
)
LOOK_ACTIONS: Final[tuple[str, ...]] = tuple(f"look_{d}" for d in DIRECTIONS)
BOMB_ACTIONS: Final[tuple[str, ...]] = tuple(f"bomb_{d}" for d in DIRECTIONS)
#: Largest board side accepted (keeps rendering and planning bounded).
MAX_SIDE: Final = 64
#: Most grenade packs on one board and grenades in one pack (bounds the inventory space).
MAX_GRENADE_PACKS: Final = 4
MAX_GRENADES_PER_PACK: Final = 99


def step_towards(a: Pos, b: Pos) -> str | None:
    """The direction that leads from ``a`` to the orthogonal neighbour ``b`` (None otherwise)."""
    delta = (b[0] - a[0], b[1] - a[1])
    for name, d in DIRECTION_DELTAS.items():
        if d == delta:
            return name
    return None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExitGap(_Model):
    """The single opening of the frame: a border cell and the side of it that is open."""

    cell: Pos
    side: Direction


class River(_Model):
    """A river: arrow cells listed in flow order, then the mouth.

    Each arrow points at the next cell of the list (the last arrow points at the mouth), so the
    arrow glyph of every cell follows from the list. Landing on an arrow carries the player up to
    two cells downstream, stopping at the mouth.
    """

    cells: list[Pos] = Field(min_length=1, description="arrow cells, upstream first")
    mouth: Pos

    def flow_direction(self, index: int) -> str:
        """Direction in which the arrow ``cells[index]`` pushes."""
        nxt = self.cells[index + 1] if index + 1 < len(self.cells) else self.mouth
        direction = step_towards(self.cells[index], nxt)
        assert direction is not None, "validated in Labyrinth"
        return direction


class PitCycle(_Model):
    """Pits that teleport round a cycle: entering ``cells[i]`` lands on ``cells[i + 1]`` (wrapping).

    Cells are listed in reading order (row-major), which is also the teleport order; the map text
    can then carry a cycle with one glyph per pit.
    """

    cells: list[Pos] = Field(min_length=2)


class GrenadePack(_Model):
    """A grenade pack lying on ``cell``; picking it up adds ``count`` grenades."""

    cell: Pos
    count: int = Field(default=1, ge=1, le=MAX_GRENADES_PER_PACK)


class Labyrinth(_Model):
    """One AGI Maze labyrinth: geometry, items and start (see the module docstring)."""

    rows: int = Field(ge=1, le=MAX_SIDE)
    cols: int = Field(ge=1, le=MAX_SIDE)
    open_edges: list[list[int]] = Field(description="per-cell open-edge bits N=1,E=2,S=4,W=8")
    exit: ExitGap
    start: Pos
    key: Pos | None = None
    chest: Pos | None = None
    exit_key: Pos | None = None
    rivers: list[River] = Field(default_factory=list)
    pits: list[PitCycle] = Field(default_factory=list)
    boat: Pos | None = None
    flashlight: Pos | None = None
    grenade_packs: list[GrenadePack] = Field(default_factory=list, max_length=MAX_GRENADE_PACKS)
    open_map: bool = Field(default=False, description="tutorial: the map is shown in full")
    max_steps: int | None = Field(default=None, ge=1)

    @property
    def actions(self) -> list[str]:
        """The labyrinth's action list in authoritative order."""
        out: list[str] = list(DIRECTIONS)
        if self.flashlight is not None:
            out.extend(LOOK_ACTIONS)
        if self.grenade_packs:
            out.extend(BOMB_ACTIONS)
        return out

    def in_bounds(self, pos: Pos) -> bool:
        return 0 <= pos[0] < self.rows and 0 <= pos[1] < self.cols

    def occupied_cells(self) -> dict[Pos, str]:
        """Every cell that holds something -> a short description of it."""
        out: dict[Pos, str] = {}
        for name, pos in self._content_list():
            out.setdefault(pos, name)
        return out

    def _content_list(self) -> list[tuple[str, Pos]]:
        items: list[tuple[str, Pos]] = []
        for name in ("key", "chest", "exit_key", "boat", "flashlight"):
            pos = getattr(self, name)
            if pos is not None:
                items.append((name, pos))
        items.extend((f"grenade pack {i}", p.cell) for i, p in enumerate(self.grenade_packs))
        for i, river in enumerate(self.rivers):
            items.extend((f"river {i}", c) for c in river.cells)
            items.append((f"mouth of river {i}", river.mouth))
        for i, cycle in enumerate(self.pits):
            items.extend((f"pit of cycle {i}", c) for c in cycle.cells)
        return items

    @model_validator(mode="after")
    def _check(self) -> Labyrinth:
        self._check_edges()
        self._check_exit()
        if not self.in_bounds(self.start):
            raise ValueError(f"start {self.start} lies outside the {self.rows}x{self.cols} board")
        seen: dict[Pos, str] = {}
        for name, pos in self._content_list():
            if not self.in_bounds(pos):
                raise ValueError(f"{name} at {pos} lies outside the {self.rows}x{self.cols} board")
            if pos in seen:
                raise ValueError(
                    f"{name} and {seen[pos]} share cell {pos}; every item, river cell and pit "
                    "needs its own cell"
                )
            seen[pos] = name
        for i, river in enumerate(self.rivers):
            path = [*river.cells, river.mouth]
            for a, b in pairwise(path):
                direction = step_towards(a, b)
                if direction is None:
                    raise ValueError(f"river {i}: {b} does not neighbour {a}")
                if not self.open_edges[a[0]][a[1]] & DIRECTION_BITS[direction]:
                    raise ValueError(f"river {i}: a wall separates {a} from {b}")
        for i, cycle in enumerate(self.pits):
            if list(cycle.cells) != sorted(cycle.cells):
                raise ValueError(
                    f"pit cycle {i}: list its cells in reading order (row-major), got {cycle.cells}"
                )
        if len(self.pits) > 9:
            raise ValueError(f"at most 9 pit cycles are supported, got {len(self.pits)}")
        return self

    def _check_edges(self) -> None:
        if len(self.open_edges) != self.rows or any(
            len(row) != self.cols for row in self.open_edges
        ):
            raise ValueError(f"open_edges must be {self.rows} rows of {self.cols} bit masks")
        for r, row in enumerate(self.open_edges):
            for c, mask in enumerate(row):
                if not 0 <= mask <= 15:
                    raise ValueError(f"open_edges[{r}][{c}]={mask} is not a 4-bit mask (0..15)")
                for name, bit in DIRECTION_BITS.items():
                    if not mask & bit:
                        continue
                    dr, dc = DIRECTION_DELTAS[name]
                    nb = (r + dr, c + dc)
                    if not self.in_bounds(nb):
                        raise ValueError(
                            f"cell {(r, c)} opens {name} through the frame; the frame is closed "
                            "in open_edges and its single opening is given by `exit`"
                        )
                    if not self.open_edges[nb[0]][nb[1]] & OPPOSITE[bit]:
                        raise ValueError(f"edge between {(r, c)} and {nb} is open on one side only")

    def _check_exit(self) -> None:
        (r, c), side = self.exit.cell, self.exit.side
        if not self.in_bounds((r, c)):
            raise ValueError(f"exit cell {(r, c)} lies outside the board")
        on_side = {
            "up": r == 0,
            "down": r == self.rows - 1,
            "left": c == 0,
            "right": c == self.cols - 1,
        }[side]
        if not on_side:
            raise ValueError(f"exit cell {(r, c)} is not on the {side} side of the frame")


class BundleMeta(_Model):
    """Where a labyrinth comes from and how it is scored."""

    path: str = Field(default="", description="pack-relative path, e.g. TRAINING/S0-keys/...")
    group: str = ""
    family: str = ""
    stage: str = ""
    seed: int | None = None
    generator: str = Field(default="", description="dotted name of the generator class")
    generator_version: str = Field(
        default="", description="version of the generator's drawing algorithm"
    )
    pack_version: str = Field(
        default="", description="version of the pack the bundle ships in; empty if hand-made"
    )
    optimal_steps: int | None = Field(default=None, ge=0)
    soft_good_steps: int | None = Field(default=None, ge=1)
    hard_max_steps: int | None = Field(default=None, ge=1)
    description: str = ""


#: Current version of the JSON bundle format.
BUNDLE_FORMAT_VERSION: Final = 1


class Bundle(_Model):
    """A versioned JSON bundle: one labyrinth and its metadata."""

    format_version: int = BUNDLE_FORMAT_VERSION
    labyrinth: Labyrinth
    meta: BundleMeta = Field(default_factory=BundleMeta)

    @model_validator(mode="after")
    def _check_version(self) -> Bundle:
        if self.format_version != BUNDLE_FORMAT_VERSION:
            raise ValueError(
                f"unsupported bundle format_version {self.format_version}; this version of "
                f"maze-envs reads format_version {BUNDLE_FORMAT_VERSION}"
            )
        return self
