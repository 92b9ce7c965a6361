"""The labyrinth data model's validation and the versioned JSON bundle format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maze_envs.agimaze.bundle import (
    BundleError,
    dump_bundle,
    load_bundle,
    parse_bundle,
    save_bundle,
)
from maze_envs.agimaze.types import (
    BUNDLE_FORMAT_VERSION,
    Bundle,
    BundleMeta,
    ExitGap,
    GrenadePack,
    Labyrinth,
    PitCycle,
    River,
)


def labyrinth_data(**changes: Any) -> dict[str, Any]:
    """A valid 2x3 labyrinth as JSON data (every edge of both rows open), with ``changes``."""
    data: dict[str, Any] = {
        "rows": 2,
        "cols": 3,
        "open_edges": [[6, 14, 12], [3, 11, 9]],
        "exit": {"cell": [0, 2], "side": "up"},
        "start": [0, 0],
        "key": [1, 0],
        "chest": [1, 2],
    }
    data.update(changes)
    return data


def full_bundle() -> Bundle:
    lab = Labyrinth(
        rows=2,
        cols=3,
        open_edges=[[6, 14, 12], [3, 11, 9]],
        exit=ExitGap(cell=(0, 2), side="up"),
        start=(0, 0),
        key=(1, 0),
        chest=(1, 2),
        rivers=[River(cells=[(0, 1)], mouth=(1, 1))],
        grenade_packs=[GrenadePack(cell=(0, 2), count=2)],
        max_steps=70,
    )
    meta = BundleMeta(path="TRAINING/S1-rivers/STAGE-01/0000.json", seed=7, optimal_steps=9)
    return Bundle(labyrinth=lab, meta=meta)


def test_pit_cycles_survive_the_json_round_trip() -> None:
    lab = Labyrinth.model_validate(labyrinth_data(pits=[{"cells": [[0, 1], [1, 1]]}]))
    assert parse_bundle(dump_bundle(Bundle(labyrinth=lab))).labyrinth.pits == [
        PitCycle(cells=[(0, 1), (1, 1)])
    ]


def test_dump_is_canonical_and_round_trips(tmp_path: Path) -> None:
    bundle = full_bundle()
    text = dump_bundle(bundle)
    assert text.endswith("}\n") and text == dump_bundle(parse_bundle(text))
    data = json.loads(text)
    assert data["format_version"] == BUNDLE_FORMAT_VERSION
    assert list(data) == sorted(data)
    assert data["labyrinth"]["exit"] == {"cell": [0, 2], "side": "up"}
    file = tmp_path / "deep" / "0000.json"
    save_bundle(bundle, file)
    assert file.read_text() == text
    assert load_bundle(file) == bundle


def test_hand_made_bundles_have_no_pack_version() -> None:
    data = json.loads(dump_bundle(full_bundle()))
    assert data["meta"]["pack_version"] == "" and data["meta"]["generator_version"] == ""
    del data["meta"]["pack_version"]  # a bundle written before the field existed
    assert parse_bundle(json.dumps(data)).meta == full_bundle().meta


def test_actions_follow_the_items() -> None:
    lab = full_bundle().labyrinth
    assert lab.actions == [
        "up",
        "down",
        "left",
        "right",
        "bomb_up",
        "bomb_down",
        "bomb_left",
        "bomb_right",
    ]
    with_light = Labyrinth.model_validate(labyrinth_data(flashlight=[0, 1]))
    assert with_light.actions[4:] == ["look_up", "look_down", "look_left", "look_right"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"key": [1, 2]}, "chest and key share cell"),
        ({"start": [2, 0]}, "start .* outside the 2x3 board"),
        ({"chest": [5, 5]}, "chest at .* outside"),
        ({"open_edges": [[6, 14, 12], [3, 11, 8]]}, "open on one side only"),
        ({"open_edges": [[7, 14, 12], [3, 11, 9]]}, "opens up through the frame"),
        ({"open_edges": [[6, 14], [3, 11]]}, "must be 2 rows of 3"),
        ({"open_edges": [[16, 14, 12], [3, 11, 9]]}, "not a 4-bit mask"),
        ({"exit": {"cell": [1, 1], "side": "up"}}, "not on the up side"),
        ({"exit": {"cell": [0, 2], "side": "north"}}, "exit.side"),
        ({"rivers": [{"cells": [[0, 0]], "mouth": [1, 1]}]}, "does not neighbour"),
        ({"pits": [{"cells": [[1, 1], [0, 1]]}]}, "reading order"),
        ({"grenade_packs": [{"cell": [0, 1], "count": 0}]}, "greater than or equal to 1"),
        ({"rows": 0}, "rows"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_labyrinths_get_clear_errors(changes: dict[str, Any], message: str) -> None:
    text = json.dumps({"format_version": 1, "labyrinth": labyrinth_data(**changes)})
    with pytest.raises(BundleError, match=message):
        parse_bundle(text, source="bad.json")


def test_river_behind_a_wall_is_rejected() -> None:
    closed = [[4, 6, 12], [3, 11, 9]]  # (0, 0) and (0, 1) are separated
    data = labyrinth_data(open_edges=closed, rivers=[{"cells": [[0, 0]], "mouth": [0, 1]}])
    with pytest.raises(BundleError, match="a wall separates"):
        parse_bundle(json.dumps({"labyrinth": data}))


def test_loader_errors_name_the_file_and_the_problem(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no such bundle file"):
        load_bundle(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(BundleError, match=r"broken\.json: not valid JSON"):
        load_bundle(broken)
    with pytest.raises(BundleError, match="a bundle is a JSON object, got list"):
        parse_bundle("[]")
    future = json.dumps({"format_version": 99, "labyrinth": labyrinth_data()})
    with pytest.raises(BundleError, match="unsupported bundle format_version 99"):
        parse_bundle(future)
    with pytest.raises(BundleError, match="labyrinth: Field required"):
        parse_bundle("{}")
