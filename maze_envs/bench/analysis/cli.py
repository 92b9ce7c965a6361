"""``maze-envs analyze JOURNAL [--csv FILE] [--game ID ...] [--workers N]``.

Prints the behavioural metrics of every game (Maze Escape per agent with a team row per game; AGI
Maze per game; games of any other environment recorded by ``wrappers.recording``: steps, total
reward and how it ended, per agent) and writes them to a CSV file. The journal is opened
read-only. Exit status: 0 analysed, 2 not a usable journal or an unknown game id.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from maze_envs.bench.analysis.analyze import analyze_journal
from maze_envs.bench.analysis.table import render, write_csv
from maze_envs.journal import JournalError


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="maze-envs analyze",
        description="Behavioural metrics of journaled games, per agent and per game: wall-move "
        "rate, reversals (and those right after a move that raised the distance reading), "
        "STAYs, turns on the exit after reaching it, passages copied from a colocated "
        "teammate's notebook, radio messages with coordinates and whether they name the frame, "
        "coverage and revisits, first exit visit and turns from it to team success, STAYs "
        "while searching, self-tracked positions and how many are right, untried-exit choices, "
        "notebook compactions, landmark-relative radio, frame-offset notes; for games "
        "of other environments (wrappers.recording): steps, total reward, terminated/truncated "
        "and distinct observations per agent.",
    )
    parser.add_argument("journal", help="path of the SQLite journal (opened read-only)")
    parser.add_argument("--csv", metavar="FILE", help="also write every row to this CSV file")
    parser.add_argument(
        "--game", type=int, action="append", metavar="ID", help="only game ID (repeatable)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes to share the games (default: one per core, up to 4, for > 50 games)",
    )
    parser.add_argument("--quiet", action="store_true", help="print no table (with --csv)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    try:
        analysis = analyze_journal(args.journal, args.game, workers=args.workers)
    except JournalError as exc:
        print(f"maze-envs analyze: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(render(analysis))
    if args.csv:
        count = write_csv(analysis, args.csv)
        print(f"wrote {count} rows to {args.csv}")
    return 0
