"""The stage table of the shipped AGI Maze packs: paths, boards, budgets and mechanics (data).

Groups, as on the real server:

* ``TUTORIAL/STAGE-01..07`` -- open maps, one lesson each (see :data:`TUTORIAL_LESSONS`).
* ``TRAINING/<family>/STAGE-01..06`` -- board sizes and step budgets of the real calibration
  table (:data:`REAL_CALIBRATION`, SPEC section 5); mechanics and generator settings are ours,
  tuned so that a uniform random agent succeeds about as often as on the real stages
  (``benchmarks/agimaze_calibration.py`` measures it; see *Random-agent calibration* below).
* ``CLASSIC/<EASY|MEDIUM|HARD>/<keys|rivers|pits>/<R>x<C>`` -- larger boards, core rules.
* ``EXTENDED/<boat|grenades|flashlight>/STAGE-0k-<R>x<C>`` -- one extension item each; boat and
  grenade labyrinths cannot be won without their item.

Fairness. Every stage's generator forbids reachable dead states (states from which the labyrinth
can no longer be won: ``GeneratorConfig.dead_states``), checked over every state reachable from
the start; the grenade stages allow them only after a grenade throw, since their one grenade
blown at the wrong wall leaves the sealed item out of reach.

Budgets. A bundle's ``max_steps`` is its stage's ``hard_max_steps`` and ``soft_good_steps`` is
half of it (the real table's rule of thumb). TRAINING takes both from the real table. The other
groups derive them from the exact optimal solution length ``L`` of each labyrinth::

    hard_max_steps = 10 * ceil(factor * L / 10)      soft_good_steps = hard_max_steps // 2

with ``factor`` = :data:`TUTORIAL_BUDGET_FACTOR` for open-map tutorials and
:data:`HIDDEN_BUDGET_FACTOR` for hidden maps (the median ratio of the TRAINING budgets to their
labyrinths' optimal lengths is 9.5). ``max_steps`` is the hard budget because the real harnesses
treat it as hard; the API doc's example ``max_steps: 200`` on a 4x4 board matches no TRAINING 4x4
row (160), so it must come from another group, as our rule gives for a 4x4 of optimal length 20.

Random-agent calibration (TRAINING). Let ``t`` be the real success rate of a stage (as a
probability), ``u`` its real good rate (won within ``soft_good_steps``), and ``p`` and ``q`` the
exact probabilities that a uniform random agent wins a labyrinth within ``hard_max_steps`` and
within ``soft_good_steps`` (``planner.random_agent_success``, on the absorbing Markov chain of
the reachable states). Two rules, both deterministic:

1. *Per bundle* (the generator's ``random_success`` band): ``t / RANDOM_BAND_FACTOR <= p <=
   t * RANDOM_BAND_FACTOR``, so every bundle is of the stage's difficulty (the recorded real
   labyrinths of one family spread wider still).
2. *Per stage* (the pack builder): bundle ``i`` of ``n`` is the first draw of its seed sequence
   (``build.bundle_seed(path, i, 0)``, ``(path, i, 1)``, ...; at most :data:`BUNDLE_DRAWS`)
   that keeps both running totals on their target lines, ``|p_1 + ... + p_i - i * t| <=
   STAGE_MEAN_TOLERANCE * n * t`` and ``|q_1 + ... + q_i - i * u| <= GOOD_MEAN_TOLERANCE * n * u``
   (``LOOSE_GOOD_TOLERANCE`` where the real good rate is below :data:`GOOD_CALIBRATED_FROM`).
   So the stage means of ``p`` and ``q``, the rates a random agent measures over equally many
   episodes per bundle, lie within a factor 1 / 0.9 = 1.11 (success) and 1 / 0.8 = 1.25 (good)
   of the real ones, and the late rate ``p - q`` follows; the goal factor is 1.5. Single
   bundles keep the spread of rule 1. ``benchmarks/agimaze_calibration.py`` prints the table.

Example:
    >>> stage = stage_by_path("TRAINING/S0-keys/STAGE-03")
    >>> (stage.generator.rows, stage.generator.cols), stage.hard_max_steps, stage.real.success
    ((4, 4), 160, 9.2)
    >>> budget_for(12, HIDDEN_BUDGET_FACTOR)
    (60, 120)
"""

