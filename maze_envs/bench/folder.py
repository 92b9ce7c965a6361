"""A run's output folder: which files are a run's, whether a folder holds a run, and what may
delete one (see :mod:`maze_envs.bench.runner`)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Protocol

import orjson

from maze_envs.bench.rowstore import RowStore

JOURNAL_NAME = "games.sqlite"
#: The bytes of each hash a run's journals store (16: half the hash bytes of a turn;
#: docs/journal.md, "Hash sizes").
JOURNAL_HASH_SIZE = 16
ROWS_NAME = "rows.jsonl"
SHARDS_NAME = "shards"
PAGES_NAME = "pages"
STAMP_NAME = "results.stamp.json"
#: The mark of a folder whose run the main job made (it may start that run over).
MAIN_JOB_MARK = "main-job.txt"
#: Files a run writes (deleted by ``fresh``; nothing else in the folder is touched).
RUN_FILES = (
    JOURNAL_NAME,
    JOURNAL_NAME + "-wal",
    JOURNAL_NAME + "-shm",
    ROWS_NAME,
    "results.csv",
    "results.json",
    "summary.md",
    "index.html",
    "experiment.json",
    "escape_by_size.png",
    "agimaze_rhae70.png",
    "cost_per_success.png",
    STAMP_NAME,
    MAIN_JOB_MARK,
)


class RunError(ValueError):
    """A run that cannot start: a bad output folder, an unknown policy, a bad option."""


class FolderOptions(Protocol):
    """What :func:`prepare_folder` reads of the run's options."""

    resume: bool
    fresh: bool
    main_job: bool


def held_run(out: Path) -> str | None:
    """What run ``out`` holds (its name and games), or ``None`` when it holds none: no row in
    ``rows.jsonl`` and no game in ``games.sqlite`` (files a run left before its first game are
    not a run). An unreadable journal is a run: it is never deleted unasked."""
    rows = RowStore(out / ROWS_NAME).load() if (out / ROWS_NAME).is_file() else {}
    games = 0
    if (out / JOURNAL_NAME).is_file():
        from maze_envs.journal import Journal, JournalError

        try:
            with Journal(out / JOURNAL_NAME, readonly=True) as journal:
                games = len(journal.game_ids())
        except (JournalError, OSError) as exc:
            return f"a journal that cannot be read ({exc})"
    if not rows and not games:
        return None
    try:
        name = orjson.loads((out / "experiment.json").read_bytes()).get("name")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        name = None
    what = f"experiment {name!r}" if name else "a run"
    return f"{what}: {games} game(s) in {JOURNAL_NAME}, {len(rows)} row(s) in {ROWS_NAME}"


def remove_run(out: Path) -> list[str]:
    """Delete the run's files in ``out`` (:data:`RUN_FILES`, ``pages/``, ``shards/``; nothing
    else); the names of what was there."""
    removed = [name for name in RUN_FILES if (out / name).exists()]
    for name in removed:
        (out / name).unlink()
    for folder in (PAGES_NAME, SHARDS_NAME):
        if (out / folder).is_dir():
            count = sum(1 for _ in (out / folder).iterdir())
            shutil.rmtree(out / folder, ignore_errors=True)
            removed.append(f"{folder}/ ({count} file(s))")
    return removed


def prepare_folder(out: Path, options: FolderOptions) -> None:
    """Make ``out`` ready for a run: refuse a folder holding a run, or delete it where allowed
    (``fresh``; the main job's own earlier run), saying what it deletes."""
    if out.exists() and not out.is_dir():
        raise RunError(f"cannot use {out} as the output folder: it is a file")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"cannot use {out} as the output folder: {exc}") from None
    held = held_run(out)
    main_mark = (out / MAIN_JOB_MARK).is_file()
    if held is not None and not options.resume:
        if options.fresh:
            why = "--fresh"
        elif options.main_job and main_mark:
            why = "the main job starts over its earlier run"
        elif options.main_job:
            raise RunError(
                f"{out} holds a run that is not the main job's ({held}); the main job starts "
                f"over only its own earlier runs. Choose another folder with --out DIR, or "
                f"delete that run with --fresh"
            )
        else:
            raise RunError(
                f"{out} already holds a run; pass --resume to continue it, --fresh to delete "
                f"it and start over, or choose another folder with --out DIR (it holds {held})"
            )
        removed = remove_run(out)
        print(
            f"maze-envs bench: {why}: deleting the run in {out} ({held}): {', '.join(removed)}",
            file=sys.stderr,
        )
    elif options.fresh:
        remove_run(out)  # what a run left before its first game, if anything
    if options.main_job:
        (out / MAIN_JOB_MARK).write_text(
            "This folder holds a run of the main job (maze-envs bench with no setup options).\n"
            "Running the main job again starts it over; any other run here is never deleted\n"
            "without --fresh.\n",
            encoding="utf-8",
        )
    elif main_mark:
        (out / MAIN_JOB_MARK).unlink()  # resumed by another experiment: no longer the main job's
    # shards of an interrupted run: their games never counted, so they are simply dropped
    shutil.rmtree(out / SHARDS_NAME, ignore_errors=True)
