"""Instance generators of AGI Maze labyrinths (the distribution behind the shipped packs).

A generator is an object called with a numpy ``Generator`` that returns one
:class:`~maze_envs.agimaze.types.Labyrinth`; packs and environments receive it injected, never
subclass it. :class:`LabyrinthGenerator` draws from a :class:`GeneratorConfig` (pydantic data):

1. **Walls.** A uniform spanning tree of the board (Wilson's algorithm, :mod:`maze_envs.grid`),
   then ``loops`` more interior walls opened at random (a number, or a range drawn per draft).
   The recorded labyrinths are not perfect mazes: 3x3 boards keep one or two walls (a tree plus
   2-3 openings), 4x4 boards a tree plus 2, 3x4 river boards a tree plus 0-4, 4x5 boards a plain
   tree (``benchmarks/agimaze_structure.py``).
2. **Exit.** One gap drawn uniformly among the frame's edge segments.
3. **Rivers.** Each river is a self-avoiding chain of ``arrows`` cells plus its mouth; the walls
   along it are opened so that no arrow faces a wall (as in every recording). With
   ``RiverSpec.in_tree`` the river is carved into the spanning tree (for each wall it opens, one
   edge of the cycle that closes is closed again) and the loops are opened after it, so rivers
   add no opening beyond the tree, as in the recorded maps.
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
from typing import Final, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.layout import (
    Draft,
    draw_cell,
    draw_exit,
    only_sealed_cut_off,
    open_loops,
    place_boat_barrier,
    place_pit_cycle,
    place_river,
)
from maze_envs.agimaze.planner import (
    DeadStates,
    dead_states,
    random_agent_success,
    solve,
    win_length,
)
from maze_envs.agimaze.types import (
    GrenadePack,
    Labyrinth,
    Pos,
)
from maze_envs.grid import bfs_distances, generate_perfect_maze

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
            open_loops(maze, loops, rng)
        draft = Draft(maze, draw_exit(cfg.rows, cfg.cols, rng))
        if cfg.boat_barrier and not place_boat_barrier(draft, cfg.rivers.arrows, rng):
            return None
        for _ in range(cfg.rivers.count - len(draft.rivers)):
            if not place_river(draft, cfg.rivers.arrows, cfg.rivers.in_tree, rng):
                return None
        if in_tree:
            open_loops(draft.maze, loops, rng)
        for _ in range(cfg.pits.cycles):
            if not place_pit_cycle(draft, cfg.pits.per_cycle, rng):
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
        if cfg.sealed and not only_sealed_cut_off(draft, {items[n] for n in cfg.sealed}):
            return None
        extras: list[str] = (["boat"] if cfg.boat else []) + (
            ["flashlight"] if cfg.flashlight else []
        )
        extras += [f"grenades{i}" for i in range(cfg.grenade_packs)]
        for extra in extras:
            pos = draw_cell(draft.free_cells(), rng)
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

    def _draw_start(self, draft: Draft, rng: np.random.Generator) -> Pos | None:
        low, high = self.config.start_exit_distance
        distance = bfs_distances(draft.maze, draft.exit.cell)
        free = draft.free_cells()
        return draw_cell([p for p in free if low <= distance[p] <= high], rng)

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
