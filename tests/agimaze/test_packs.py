"""The shipped packs: layout, validity, solvability, budgets, extensions, exact regeneration."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from maze_envs.agimaze.bundle import load_bundle
from maze_envs.agimaze.generator import (
    GENERATOR_VERSION,
    LabyrinthGenerator,
    RequiredItem,
    plan_events,
    without_item,
)
from maze_envs.agimaze.packs import (
    DEFAULT_PACK_VERSION,
    PACK_ROOT,
    PACK_VERSIONS,
    PackPathError,
    list_bundles,
    version_root,
)
from maze_envs.agimaze.packs.build import (
    PackBuildError,
    build_stage,
    main,
    on_target_line,
    read_manifest,
)
from maze_envs.agimaze.packs.catalog import (
    BUNDLE_DRAWS,
    GOOD_CALIBRATED_FROM,
    GOOD_MEAN_TOLERANCE,
    LOOSE_GOOD_TOLERANCE,
    PACK_VERSION,
    RANDOM_BAND_FACTOR,
    REAL_CALIBRATION,
    STAGE_MEAN_TOLERANCE,
    STAGES,
    TUTORIAL_LESSONS,
    StageSpec,
    budget_for,
    stage_by_path,
)
from maze_envs.agimaze.planner import dead_states, optimal_length, random_agent_success, solve
from maze_envs.agimaze.types import Bundle

#: Stages rebuilt in memory and compared byte for byte (one or more per group, all fast).
REGENERATED = (
    "TUTORIAL/STAGE-04",
    "TUTORIAL/STAGE-07",
    "TRAINING/S0-keys/STAGE-01",
    "TRAINING/S2-pits/STAGE-02",
    "TRAINING/S2-pits/STAGE-04",  # bundles redrawn to keep the means on the real rates
    "TRAINING/S3-full/STAGE-01",
    "CLASSIC/EASY/pits/4x4",
    "EXTENDED/boat/STAGE-01-4x4",
    "EXTENDED/grenades/STAGE-01-4x4",
)


def expected_paths() -> list[str]:
    return sorted(f"{s.path}/{i:04d}.json" for s in STAGES for i in range(s.bundles))


@cache
def shipped(name: str) -> Bundle:
    return load_bundle(PACK_ROOT / name)


def test_every_documented_path_is_shipped() -> None:
    assert list_bundles() == expected_paths()
    for k in range(1, 8):
        assert f"TUTORIAL/STAGE-{k:02d}/0000.json" in list_bundles("TUTORIAL/")
    for family in ("S0-keys", "S1-rivers", "S2-pits", "S3-full"):
        for k in range(1, 7):
            names = list_bundles(f"TRAINING/{family}/STAGE-{k:02d}/")
            assert names == [f"TRAINING/{family}/STAGE-{k:02d}/{i:04d}.json" for i in range(10)]
    # the example paths of the real API documentation
    for example in (
        "TRAINING/S0-keys/STAGE-01/0005.json",
        "CLASSIC/EASY/pits/4x4/0000.json",
        "EXTENDED/boat/STAGE-01-4x4/0000.json",
    ):
        assert (PACK_ROOT / example).is_file()
    for item in ("boat", "grenades", "flashlight"):
        assert list_bundles(f"EXTENDED/{item}/STAGE-01-4x4/")


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.path)
def test_bundles_are_valid_solvable_and_budgeted(stage: StageSpec) -> None:
    for index in range(stage.bundles):
        name = f"{stage.path}/{index:04d}.json"
        bundle = shipped(name)
        lab, meta = bundle.labyrinth, bundle.meta
        assert (lab.rows, lab.cols) == (stage.generator.rows, stage.generator.cols)
        assert lab.open_map == (stage.group == "TUTORIAL")
        assert meta.path == name and meta.group == stage.group
        assert meta.pack_version == PACK_VERSION
        assert meta.generator_version == GENERATOR_VERSION
        assert meta.generator == "maze_envs.agimaze.generator.LabyrinthGenerator"
        optimal = optimal_length(lab)
        assert optimal is not None, f"{name} cannot be won"
        assert meta.optimal_steps == optimal
        assert lab.max_steps == meta.hard_max_steps
        assert lab.max_steps is not None and lab.max_steps >= optimal
        assert meta.soft_good_steps == lab.max_steps // 2
        if stage.real is None:
            assert stage.budget_factor is not None
            assert (meta.soft_good_steps, meta.hard_max_steps) == budget_for(
                optimal, stage.budget_factor
            )


def test_training_budgets_and_sizes_follow_the_real_table() -> None:
    assert len(REAL_CALIBRATION) == 24
    for row in REAL_CALIBRATION:
        for name in list_bundles(f"TRAINING/{row.family}/{row.stage}/"):
            bundle = shipped(name)
            assert (bundle.labyrinth.rows, bundle.labyrinth.cols) == (row.rows, row.cols)
            assert bundle.labyrinth.max_steps == row.hard_max_steps
            assert bundle.meta.soft_good_steps == row.soft_good_steps


def test_training_stages_match_the_real_random_agent_table() -> None:
    """Each bundle lies in the per-bundle band; each stage's means of success *and* good on the
    real table's (tight), so late (= success - good) follows.

    The mean of the exact win probabilities is what a random agent measures over equally many
    episodes per bundle, so this is the calibration goal without Monte Carlo noise. The goal:
    success within 1.5x of the real rate on every stage, good and late within 1.5x wherever the
    real figure is at least 1 %.
    """
    for row in REAL_CALIBRATION:
        target, target_good = row.success / 100, row.good / 100
        good_tolerance = (
            GOOD_MEAN_TOLERANCE if row.good >= GOOD_CALIBRATED_FROM else LOOSE_GOOD_TOLERANCE
        )
        names = list_bundles(f"TRAINING/{row.family}/{row.stage}/")
        total = total_good = 0.0
        for count, name in enumerate(names, start=1):
            lab = shipped(name).labyrinth
            good, success = random_agent_success(lab, [row.soft_good_steps, row.hard_max_steps])
            assert target / RANDOM_BAND_FACTOR <= success <= target * RANDOM_BAND_FACTOR, name
            total += success
            total_good += good
            assert on_target_line(total, count, len(names), target), name
            assert on_target_line(total_good, count, len(names), target_good, good_tolerance)
        mean, mean_good = total / len(names), total_good / len(names)
        assert abs(mean / target - 1) <= STAGE_MEAN_TOLERANCE, (name, mean, target)
        assert 1 / 1.15 <= mean / target <= 1.15  # far inside the goal factor of 1.5
        late, target_late = mean - mean_good, target - target_good
        assert 1 / 1.5 <= late / target_late <= 1.5, (row.family, row.stage)
        if row.good >= 1.0:
            assert 1 / 1.3 <= mean_good / target_good <= 1.3, (row.family, row.stage)


def test_no_reachable_dead_state_in_the_default_packs() -> None:
    """Every state reachable from the start can still win, in every shipped bundle (exhaustive,
    with the engine's transition); in grenade bundles only a grenade throw can enter a state
    that cannot, i.e. a grenade wasted on the wrong wall, which the pack docs say."""
    grenade_bundles = 0
    for name in list_bundles():
        lab = shipped(name).labyrinth
        analysis = dead_states(lab)
        assert analysis.winnable, name
        if lab.grenade_packs:
            grenade_bundles += 1
            assert all(e.action.startswith("bomb_") for e in analysis.entries()), name
        else:
            assert bool(analysis.live.all()), f"{name} has a reachable dead state"
    assert grenade_bundles == 30


def test_the_earlier_pack_version_ships_unchanged_and_loads_by_name() -> None:
    """agimaze-packs-2 stays byte for byte as released (its manifest) and loads by name; it is
    the one with the reachable dead states of the river traps."""
    old = PACK_VERSIONS["agimaze-packs-2"]
    assert version_root("agimaze-packs-2") == old and version_root(PACK_VERSION) == PACK_ROOT
    manifest = read_manifest(old)
    assert sorted(manifest) == sorted(list_bundles(root=old)) and len(manifest) == 531
    for name, digest in manifest.items():
        assert hashlib.sha256((old / name).read_bytes()).hexdigest() == digest, name
        if name.startswith("TRAINING/S3-full/STAGE-01/"):
            assert load_bundle(old / name).meta.pack_version == "agimaze-packs-2"
    traps = {
        name
        for name in list_bundles("TRAINING/", root=old)
        if not dead_states(load_bundle(old / name).labyrinth).live.all()
    }
    assert traps == {
        "TRAINING/S3-full/STAGE-01/0004.json",
        "TRAINING/S3-full/STAGE-01/0009.json",
        "TRAINING/S3-full/STAGE-05/0005.json",
        "TRAINING/S3-full/STAGE-06/0000.json",
    }
    with pytest.raises(PackPathError, match="shipped versions: agimaze-packs-3, agimaze-packs-2"):
        version_root("agimaze-packs-9")


def test_the_default_pack_version_is_the_catalogs() -> None:
    assert DEFAULT_PACK_VERSION == PACK_VERSION == "agimaze-packs-3"
    assert next(iter(PACK_VERSIONS)) == DEFAULT_PACK_VERSION


def test_on_target_line_bounds_the_running_total() -> None:
    # 10 bundles, target 0.1: the running total may stray 0.1 from count * target
    assert on_target_line(0.1, 1, 10, 0.1)
    assert on_target_line(0.199, 1, 10, 0.1) and not on_target_line(0.201, 1, 10, 0.1)
    assert on_target_line(0.401, 5, 10, 0.1) and not on_target_line(0.399, 5, 10, 0.1)
    assert on_target_line(1.09, 10, 10, 0.1) and not on_target_line(1.11, 10, 10, 0.1)


def test_a_stage_mean_that_cannot_reach_the_real_rate_is_refused() -> None:
    stage = stage_by_path("TRAINING/S0-keys/STAGE-01")
    assert stage.real is not None
    # the generator still draws ~24 % labyrinths, but the stage claims a real rate of 1 %
    off = stage.model_copy(update={"real": stage.real.model_copy(update={"success": 1.0})})
    with pytest.raises(PackBuildError, match=f"none of {BUNDLE_DRAWS} draws .* real rate"):
        build_stage(off)


@pytest.mark.parametrize("item", ["boat", "grenades"])
def test_extension_labyrinths_need_their_item(item: RequiredItem) -> None:
    names = list_bundles(f"EXTENDED/{item}/")
    assert len(names) == 30
    for name in names:
        lab = shipped(name).labyrinth
        assert optimal_length(lab) is not None
        assert optimal_length(without_item(lab, item)) is None, f"{name} is won without {item}"


def test_tutorial_lessons_happen_on_the_shortest_plan() -> None:
    for stage, (_, config) in TUTORIAL_LESSONS.items():
        for name in list_bundles(f"TUTORIAL/{stage}/"):
            lab = shipped(name).labyrinth
            plan = solve(lab)
            assert plan is not None and lab.open_map
            assert set(config.plan_events) <= plan_events(lab, plan), name
    for name in list_bundles("TUTORIAL/STAGE-03/"):  # starts on the exit cell
        lab = shipped(name).labyrinth
        assert lab.start == lab.exit.cell
    for name in list_bundles("TUTORIAL/STAGE-06/"):
        assert shipped(name).labyrinth.exit_key is not None


def test_flashlight_labyrinths_offer_the_look_actions() -> None:
    for name in list_bundles("EXTENDED/flashlight/"):
        lab = shipped(name).labyrinth
        assert lab.flashlight is not None
        assert lab.actions[4:] == ["look_up", "look_down", "look_left", "look_right"]


def test_bundles_of_a_stage_are_distinct() -> None:
    for stage in STAGES:
        labs = {
            shipped(f"{stage.path}/{i:04d}.json").labyrinth.model_dump_json()
            for i in range(stage.bundles)
        }
        assert len(labs) == stage.bundles, stage.path


@pytest.mark.parametrize("path", REGENERATED)
def test_regeneration_is_byte_identical(path: str) -> None:
    for name, text in build_stage(stage_by_path(path)):
        assert (PACK_ROOT / name).read_text(encoding="utf-8") == text, name


@pytest.mark.parametrize("path", ["TRAINING/S0-keys/STAGE-01", "TRAINING/S2-pits/STAGE-04"])
def test_meta_seed_draws_the_bundle_back(path: str) -> None:
    stage = stage_by_path(path)
    generator = LabyrinthGenerator(stage.generator)
    for index in range(stage.bundles):
        bundle = shipped(f"{path}/{index:04d}.json")
        drawn = generator(np.random.default_rng(bundle.meta.seed))
        assert drawn.model_copy(update={"max_steps": stage.hard_max_steps}) == bundle.labyrinth


def test_manifest_covers_every_shipped_file() -> None:
    manifest = read_manifest()
    assert sorted(manifest) == expected_paths()
    for name, digest in manifest.items():
        assert hashlib.sha256((PACK_ROOT / name).read_bytes()).hexdigest() == digest, name


def test_build_command_writes_checks_and_prunes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only = ["--only", "TUTORIAL/STAGE-01"]
    assert main(["--out", str(tmp_path), *only]) == 0
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    assert written == [f"TUTORIAL/STAGE-01/{i:04d}.json" for i in range(3)]
    for name in written:
        assert (tmp_path / name).read_bytes() == (PACK_ROOT / name).read_bytes()
    assert sorted(read_manifest(tmp_path)) == written
    assert main(["--check", *only]) == 0  # the shipped files
    assert main(["--check", "--out", str(tmp_path), *only]) == 0
    tampered = tmp_path / written[0]
    tampered.write_text(tampered.read_text().replace('"rows": 3', '"rows": 3 '))
    stale = tmp_path / "TUTORIAL/STAGE-01/0099.json"
    stale.write_text("{}")
    capsys.readouterr()
    assert main(["--check", "--out", str(tmp_path), *only]) == 1
    err = capsys.readouterr().err
    assert (
        f"differs: {written[0]}" in err and "not in the catalog: TUTORIAL/STAGE-01/0099.json" in err
    )
    assert main(["--out", str(tmp_path), *only]) == 0
    assert not stale.exists()
    assert tampered.read_bytes() == (PACK_ROOT / written[0]).read_bytes()
    assert main(["--only", "NOWHERE"]) == 2
    # a second stage joins the manifest; the first keeps its entries
    assert main(["--out", str(tmp_path), "--only", "TUTORIAL/STAGE-02"]) == 0
    manifest = read_manifest(tmp_path)
    assert len(manifest) == 6
    assert manifest == {n: d for n, d in read_manifest().items() if n in manifest}