from __future__ import annotations

import math
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from maze_envs.agimaze.generator import GeneratorConfig, PitSpec, RandomSuccessBand, RiverSpec
from maze_envs.agimaze.packs.realtable import REAL_CALIBRATION, CalibrationRow
from maze_envs.agimaze.packs.tutorials import TUTORIAL_LESSONS

#: Version of the pack contents; a generator or catalog change that alters any bundle bumps it.
#: 2: generator version 2; TRAINING bundles chosen so that each stage's mean random-agent
#: success lies on the real rate (``STAGE_MEAN_TOLERANCE``). Still loadable by name
#: (:data:`~maze_envs.agimaze.packs.PACK_VERSIONS`).
#: 3: generator version 3 (no reachable dead state, grenade throws apart); each TRAINING
#: stage's mean good rate also lies on the real one (``GOOD_MEAN_TOLERANCE``).
PACK_VERSION: Final = "agimaze-packs-3"
#: Budget factor (x optimal length) of open-map tutorials.
TUTORIAL_BUDGET_FACTOR: Final = 3.0
#: Budget factor (x optimal length) of hidden-map CLASSIC and EXTENDED labyrinths.
HIDDEN_BUDGET_FACTOR: Final = 10.0
#: TRAINING curation: a labyrinth's exact random-agent success within hard_max_steps must lie
#: within this factor of its stage's real success rate.
RANDOM_BAND_FACTOR: Final = 3.0
#: TRAINING curation: the stage mean of the bundles' exact random-agent success lies within this
#: relative distance of the real success rate (rule 2 of the module docstring).
STAGE_MEAN_TOLERANCE: Final = 0.1
#: TRAINING curation: the stage mean of the bundles' exact random-agent *good* rate (won within
#: ``soft_good_steps``) lies within this relative distance of the real good rate ...
GOOD_MEAN_TOLERANCE: Final = 0.2
#: ... on the stages whose real good rate is at least this (in %); below it the real table's
#: one decimal leaves the rate itself uncertain by a factor of 1.3 or more, and the stage mean
#: keeps within ``LOOSE_GOOD_TOLERANCE`` of it.
GOOD_CALIBRATED_FROM: Final = 1.0
LOOSE_GOOD_TOLERANCE: Final = 0.5
#: Most draws the pack builder tries for one bundle (duplicates and rule 2 redraw).
BUNDLE_DRAWS: Final = 256
#: Shortest wins accepted on TRAINING stages: the random-agent band, not the length, sets their
#: difficulty (the recorded real labyrinths of one board size span a factor of 3 in length).
TRAINING_OPTIMAL_STEPS: Final = (6, 99)
#: Bundles per stage directory (``0000.json`` ...).
TRAINING_BUNDLES: Final = 10
TUTORIAL_BUNDLES: Final = 3


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StageSpec(_Data):
    """One pack directory: where it lives, what it teaches and how its labyrinths are drawn."""

    path: str = Field(description="pack-relative directory, e.g. TRAINING/S0-keys/STAGE-01")
    group: str
    family: str
    stage: str
    description: str
    generator: GeneratorConfig
    bundles: int = Field(ge=1, le=10_000)
    soft_good_steps: int | None = Field(default=None, description="fixed budget (TRAINING)")
    hard_max_steps: int | None = Field(default=None, description="fixed budget (TRAINING)")
    budget_factor: float | None = Field(default=None, description="budget rule factor")
    real: CalibrationRow | None = None

    def budget(self, optimal_steps: int) -> tuple[int, int]:
        """``(soft_good_steps, hard_max_steps)`` of a labyrinth of this stage."""
        if self.soft_good_steps is not None and self.hard_max_steps is not None:
            return self.soft_good_steps, self.hard_max_steps
        assert self.budget_factor is not None, "every stage has fixed budgets or a factor"
        return budget_for(optimal_steps, self.budget_factor)


def budget_for(optimal_steps: int, factor: float) -> tuple[int, int]:
    """The budget rule: hard = 10 * ceil(factor * L / 10), soft = hard // 2."""
    hard = 10 * math.ceil(factor * optimal_steps / 10)
    return hard // 2, hard


