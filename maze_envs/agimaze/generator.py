"""Instance generators of AGI Maze labyrinths (the distribution behind the shipped packs).

A generator is an object called with a numpy ``Generator`` that returns one
:class:`~maze_envs.agimaze.types.Labyrinth`; packs and environments receive it injected, never
subclass it. :class:`LabyrinthGenerator` draws from a :class:`GeneratorConfig` (pydantic data):

1. **Walls.** A uniform spanning tree of the board (Wilson's algorithm, :mod:`maze_envs.grid`),
   then ``loops`` more interior walls opened at random. The recorded labyrinths are not perfect
   mazes: 3x3 boards keep one or two walls (a tree plus 2-3 openings), 4x4 boards a tree plus 2,
   3x4 river boards a tree plus 0-4, 4x5 boards a plain tree.
2. **Exit.** One gap drawn uniformly among the frame's edge segments.
3. **Rivers.** Each river is a self-avoiding chain of ``arrows`` cells plus its mouth; the walls
   along it are opened so that no arrow faces a wall (as in every recording).
4. **Pits.** ``cycles`` cycles of ``per_cycle`` pits, off the exit cell.
5. **Items.** The key, chest and exit key lie at least ``item_exit_distance`` moves from the exit
   cell (never closer in the recordings); extension items anywhere free.
6. **Start.** A free cell whose distance from the exit cell lies in ``start_exit_distance``
   (recorded starts are mostly 1-2 moves from the exit cell).
7. **Acceptance.** Every player state reachable from the start is enumerated with the engine's
   own transition (:func:`~maze_envs.agimaze.planner.dead_states`). The shortest win must take a
   number of steps inside ``optimal_steps``; with ``dead_states="forbid"`` (the default) every
   reachable state must still be able to win, so no move, however unlucky, makes the labyrinth
   unwinnable; with ``"grenades_only"`` the only moves that may enter a dead state are grenade
   throws (a grenade wasted on the wrong wall, when the labyrinth has no grenade to spare);
   ``"allow"`` checks nothing (generator version 2 behaved so). Every event of ``plan_events``
   must occur on the shortest plan (tutorial lessons: "the plan rides a river"); every item of
   ``requires`` must be indispensable, i.e. the labyrinth becomes unwinnable when it is removed
   (extension packs); with ``random_success`` set, the exact probability that a uniform random
   agent wins within the band's horizon must lie in the band (difficulty curation of the
   TRAINING stages). Rejected drafts are redrawn from the same rng.
   A band bounds single labyrinths only; the pack builder keeps a whole TRAINING stage's *mean*
   success on the real rate by choosing, deterministically, among accepted draws of successive
   seeds (rule 2 of *Random-agent calibration* in :mod:`maze_envs.agimaze.packs.catalog`).

Extension layouts build the situation the item resolves: ``boat_barrier`` closes the exit cell
off behind a river that flows away from it (the current always washes a walker back, so only the
boat, which holds against the current, reaches the exit); ``sealed`` walls in the key, the chest or
the exit key on every side (only a grenade opens the way), and no other cell with it (a player
could not tell which walled-in cell to open).

Example:
    >>> import numpy as np
    >>> from maze_envs.agimaze.planner import optimal_length
    >>> config = GeneratorConfig(rows=3, cols=3, loops=3, optimal_steps=(9, 40))
    >>> lab = LabyrinthGenerator(config)(np.random.default_rng(7))
    >>> (lab.rows, lab.cols), 9 <= optimal_length(lab) <= 40
    ((3, 3), True)
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise
from typing import Final, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.planner import (
    DeadStates,
    dead_states,
    random_agent_success,
    solve,
    win_length,
)
from maze_envs.agimaze.types import (
    DIRECTION_BITS,
    ExitGap,
    GrenadePack,
    Labyrinth,
    PitCycle,
    Pos,
    River,
    step_towards,
)
from maze_envs.grid import (
    DELTAS,
    EAST,
    OPPOSITE,
    SOUTH,
    Maze,
    bfs_distances,
    carve,
    generate_perfect_maze,
    neighbours,
)

#: Version of :class:`LabyrinthGenerator`'s drawing algorithm: bumped by any change that draws
#: a different labyrinth from the same configuration and rng (stored in bundle metadata).
#: 2: the faster Wilson sampler of :mod:`maze_envs.grid` draws other spanning trees.
#: 3: drafts with a reachable dead state are rejected (``GeneratorConfig.dead_states``).
GENERATOR_VERSION: Final = "3"
#: What a generator accepts of dead states (see *Acceptance* in the module docstring).
DeadStatePolicy = Literal["forbid", "grenades_only", "allow"]
#: Items whose necessity a generator can demand (``GeneratorConfig.requires``).
RequiredItem = Literal["boat", "grenades", "flashlight"]
#: Cells an extension layout seals with walls.
SealedItem = Literal["key", "chest", "exit_key"]


class GenerationError(RuntimeError):
    """No draft met the configuration's constraints within ``max_attempts``."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RiverSpec(_Config):
    """Rivers per labyrinth and the range of their arrow counts (the mouth comes on top)."""

    count: int = Field(default=0, ge=0, le=8)
    arrows: tuple[int, int] = (2, 3)
    in_tree: bool = Field(
        default=False,
        description="carve each river into the spanning tree, closing an edge of the cycle it "
        "makes, so rivers add no opening beyond the tree (loops are opened after them)",
    )

    @model_validator(mode="after")
    def _check(self) -> RiverSpec:
        low, high = self.arrows
        if not 1 <= low <= high:
            raise ValueError(f"river arrows must satisfy 1 <= low <= high, got {self.arrows}")
        return self


