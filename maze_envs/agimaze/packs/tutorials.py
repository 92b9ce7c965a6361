"""The TUTORIAL stages: one lesson each, on open maps (data for the catalog)."""

from __future__ import annotations

from typing import Final

from maze_envs.agimaze.generator import GeneratorConfig, PitSpec, RiverSpec

#: The lesson of each tutorial stage and its generator settings (open maps).
TUTORIAL_LESSONS: Final[dict[str, tuple[str, GeneratorConfig]]] = {
    "STAGE-01": (
        "moving: walls and the monolith stop you; take the key, open the chest, leave by the exit",
        GeneratorConfig(rows=3, cols=3, loops=1, optimal_steps=(6, 10), open_map=True),
    ),
    "STAGE-02": (
        "a chest stays locked without its key: the chest lies on the way to the key",
        GeneratorConfig(rows=3, cols=4, loops=2, plan_events=("chest_locked",), open_map=True),
    ),
    "STAGE-03": (
        "the exit refuses you without the treasure: you start on the exit cell, the items are far",
        GeneratorConfig(
            rows=3,
            cols=4,
            loops=2,
            start_exit_distance=(0, 0),
            item_exit_distance=3,
            open_map=True,
        ),
    ),
    "STAGE-04": (
        "rivers: a current carries you two cells downstream, one near the mouth",
        GeneratorConfig(
            rows=3,
            cols=4,
            loops=2,
            rivers=RiverSpec(count=1, arrows=(3, 3), in_tree=True),
            plan_events=("river_carried",),
            open_map=True,
        ),
    ),
    "STAGE-05": (
        "pits: falling into a pit brings you out of the next pit of its cycle",
        GeneratorConfig(
            rows=3,
            cols=4,
            loops=2,
            pits=PitSpec(cycles=1),
            plan_events=("pit_teleport",),
            open_map=True,
        ),
    ),
    "STAGE-06": (
        "the exit key: when a labyrinth has one, the exit stays locked without it",
        GeneratorConfig(rows=4, cols=4, loops=3, exit_key=True, open_map=True),
    ),
    "STAGE-07": (
        "everything together: a river, a pit pair and an exit key",
        GeneratorConfig(
            rows=4,
            cols=4,
            loops=3,
            exit_key=True,
            rivers=RiverSpec(count=1, in_tree=True),
            pits=PitSpec(cycles=1),
            plan_events=("river_carried", "pit_teleport"),
            open_map=True,
        ),
    ),
}


__all__ = ["TUTORIAL_LESSONS"]