# --- TRAINING --------------------------------------------------------------------------------


def _rivers(count: int, arrows: tuple[int, int] = (2, 3)) -> RiverSpec:
    """Rivers carved into the spanning tree: they add no opening beyond it (as in the recorded
    real maps, where a tenth of the 3x4 river labyrinths have no opening beyond the tree).

    Perfect-maze stages (no loops) carve their rivers on top of the tree instead: in a tree
    every river edge is the only way between its two sides, and no one walks up a river.
    """
    return RiverSpec(count=count, arrows=arrows, in_tree=True)


#: Generator settings per TRAINING stage (sizes and budgets come from REAL_CALIBRATION): the
#: lesson, then walls (``loops`` beyond a spanning tree) and mechanics. Walls follow the recorded
#: real maps where a family was recorded (3x3 keys: 3 loops; 3x3 rivers: a fully open board;
#: 3x4 rivers: 0-4; 4x4 keys: 2; 4x5 keys: a perfect maze), the rest was tuned with the exact
#: random-agent rates of ``planner.random_agent_success``.
_TRAINING: Final[dict[str, tuple[str, dict[str, object]]]] = {
    "S0-keys/STAGE-01": ("key, chest, exit; one wall", {"loops": 3}),
    "S0-keys/STAGE-02": ("key, chest, exit; two walls", {"loops": 2}),
    "S0-keys/STAGE-03": ("4x4 keys", {"loops": 2}),
    "S0-keys/STAGE-04": (
        "3x3 with an exit key",
        {"loops": 2, "exit_key": True},
    ),
    "S0-keys/STAGE-05": (
        "4x4 with an exit key",
        {"loops": 2, "exit_key": True},
    ),
    "S0-keys/STAGE-06": (
        "4x5 perfect maze with an exit key",
        {"loops": 0, "exit_key": True},
    ),
    "S1-rivers/STAGE-01": (
        "an open 3x3 with one short river",
        {"loops": 4, "rivers": _rivers(count=1, arrows=(2, 2))},
    ),
    "S1-rivers/STAGE-02": (
        "3x4, one river",
        {"loops": (0, 4), "rivers": _rivers(count=1)},
    ),
    "S1-rivers/STAGE-03": (
        "4x4, one river",
        {"loops": 2, "rivers": _rivers(count=1)},
    ),
    "S1-rivers/STAGE-04": (
        "4x4 perfect maze, two rivers and an exit key",
        {
            "loops": 0,
            "exit_key": True,
            "rivers": RiverSpec(count=2, arrows=(3, 4)),
        },
    ),
    "S1-rivers/STAGE-05": (
        "4x4 perfect maze, one long river and an exit key",
        {
            "loops": 0,
            "exit_key": True,
            "rivers": RiverSpec(count=1, arrows=(6, 8)),
        },
    ),
    "S1-rivers/STAGE-06": (
        "5x5 perfect maze, two rivers and an exit key",
        {
            "loops": 0,
            "exit_key": True,
            "rivers": RiverSpec(count=2, arrows=(2, 4)),
        },
    ),
    "S2-pits/STAGE-01": (
        "3x3, one pit pair",
        {"loops": 3, "pits": PitSpec(cycles=1)},
    ),
    "S2-pits/STAGE-02": (
        "4x4, one pit pair",
        {"loops": 2, "pits": PitSpec(cycles=1)},
    ),
    "S2-pits/STAGE-03": (
        "4x5, two pit pairs",
        {"loops": 1, "pits": PitSpec(cycles=2)},
    ),
    "S2-pits/STAGE-04": (
        "4x4, a pit pair and an exit key",
        {"loops": 1, "exit_key": True, "pits": PitSpec(cycles=1)},
    ),
    "S2-pits/STAGE-05": (
        "4x5, a three-pit cycle and an exit key",
        {
            "loops": 1,
            "exit_key": True,
            "pits": PitSpec(cycles=1, per_cycle=3),
        },
    ),
    "S2-pits/STAGE-06": (
        "5x5, two pit pairs and an exit key",
        {"loops": 1, "exit_key": True, "pits": PitSpec(cycles=2)},
    ),
    "S3-full/STAGE-01": (
        "3x4, a river and a pit pair",
        {
            "loops": (0, 4),
            "rivers": _rivers(count=1),
            "pits": PitSpec(cycles=1),
        },
    ),
    "S3-full/STAGE-02": (
        "4x4, a river and a pit pair",
        {
            "loops": 1,
            "rivers": _rivers(count=1),
            "pits": PitSpec(cycles=1),
        },
    ),
    "S3-full/STAGE-03": (
        "4x5, a river, a pit pair and an exit key",
        {
            "loops": 1,
            "exit_key": True,
            "rivers": _rivers(count=1),
            "pits": PitSpec(cycles=1),
        },
    ),
    "S3-full/STAGE-04": (
        "5x5, two rivers, a pit pair and an exit key",
        {
            "loops": 1,
            "exit_key": True,
            "rivers": _rivers(count=2),
            "pits": PitSpec(cycles=1),
        },
    ),
    "S3-full/STAGE-05": (
        "5x5, two rivers, two pit pairs and an exit key",
        {
            "loops": 1,
            "exit_key": True,
            "rivers": _rivers(count=2),
            "pits": PitSpec(cycles=2),
        },
    ),
    "S3-full/STAGE-06": (
        "4x6, two rivers, two pit pairs and an exit key",
        {
            "loops": 0,
            "exit_key": True,
            "rivers": RiverSpec(count=2),
            "pits": PitSpec(cycles=2),
        },
    ),
}


