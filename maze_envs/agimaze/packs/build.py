"""``maze-envs agimaze build-packs``: regenerate the shipped AGI Maze packs, deterministically.

Every bundle ``<stage>/<NNNN>.json`` of :data:`~.catalog.STAGES` is drawn by the stage's
:class:`~maze_envs.agimaze.generator.LabyrinthGenerator` from its own seed, a hash of the pack
version, the stage path and the bundle number, so any bundle can be rebuilt alone and
``LabyrinthGenerator(stage.generator)(numpy.random.default_rng(meta.seed))`` gives its labyrinth
back. A draw that repeats an earlier bundle of the same stage is replaced by the draw of the
next seed in the same hash sequence (``redraw`` 1, 2, ...). TRAINING stages also keep their
*mean* random-agent success and good rate on the real table's: a draw whose exact success (won
within ``hard_max_steps``) or good rate (won within ``soft_good_steps``) would take the stage's
running total off its target line by more than the tolerance is replaced the same way (the rule
is :func:`on_target_line`, its constants live in :mod:`~.catalog`). Each bundle is checked
before it is written: the exact planner wins it, its dead states are what the stage's generator
allows (:func:`~maze_envs.agimaze.generator.dead_states_allowed`, over every reachable state),
``max_steps`` (= ``hard_max_steps``) is at least the optimal length, and the optimal length is
stored in ``meta.optimal_steps``.
``meta.pack_version`` holds :data:`~.catalog.PACK_VERSION` and ``meta.generator_version`` the
generator's :data:`~maze_envs.agimaze.generator.GENERATOR_VERSION`.

``MANIFEST.txt`` beside the packs lists the SHA-256 of every bundle file (a build with
``--only`` replaces the entries of the stages it rebuilt); ``--check`` rebuilds in memory and
compares with the files on disk instead of writing.

Usage::

    maze-envs agimaze build-packs                 # rewrite the shipped packs in place
    maze-envs agimaze build-packs --out /tmp/p    # somewhere else
    maze-envs agimaze build-packs --check --only TRAINING/S0-keys
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import numpy as np

from maze_envs.agimaze.bundle import dump_bundle
from maze_envs.agimaze.generator import (
    GENERATOR_VERSION,
    LabyrinthGenerator,
    dead_states_allowed,
)
from maze_envs.agimaze.packs import PACK_ROOT
from maze_envs.agimaze.packs.catalog import (
    BUNDLE_DRAWS,
    GOOD_CALIBRATED_FROM,
    GOOD_MEAN_TOLERANCE,
    LOOSE_GOOD_TOLERANCE,
    PACK_VERSION,
    STAGE_MEAN_TOLERANCE,
    STAGES,
    StageSpec,
)
from maze_envs.agimaze.planner import dead_states, random_agent_success, win_length
from maze_envs.agimaze.types import Bundle, BundleMeta, Labyrinth

#: Name of the hash manifest written beside the group folders.
MANIFEST_NAME: Final = "MANIFEST.txt"
_GENERATOR_NAME: Final = "maze_envs.agimaze.generator.LabyrinthGenerator"


class PackBuildError(RuntimeError):
    """A generated bundle failed its checks (a generator bug: never shipped)."""


def bundle_seed(stage_path: str, index: int, redraw: int = 0) -> int:
    """The 32-bit seed of bundle ``index`` of a stage (``redraw`` > 0 after a duplicate)."""
    text = f"{PACK_VERSION}/{stage_path}/{index:04d}/{redraw}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def on_target_line(
    total: float,
    count: int,
    stage_bundles: int,
    target: float,
    tolerance: float = STAGE_MEAN_TOLERANCE,
) -> bool:
    """Whether the running total of ``count`` bundles' exact random-agent rates stays on target.

    The rule of the TRAINING stages: after every bundle ``i`` (1-based) of a stage of ``n``
    bundles, ``|rate_1 + ... + rate_i - i * target| <= tolerance * n * target``. At ``i = n``
    this puts the stage mean within ``tolerance`` (relative) of the target; earlier bundles keep
    the spread of the generator's per-bundle band. It holds for the success rate
    (``STAGE_MEAN_TOLERANCE``) and the good rate (``GOOD_MEAN_TOLERANCE``).
    """
    return abs(total - count * target) <= tolerance * stage_bundles * target


def build_stage(stage: StageSpec) -> list[tuple[str, str]]:
    """The bundles of ``stage`` as ``(pack-relative path, canonical JSON text)`` pairs."""
    generator = LabyrinthGenerator(stage.generator)
    real = stage.real  # TRAINING stages: the real calibration row the stage mean must match
    seen: set[str] = set()
    total_good = total = 0.0
    out: list[tuple[str, str]] = []
    for index in range(stage.bundles):
        name = f"{stage.path}/{index:04d}.json"
        for redraw in range(BUNDLE_DRAWS):
            seed = bundle_seed(stage.path, index, redraw)
            lab = generator(np.random.default_rng(seed))
            fingerprint = lab.model_dump_json()
            if fingerprint in seen:
                continue
            if real is None:
                break
            good, success = random_agent_success(lab, [real.soft_good_steps, real.hard_max_steps])
            count = index + 1
            good_tolerance = (
                GOOD_MEAN_TOLERANCE if real.good >= GOOD_CALIBRATED_FROM else LOOSE_GOOD_TOLERANCE
            )
            if on_target_line(
                total + success, count, stage.bundles, real.success / 100
            ) and on_target_line(
                total_good + good, count, stage.bundles, real.good / 100, good_tolerance
            ):
                total += success
                total_good += good
                break
        else:
            raise PackBuildError(
                f"{name}: none of {BUNDLE_DRAWS} draws is new"
                + ("" if real is None else " and keeps the stage mean on the real rates")
            )
        seen.add(fingerprint)
        out.append((name, dump_bundle(_bundle(stage, name, seed, lab))))
    return out


def _bundle(stage: StageSpec, name: str, seed: int, lab: Labyrinth) -> Bundle:
    analysis = dead_states(lab)
    optimal = win_length(analysis.graph)
    if optimal is None:
        raise PackBuildError(f"{name}: the planner cannot win the generated labyrinth")
    if not dead_states_allowed(analysis, stage.generator.dead_states):
        raise PackBuildError(
            f"{name}: a reachable state cannot win, which the stage's generator forbids "
            f"(dead_states={stage.generator.dead_states!r})"
        )
    soft, hard = stage.budget(optimal)
    if hard < optimal:
        raise PackBuildError(f"{name}: max_steps {hard} is below the optimal length {optimal}")
    labyrinth = Labyrinth.model_validate({**lab.model_dump(), "max_steps": hard})
    meta = BundleMeta(
        path=name,
        group=stage.group,
        family=stage.family,
        stage=stage.stage,
        seed=seed,
        generator=_GENERATOR_NAME,
        generator_version=GENERATOR_VERSION,
        pack_version=PACK_VERSION,
        optimal_steps=optimal,
        soft_good_steps=soft,
        hard_max_steps=hard,
        description=stage.description,
    )
    return Bundle(labyrinth=labyrinth, meta=meta)


def select_stages(prefixes: Iterable[str] = ()) -> list[StageSpec]:
    """Stages whose path starts with one of ``prefixes`` (all stages when there are none)."""
    wanted = [p.rstrip("/") for p in prefixes]
    if not wanted:
        return list(STAGES)
    return [s for s in STAGES if any(s.path == p or s.path.startswith(p + "/") for p in wanted)]


def read_manifest(root: Path = PACK_ROOT) -> dict[str, str]:
    """The manifest beside the packs in ``root``: path -> sha256 hex digest."""
    out: dict[str, str] = {}
    for line in (root / MANIFEST_NAME).read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ", 1)
        out[name] = digest
    return out


def _existing_bundles(root: Path, stages: Sequence[StageSpec]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for stage in stages:
        directory = root / stage.path
        if directory.is_dir():
            for file in directory.glob("*.json"):
                out[f"{stage.path}/{file.name}"] = file
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``maze-envs agimaze build-packs``."""
    parser = argparse.ArgumentParser(
        prog="maze-envs agimaze build-packs",
        description="Regenerate the AGI Maze packs deterministically (same bytes every time).",
    )
    parser.add_argument("--out", type=Path, default=PACK_ROOT, help="pack root to write into")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PREFIX",
        help="build only stages under this path (repeatable), e.g. TRAINING/S0-keys",
    )
    parser.add_argument(
        "--check", action="store_true", help="compare with the files on disk; write nothing"
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    stages = select_stages(args.only)
    if not stages:
        known = ", ".join(sorted({s.path.split("/")[0] for s in STAGES}))
        print(f"no pack stage matches {args.only}; groups: {known}", file=sys.stderr)
        return 2
    root: Path = args.out
    built: dict[str, str] = {}
    for stage in stages:
        built.update(build_stage(stage))
    existing = _existing_bundles(root, stages)
    if args.check:
        return _check(root, built, existing)
    for name, text in built.items():
        file = root / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    stale = sorted(set(existing) - set(built))
    for name in stale:
        existing[name].unlink()
    _update_manifest(root, stages, built)
    print(
        f"wrote {len(built)} bundles of {len(stages)} stages to {root} ({len(stale)} stale removed)"
    )
    return 0


def _update_manifest(root: Path, stages: Sequence[StageSpec], built: dict[str, str]) -> None:
    """Rewrite the manifest: entries of the rebuilt stages replaced, the others kept."""
    digests = read_manifest(root) if (root / MANIFEST_NAME).is_file() else {}
    rebuilt = tuple(stage.path + "/" for stage in stages)
    lines = {name: digest for name, digest in digests.items() if not name.startswith(rebuilt)}
    lines.update((name, hashlib.sha256(text.encode()).hexdigest()) for name, text in built.items())
    body = "".join(f"{digest}  {name}\n" for name, digest in sorted(lines.items()))
    (root / MANIFEST_NAME).write_text(body, encoding="utf-8")


def _check(root: Path, built: dict[str, str], existing: dict[str, Path]) -> int:
    problems = [f"missing: {n}" for n in sorted(set(built) - set(existing))]
    problems += [f"not in the catalog: {n}" for n in sorted(set(existing) - set(built))]
    for name in sorted(set(built) & set(existing)):
        if existing[name].read_text(encoding="utf-8") != built[name]:
            problems.append(f"differs: {name}")
    for line in problems:
        print(line, file=sys.stderr)
    print(f"checked {len(built)} bundles under {root}: {len(problems)} problem(s)")
    return 1 if problems else 0


__all__ = [
    "MANIFEST_NAME",
    "PackBuildError",
    "build_stage",
    "bundle_seed",
    "main",
    "on_target_line",
    "read_manifest",
    "select_stages",
]
