"""``maze-envs study list``, ``study show NAME`` and ``study report DIR``.

(``maze-envs study run`` plays a study with a model: :mod:`llm_policies.apps.study_run`.)

Exit status: 0 done; 2 an unknown study, an unreadable study file, or a folder that holds no
study run.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence

from maze_envs.studies.catalog import find, shipped
from maze_envs.studies.folder import NotAStudyRun, write_report


def list_main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs study list``: every shipped study with the question it answers."""
    parser = argparse.ArgumentParser(
        prog="maze-envs study list",
        description="The studies shipped with maze-envs, each with the question it answers.",
    )
    parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    for study, _ in shipped():
        arms = ", ".join(arm.name for arm in study.arms)
        sizes = [
            f"{w}x{h}" for w, h in sorted({size for s in study.setups.values() for size in s.sizes})
        ]
        print(f"{study.number}. {study.name}: {study.title}")
        print(textwrap.fill(study.question, 96, initial_indent="   ", subsequent_indent="   "))
        print(
            textwrap.fill(
                f"arms: {arms}; {len(study.seeds)} mazes per size and arm ({', '.join(sizes)})",
                96,
                initial_indent="   ",
                subsequent_indent="   ",
            )
        )
    print(
        "\nmaze-envs study show NAME prints a study's file (a starting point to copy); "
        "maze-envs study run NAME --model SPEC runs it (--dry-run: the games, calls and cost)."
    )
    return 0


def show_main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs study show NAME``: print a study's file (copy it to make your own)."""
    parser = argparse.ArgumentParser(
        prog="maze-envs study show",
        description="Print a study's file: TOML, readable, and a starting point for your own "
        "(maze-envs study show radio > my-radio.toml; maze-envs study run my-radio.toml ...).",
    )
    parser.add_argument("study", help="a study name (maze-envs study list) or a study file")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        _, text, _ = find(args.study)
    except ValueError as exc:
        print(f"maze-envs study show: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def report_main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs study report DIR``: (re)write the report of a study run."""
    parser = argparse.ArgumentParser(
        prog="maze-envs study report",
        description="(Re)write the report of a study run from its folder: report.md, "
        "report.html (with plots when matplotlib is installed) and report.json.",
    )
    parser.add_argument("folder", help="the folder of a study run (maze-envs study run --out)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        written = write_report(args.folder)
    except (NotAStudyRun, ValueError) as exc:
        print(f"maze-envs study report: {exc}", file=sys.stderr)
        return 2
    for path in written.paths.values():
        print(f"wrote {path}")
    for path in written.plots:
        print(f"wrote {path}")
    if written.note:
        print(f"note: {written.note}")
    return 0