def _training_stage(row: CalibrationRow) -> StageSpec:
    description, settings = _TRAINING[f"{row.family}/{row.stage}"]
    target = row.success / 100
    band = RandomSuccessBand(
        horizon=row.hard_max_steps,
        low=target / RANDOM_BAND_FACTOR,
        high=min(1.0, target * RANDOM_BAND_FACTOR),
    )
    config = GeneratorConfig(
        rows=row.rows,
        cols=row.cols,
        optimal_steps=TRAINING_OPTIMAL_STEPS,
        random_success=band,
        **settings,
    )
    return StageSpec(
        path=f"TRAINING/{row.family}/{row.stage}",
        group="TRAINING",
        family=row.family,
        stage=row.stage,
        description=description,
        generator=config,
        bundles=TRAINING_BUNDLES,
        soft_good_steps=row.soft_good_steps,
        hard_max_steps=row.hard_max_steps,
        real=row,
    )


# --- TUTORIAL --------------------------------------------------------------------------------


def _tutorial_stage(stage: str, description: str, config: GeneratorConfig) -> StageSpec:
    return StageSpec(
        path=f"TUTORIAL/{stage}",
        group="TUTORIAL",
        family="TUTORIAL",
        stage=stage,
        description=description,
        generator=config,
        bundles=TUTORIAL_BUNDLES,
        budget_factor=TUTORIAL_BUDGET_FACTOR,
    )


# --- CLASSIC ---------------------------------------------------------------------------------

#: Board sizes per CLASSIC difficulty; MEDIUM and HARD labyrinths also have an exit key.
CLASSIC_SIZES: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "EASY": ((4, 4), (5, 5)),
    "MEDIUM": ((6, 6), (7, 7)),
    "HARD": ((8, 8), (10, 10)),
}


