"""How our packs are built, beside the real engine's recorded labyrinths.

Reads the real engine's recordings (``../shared/agimaze/traces/`` or ``--traces``), one labyrinth
per distinct real labyrinth (:func:`maze_envs.agimaze.packs.structure.recorded_labyrinths`), and
prints per recorded family, beside the TRAINING stage of the same board and mechanics, the
figures of :mod:`maze_envs.agimaze.packs.structure`: extra openings beyond a spanning tree (mean
and distribution), river arrows, the share of the cells on rivers, the mouth pockets (mean size
relative to the board's non-arrow cells; share of rivers whose pocket is cut off from the rest),
and the share of labyrinths with a reachable dead state. ``--pack-version`` compares another
shipped pack version.

Usage: ``python benchmarks/agimaze_structure.py [--traces DIR] [--pack-version V]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from maze_envs.agimaze.packs import (
    DEFAULT_PACK_VERSION,
    list_bundles,
    resolve_pack_path,
    version_root,
)
from maze_envs.agimaze.packs.structure import recorded_labyrinths, structure, summarize
from maze_envs.agimaze.planner import dead_states
from maze_envs.agimaze.types import Labyrinth

#: Recorded family -> the TRAINING stages of the same board and mechanics.
COUNTERPARTS: dict[str, tuple[str, ...]] = {
    "3x3-keys": ("S0-keys/STAGE-01", "S0-keys/STAGE-02"),
    "3x3-rivers": ("S1-rivers/STAGE-01",),
    "3x4-rivers": ("S1-rivers/STAGE-02", "S3-full/STAGE-01"),
    "4x4-keys": ("S0-keys/STAGE-03",),
    "4x5-keys": ("S0-keys/STAGE-06",),
}


def _figures(labs: list[Labyrinth]) -> dict[str, Any]:
    out = summarize([structure(lab) for lab in labs])
    out["dead"] = sum(not dead_states(lab).live.all() for lab in labs) / len(labs)
    return out


def _cells(name: str, f: dict[str, Any]) -> list[str]:
    def num(value: float | None, digits: int = 2) -> str:
        return "–" if value is None else f"{value:.{digits}f}"

    counts = ", ".join(f"{k}: {100 * v:.0f}%" for k, v in f["extra_openings_counts"].items())
    closed = "–" if f["closed_pockets"] is None else f"{100 * f['closed_pockets']:.0f}%"
    return [
        name,
        str(f["labyrinths"]),
        f"{num(f['extra_openings'])} ({counts})",
        num(f["river_arrows"]),
        num(f["river_share"]),
        num(f["pocket_share"]),
        closed,
        f"{100 * f['dead']:.0f}%",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    default = Path(__file__).resolve().parent.parent.parent / "shared" / "agimaze" / "traces"
    parser.add_argument("--traces", type=Path, default=default, help="the recordings' folder")
    parser.add_argument("--pack-version", default=DEFAULT_PACK_VERSION)
    args = parser.parse_args(argv)
    if not args.traces.is_dir():
        print(f"no recordings at {args.traces} (give --traces)", file=sys.stderr)
        return 2
    real = recorded_labyrinths(args.traces)
    root = version_root(args.pack_version)
    head = [
        "labyrinths",
        "n",
        "extra openings: mean (distribution)",
        "river arrows",
        "cells on rivers",
        "mouth pocket / free cells",
        "pockets cut off",
        "with a dead state",
    ]
    print(f"Recorded real labyrinths beside {args.pack_version}'s TRAINING stages\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for family, stages in COUNTERPARTS.items():
        print("| " + " | ".join(_cells(f"real {family}", _figures(real[family]))) + " |")
        for stage in stages:
            names = list_bundles(f"TRAINING/{stage}/", root=root)
            labs = [resolve_pack_path(n, root=root)[1].labyrinth for n in names]
            print("| " + " | ".join(_cells(f"ours {stage}", _figures(labs))) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
