"""Structure figures of labyrinths, and the real recorded maps they are compared with."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.agimaze.packs.structure import (
    merge_records,
    recorded_labyrinths,
    structure,
    summarize,
)
from maze_envs.agimaze.planner import dead_states
from maze_envs.agimaze.types import ExitGap, Labyrinth, River
from maze_envs.grid import EAST, NORTH, SOUTH, WEST


def test_structure_of_a_river_in_a_pocket() -> None:
    # 2x3, a tree plus one loop; a river (0,1) -> mouth (0,2) whose pocket is the mouth alone
    lab = Labyrinth(
        rows=2,
        cols=3,
        open_edges=[[EAST | SOUTH, EAST | WEST, WEST], [NORTH | EAST, WEST | EAST, WEST]],
        exit=ExitGap(cell=(1, 0), side="left"),
        start=(1, 0),
        rivers=[River(cells=[(0, 1)], mouth=(0, 2))],
    )
    s = structure(lab)
    assert s.extra_openings == 0  # 5 open edges on 6 cells: a tree
    assert s.river_arrows == (1,) and s.mouth_pockets == (1,)
    assert s.closed_pockets == 1 and s.river_share == 2 / 6
    summary = summarize([s, structure(lab.model_copy(update={"rivers": []}))])
    assert summary["labyrinths"] == 2 and summary["rivers"] == 1
    assert summary["closed_pockets"] == 1.0 and summary["extra_openings_counts"] == {0: 1.0}


def test_records_of_one_labyrinth_fill_in_what_the_player_hides() -> None:
    # the same labyrinth twice: S hides the key in the first record, the floor in the second
    maps = [
        ("+---+---+\n| S   T  \n+---+---+", False),
        ("+---+---+\n| K   S  \n+---+---+", False),
    ]
    (seen,) = merge_records(maps)
    assert seen.glyphs == {(0, 0): "K", (0, 1): "T"}
    assert seen.players == {(0, 0), (0, 1)}
    # a record of a different labyrinth (other walls) forms its own group
    assert len(merge_records([*maps, ("+---+---+\n| S | T  \n+---+---+", True)])) == 2


@cache
def _recorded(traces: Path) -> dict[str, list[Labyrinth]]:
    return recorded_labyrinths(traces)


@pytest.mark.shared
def test_the_recorded_river_maps_have_no_dead_state(shared_dir: Path) -> None:
    """The fact behind the packs' fairness rule: the real engine's 3x4 river labyrinths
    (1,224 distinct ones in the recordings) never let a player ride into a trap."""
    labs = _recorded(shared_dir / "agimaze" / "traces")
    rivers = labs["3x4-rivers"]
    assert len(rivers) > 1200
    assert all(dead_states(lab).live.all() for lab in rivers)
    figures = summarize([structure(lab) for lab in rivers])
    assert figures["river_arrows_counts"].keys() == {2, 3}
    assert set(figures["extra_openings_counts"]) == {0, 1, 2, 3, 4}


@pytest.mark.shared
def test_the_packs_structure_follows_the_recorded_maps(shared_dir: Path) -> None:
    """Where a real family was recorded, our stage of that board and mechanic is built alike
    (the comparison table is in docs/agimaze-packs.md, from benchmarks/agimaze_structure.py)."""
    labs = _recorded(shared_dir / "agimaze" / "traces")
    real = {family: summarize([structure(lab) for lab in found]) for family, found in labs.items()}

    def ours(stage: str) -> dict[str, Any]:
        names = list_bundles(f"TRAINING/{stage}/")
        return summarize([structure(resolve_pack_path(n)[1].labyrinth) for n in names])

    assert real["4x5-keys"]["extra_openings"] == ours("S0-keys/STAGE-06")["extra_openings"] == 0
    assert real["4x4-keys"]["extra_openings"] == ours("S0-keys/STAGE-03")["extra_openings"] == 2
    assert real["3x3-rivers"]["extra_openings"] == ours("S1-rivers/STAGE-01")["extra_openings"]
    three_by_four = ours("S1-rivers/STAGE-02")
    for figure, slack in (("extra_openings", 0.5), ("river_arrows", 0.3), ("river_share", 0.03)):
        assert abs(three_by_four[figure] - real["3x4-rivers"][figure]) <= slack, figure