class PitSpec(_Config):
    """Pit cycles per labyrinth and the pits in each cycle."""

    cycles: int = Field(default=0, ge=0, le=9)
    per_cycle: int = Field(default=2, ge=2, le=8)


class RandomSuccessBand(_Config):
    """Accepted range of a uniform random agent's exact win probability within ``horizon`` steps."""

    horizon: int = Field(ge=1)
    low: float = Field(ge=0.0, le=1.0)
    high: float = Field(ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _check(self) -> RandomSuccessBand:
        if self.low > self.high:
            raise ValueError(f"random success band needs low <= high, got {self.low} > {self.high}")
        return self


class GeneratorConfig(_Config):
    """The instance distribution of one pack stage (see the module docstring for each step)."""

    rows: int = Field(ge=2, le=16)
    cols: int = Field(ge=2, le=16)
    loops: int | tuple[int, int] = Field(
        default=0,
        description="interior walls opened beyond a spanning tree: a number, or a range "
        "(low, high) drawn uniformly per labyrinth",
    )
    exit_key: bool = False
    rivers: RiverSpec = RiverSpec()
    pits: PitSpec = PitSpec()
    boat: bool = False
    grenade_packs: int = Field(default=0, ge=0, le=4)
    flashlight: bool = False
    boat_barrier: bool = Field(default=False, description="exit cell cut off by a river")
    sealed: tuple[SealedItem, ...] = Field(default=(), description="cells walled in on all sides")
    item_exit_distance: int = Field(default=2, ge=0)
    start_exit_distance: tuple[int, int] = (1, 2)
    optimal_steps: tuple[int, int] = (1, 10_000)
    plan_events: tuple[str, ...] = ()
    requires: tuple[RequiredItem, ...] = ()
    random_success: RandomSuccessBand | None = None
    dead_states: DeadStatePolicy = Field(
        default="forbid",
        description="reachable states that cannot win: forbid (the default), grenades_only "
        "(the default with grenade packs: a grenade thrown at the wrong wall may lose the game) "
        "or allow",
    )
    open_map: bool = False
    max_attempts: int = Field(default=5000, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _grenade_default(cls, data: object) -> object:
        if isinstance(data, dict) and "dead_states" not in data and data.get("grenade_packs"):
            return {**data, "dead_states": "grenades_only"}
        return data

    @model_validator(mode="after")
    def _check(self) -> GeneratorConfig:
        if isinstance(self.loops, int) and self.loops < 0:
            raise ValueError(f"loops must be greater than or equal to 0, got {self.loops}")
        loops = (self.loops, self.loops) if isinstance(self.loops, int) else self.loops
        for name, (low, high) in (
            ("loops", loops),
            ("start_exit_distance", self.start_exit_distance),
            ("optimal_steps", self.optimal_steps),
        ):
            if not 0 <= low <= high:
                raise ValueError(f"{name} must satisfy 0 <= low <= high, got {(low, high)}")
        if self.boat_barrier and not self.boat:
            raise ValueError("boat_barrier needs boat=True (nothing else crosses the barrier)")
        if self.sealed and not self.grenade_packs:
            raise ValueError("sealed cells need grenade_packs >= 1 (nothing else opens them)")
        if "exit_key" in self.sealed and not self.exit_key:
            raise ValueError("cannot seal the exit key of a config without exit_key=True")
        if "boat" in self.requires and not self.boat:
            raise ValueError("requires 'boat' but the config places no boat")
        if "grenades" in self.requires and not self.grenade_packs:
            raise ValueError("requires 'grenades' but the config places no grenade pack")
        if "flashlight" in self.requires and not self.flashlight:
            raise ValueError("requires 'flashlight' but the config places no flashlight")
        cells = self.rows * self.cols
        needed = (
            3
            + int(self.exit_key)
            + self.rivers.count * (self.rivers.arrows[1] + 1)
            + self.pits.cycles * self.pits.per_cycle
            + int(self.boat)
            + self.grenade_packs
            + int(self.flashlight)
        )
        if needed > cells:
            raise ValueError(f"a {self.rows}x{self.cols} board cannot hold {needed} contents")
        return self


class Generator(Protocol):
    """Anything that draws a labyrinth from a numpy Generator."""

    def __call__(self, rng: np.random.Generator) -> Labyrinth: ...


_ITEM_FIELDS: Final[dict[RequiredItem, dict[str, object]]] = {
    "boat": {"boat": None},
    "grenades": {"grenade_packs": []},
    "flashlight": {"flashlight": None},
}


def without_item(lab: Labyrinth, item: RequiredItem) -> Labyrinth:
    """``lab`` with the extension ``item`` taken off the board (and its actions gone)."""
    return lab.model_copy(update=_ITEM_FIELDS[item])


def plan_events(lab: Labyrinth, plan: Iterable[str]) -> set[str]:
    """Every event the engine reports while playing ``plan`` on ``lab``."""
    compiled = compile_labyrinth(lab)
    state = initial_state(compiled)
    events: set[str] = set()
    for action in plan:
        result = transition(compiled, state, action)
        events.update(result.events)
        state = result.state
    return events


class _Draft:
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


class LabyrinthGenerator:
    """Draws labyrinths from a :class:`GeneratorConfig` (see the module docstring)."""

    def __init__(self, config: GeneratorConfig) -> None:
        self.config = config

    def __call__(self, rng: np.random.Generator) -> Labyrinth:
        for _ in range(self.config.max_attempts):
            lab = self._draft(rng)
            if lab is not None and self._accept(lab):
                return lab
        raise GenerationError(
            f"no labyrinth met the constraints in {self.config.max_attempts} attempts: "
            f"{self.config.model_dump()}"
        )

    # -- drafting ---------------------------------------------------------------------------

    def _draft(self, rng: np.random.Generator) -> Labyrinth | None:
        cfg = self.config
        maze = generate_perfect_maze("wilson", cfg.cols, cfg.rows, rng)
        if isinstance(cfg.loops, int):
            loops = cfg.loops
        else:
            loops = int(rng.integers(cfg.loops[0], cfg.loops[1] + 1))
        in_tree = cfg.rivers.in_tree
        if not in_tree:
            _open_loops(maze, loops, rng)
        draft = _Draft(maze, _draw_exit(cfg.rows, cfg.cols, rng))
        if cfg.boat_barrier and not _place_boat_barrier(draft, cfg.rivers, rng):
            return None
        for _ in range(cfg.rivers.count - len(draft.rivers)):
            if not _place_river(draft, cfg.rivers, rng):
                return None
        if in_tree:
            _open_loops(draft.maze, loops, rng)
        for _ in range(cfg.pits.cycles):
            if not _place_pit_cycle(draft, cfg.pits.per_cycle, rng):
                return None
        exit_distance = bfs_distances(draft.maze, draft.exit.cell)
        far = [p for p in draft.free_cells() if exit_distance[p] >= cfg.item_exit_distance]
        core = ["key", "chest"] + (["exit_key"] if cfg.exit_key else [])
        if len(far) < len(core):
            return None
        picks = rng.choice(len(far), size=len(core), replace=False)
        items: dict[str, Pos] = {name: far[int(i)] for name, i in zip(core, picks, strict=True)}
        draft.taken.update(items.values())
        for name in cfg.sealed:
            draft.isolate(items[name])
        if cfg.sealed and not _only_sealed_cut_off(draft, {items[n] for n in cfg.sealed}):
            return None
        extras: list[str] = (["boat"] if cfg.boat else []) + (
            ["flashlight"] if cfg.flashlight else []
        )
        extras += [f"grenades{i}" for i in range(cfg.grenade_packs)]
        for extra in extras:
            pos = _draw_cell(draft.free_cells(), rng)
            if pos is None:
                return None
            items[extra] = pos
            draft.taken.add(pos)
        start = self._draw_start(draft, rng)
        if start is None:
            return None
        return Labyrinth(
            rows=cfg.rows,
            cols=cfg.cols,
            open_edges=draft.maze.astype(int).tolist(),
            exit=draft.exit,
            start=start,
            key=items["key"],
            chest=items["chest"],
            exit_key=items.get("exit_key"),
            rivers=draft.rivers,
            pits=draft.pits,
            boat=items.get("boat"),
            flashlight=items.get("flashlight"),
            grenade_packs=[
                GrenadePack(cell=items[f"grenades{i}"]) for i in range(cfg.grenade_packs)
            ],
            open_map=cfg.open_map,
        )

    def _draw_start(self, draft: _Draft, rng: np.random.Generator) -> Pos | None:
        low, high = self.config.start_exit_distance
        distance = bfs_distances(draft.maze, draft.exit.cell)
        free = draft.free_cells()
        return _draw_cell([p for p in free if low <= distance[p] <= high], rng)

    # -- acceptance -------------------------------------------------------------------------

    def _accept(self, lab: Labyrinth) -> bool:
        cfg = self.config
        analysis = dead_states(lab)
        length = win_length(analysis.graph)
        low, high = cfg.optimal_steps
        if length is None or not low <= length <= high:
            return False
        if not dead_states_allowed(analysis, cfg.dead_states):
            return False
        if cfg.plan_events:
            plan = solve(lab)
            if plan is None or not set(cfg.plan_events) <= plan_events(lab, plan):
                return False
        if any(solve(without_item(lab, item)) is not None for item in cfg.requires):
            return False
        band = cfg.random_success
        if band is None:
            return True
        (success,) = random_agent_success(analysis.graph, [band.horizon])
        return band.low <= success <= band.high


def dead_states_allowed(analysis: DeadStates, policy: DeadStatePolicy) -> bool:
    """Whether a labyrinth's dead states are acceptable under ``policy``.

    ``forbid``: none is reachable. ``grenades_only``: every move from a live state into a dead
    one is a grenade throw (``bomb_*``), so only wasting a grenade can lose the game. ``allow``:
    anything goes.
    """
    if policy == "allow" or bool(analysis.live.all()):
        return True
    if policy == "forbid":
        return False
    return all(entry.action.startswith("bomb_") for entry in analysis.entries())


def _only_sealed_cut_off(draft: _Draft, sealed: set[Pos]) -> bool:
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


def _draw_cell(cells: list[Pos], rng: np.random.Generator) -> Pos | None:
    return cells[int(rng.integers(len(cells)))] if cells else None


def _open_loops(maze: Maze, count: int, rng: np.random.Generator) -> None:
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


def _draw_exit(rows: int, cols: int, rng: np.random.Generator) -> ExitGap:
    """One of the 2 x (rows + cols) frame segments, uniformly."""
    segments: list[tuple[Pos, str]] = [((0, c), "up") for c in range(cols)]
    segments += [((rows - 1, c), "down") for c in range(cols)]
    segments += [((r, 0), "left") for r in range(rows)]
    segments += [((r, cols - 1), "right") for r in range(rows)]
    cell, side = segments[int(rng.integers(len(segments)))]
    return ExitGap(cell=cell, side=side)


def _random_chain(
    draft: _Draft, length: int, rng: np.random.Generator, first: Pos | None = None
) -> list[Pos] | None:
    """A self-avoiding chain of ``length`` free cells, or None when the walk gets stuck."""
    free = set(draft.free_cells())
    cell = first if first is not None else _draw_cell(sorted(free), rng)
    if cell is None or cell not in free:
        return None
    chain = [cell]
    while len(chain) < length:
        options = [nb for _, nb in neighbours(chain[-1], draft.cols, draft.rows) if nb in free]
        options = [nb for nb in options if nb not in chain]
        nxt = _draw_cell(options, rng)
        if nxt is None:
            return None
        chain.append(nxt)
    return chain


def _open_along(draft: _Draft, path: list[Pos]) -> None:
    for a, b in pairwise(path):
        direction = step_towards(a, b)
        assert direction is not None
        carve(draft.maze, a, DIRECTION_BITS[direction])


def _place_river(draft: _Draft, spec: RiverSpec, rng: np.random.Generator) -> bool:
    low, high = spec.arrows
    arrows = int(rng.integers(low, high + 1))
    chain = _random_chain(draft, arrows + 1, rng)
    if chain is None:
        return False
    if spec.in_tree:
        if not _carve_into_tree(draft, chain, rng):
            return False
    else:
        _open_along(draft, chain)
    draft.rivers.append(River(cells=chain[:-1], mouth=chain[-1]))
    draft.taken.update(chain)
    return True


def _river_edges(draft: _Draft) -> set[frozenset[Pos]]:
    return {
        frozenset(pair) for river in draft.rivers for pair in pairwise([*river.cells, river.mouth])
    }


def _carve_into_tree(draft: _Draft, chain: list[Pos], rng: np.random.Generator) -> bool:
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


def _place_boat_barrier(draft: _Draft, spec: RiverSpec, rng: np.random.Generator) -> bool:
    """Cut the exit cell off behind a river that flows away from it.

    The exit cell keeps a single open edge, to the river's first arrow; that arrow keeps only its
    edges to the exit cell and down the river. Landing on any arrow carries a walker downstream,
    so without the boat the first arrow, and with it the exit cell, is never reached.
    """
    low, high = spec.arrows
    arrows = max(int(rng.integers(low, high + 1)), 1)
    exit_cell = draft.exit.cell
    draft.taken.add(exit_cell)
    chain = _random_chain(
        draft, arrows + 1, rng, first=_draw_cell(_free_neighbours(draft, exit_cell), rng)
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


def _place_pit_cycle(draft: _Draft, per_cycle: int, rng: np.random.Generator) -> bool:
    """``per_cycle`` free cells off the exit cell, teleporting in reading order."""
    cells = [p for p in draft.free_cells() if p != draft.exit.cell]
    if len(cells) < per_cycle:
        return False
    picks = sorted(cells[int(i)] for i in rng.choice(len(cells), size=per_cycle, replace=False))
    draft.pits.append(PitCycle(cells=picks))
    draft.taken.update(picks)
    return True


def _free_neighbours(draft: _Draft, cell: Pos) -> list[Pos]:
    return [nb for _, nb in neighbours(cell, draft.cols, draft.rows) if nb not in draft.taken]


__all__ = [
    "DeadStatePolicy",
    "GenerationError",
    "Generator",
    "GeneratorConfig",
    "LabyrinthGenerator",
    "PitSpec",
    "RandomSuccessBand",
    "RequiredItem",
    "RiverSpec",
    "dead_states_allowed",
    "plan_events",
    "without_item",
]