def _classic_config(difficulty: str, mechanic: str, rows: int, cols: int) -> GeneratorConfig:
    cells = rows * cols
    level = list(CLASSIC_SIZES).index(difficulty) + 1  # 1, 2, 3
    extra: dict[str, object] = {}
    if mechanic == "rivers":
        extra["rivers"] = _rivers(count=level, arrows=(2, 2 + level))
    elif mechanic == "pits":
        extra["pits"] = PitSpec(cycles=level, per_cycle=2 if level < 3 else 3)
    return GeneratorConfig(
        rows=rows,
        cols=cols,
        loops=max(1, cells // 8),
        exit_key=level > 1,
        start_exit_distance=(0, rows + cols),
        optimal_steps=(rows + cols, 10 * cells),
        **extra,
    )


def _classic_stages() -> list[StageSpec]:
    out: list[StageSpec] = []
    for difficulty, sizes in CLASSIC_SIZES.items():
        for mechanic in ("keys", "rivers", "pits"):
            for rows, cols in sizes:
                size = f"{rows}x{cols}"
                out.append(
                    StageSpec(
                        path=f"CLASSIC/{difficulty}/{mechanic}/{size}",
                        group="CLASSIC",
                        family=f"{difficulty}/{mechanic}",
                        stage=size,
                        description=f"{difficulty.lower()} {size} labyrinth with {mechanic}",
                        generator=_classic_config(difficulty, mechanic, rows, cols),
                        bundles=TRAINING_BUNDLES,
                        budget_factor=HIDDEN_BUDGET_FACTOR,
                    )
                )
    return out


# --- EXTENDED --------------------------------------------------------------------------------

#: Board sizes of the three stages of every extension.
EXTENDED_SIZES: Final = ((4, 4), (5, 5), (6, 6))


def _extended_config(item: str, level: int, rows: int, cols: int) -> GeneratorConfig:
    common: dict[str, object] = {
        "rows": rows,
        "cols": cols,
        "loops": max(1, rows * cols // 8),
        "start_exit_distance": (0, rows + cols),
        "exit_key": level == 3,
    }
    if item == "boat":
        rivers = RiverSpec(count=level, arrows=(2, 3))
        return GeneratorConfig(
            **common,
            boat=True,
            boat_barrier=True,
            rivers=rivers,
            requires=("boat",),
        )
    if item == "grenades":
        sealed = (("key",), ("chest",), ("exit_key",))[level - 1]
        return GeneratorConfig(
            **common,
            grenade_packs=1,
            sealed=sealed,
            requires=("grenades",),
            dead_states="grenades_only",  # one grenade: the wrong wall blown loses the game
        )
    return GeneratorConfig(
        **common,
        flashlight=True,
        rivers=_rivers(count=level - 1),
        pits=PitSpec(cycles=1 if level == 3 else 0),
    )


_EXTENDED_LESSONS: Final = {
    "boat": "the exit lies behind a river flowing away from it; only the boat holds against it",
    "grenades": "walls seal in the key, the chest or the exit key; a grenade blows a wall away",
    "flashlight": "the flashlight shows the tiles in a straight line (information only)",
}


def _extended_stages() -> list[StageSpec]:
    out: list[StageSpec] = []
    for item, lesson in _EXTENDED_LESSONS.items():
        for level, (rows, cols) in enumerate(EXTENDED_SIZES, start=1):
            stage = f"STAGE-{level:02d}-{rows}x{cols}"
            out.append(
                StageSpec(
                    path=f"EXTENDED/{item}/{stage}",
                    group="EXTENDED",
                    family=item,
                    stage=stage,
                    description=lesson,
                    generator=_extended_config(item, level, rows, cols),
                    bundles=TRAINING_BUNDLES,
                    budget_factor=HIDDEN_BUDGET_FACTOR,
                )
            )
    return out


#: Every pack stage, in build order.
STAGES: Final[tuple[StageSpec, ...]] = (
    *(_tutorial_stage(s, d, c) for s, (d, c) in TUTORIAL_LESSONS.items()),
    *(_training_stage(row) for row in REAL_CALIBRATION),
    *_classic_stages(),
    *_extended_stages(),
)


def stage_by_path(path: str) -> StageSpec:
    """The stage whose directory is ``path`` (e.g. ``TRAINING/S0-keys/STAGE-01``)."""
    for stage in STAGES:
        if stage.path == path.rstrip("/"):
            return stage
    raise KeyError(f"no pack stage {path!r}; stages: {', '.join(s.path for s in STAGES)}")


__all__ = [
    "BUNDLE_DRAWS",
    "CLASSIC_SIZES",
    "EXTENDED_SIZES",
    "GOOD_CALIBRATED_FROM",
    "GOOD_MEAN_TOLERANCE",
    "HIDDEN_BUDGET_FACTOR",
    "LOOSE_GOOD_TOLERANCE",
    "PACK_VERSION",
    "RANDOM_BAND_FACTOR",
    "REAL_CALIBRATION",
    "STAGES",
    "STAGE_MEAN_TOLERANCE",
    "TUTORIAL_BUDGET_FACTOR",
    "TUTORIAL_LESSONS",
    "CalibrationRow",
    "StageSpec",
    "budget_for",
    "stage_by_path",
]
