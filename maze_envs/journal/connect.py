"""Opening a journal file: for writing (creating it if asked) or strictly read-only.

Read-only opening never writes anything, neither the file nor beside it, so it works on a
read-only file and in a read-only directory:

* when no ``-wal`` file lies beside the journal, no connection is writing it (SQLite keeps the
  WAL file while any connection has the database open), so everything is in the main file and it
  is opened ``immutable`` (no locks, no ``-shm``/``-wal`` files created);
* when a ``-wal`` file exists (a writer is running, or one was killed before its last commit was
  copied into the file), it is opened ``mode=ro``, which reads the committed turns in the WAL
  too. SQLite can do so even when the directory is read-only, as long as the ``-shm`` file
  exists beside it; without one there, the WAL cannot be read and opening fails with a clear
  :class:`JournalError` (reading the main file alone would silently miss committed turns).

An empty file is not a journal: read-only opening, and writable opening with ``create=False``,
refuse it and leave it untouched.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from maze_envs.journal.format import (
    APPLICATION_ID,
    READABLE_VERSIONS,
    SCHEMA,
    SCHEMA_VERSION,
    JournalError,
)

# Each commit appends the pages it changed to the WAL. With group commit (a batch of 64 rows of
# about 4 KB each) 4 KiB pages cost the least CPU per row (fewer overflow pages and WAL frames than
# 2 KiB pages; measured about 15% less per journaled turn), while a commit of one turn still
# writes few bytes. Files keep the page size they were created with.
PAGE_SIZE: Final = 4096
#: Seconds a journal waits for another connection's write lock before a write fails.
BUSY_TIMEOUT: Final = 30.0
_TABLES: Final = frozenset({"games", "turns", "blobs"})


def _existing_file(path: Path) -> None:
    if not path.exists():
        raise JournalError(f"no journal at {path}")
    if not path.is_file():
        raise JournalError(f"{path} is not a file, so not a journal")
    if path.stat().st_size == 0:
        raise JournalError(f"{path} is an empty file, not a maze-envs journal")


def _check(db: sqlite3.Connection, path: Path, *, writing: bool) -> int:
    """The schema version of journal ``db``; :class:`JournalError` unless this library reads
    it (or, ``writing``, writes it)."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if app_id != APPLICATION_ID:
        if app_id == 0 and not tables:
            raise JournalError(f"{path} is an empty SQLite database, not a maze-envs journal")
        raise JournalError(
            f"{path} is a SQLite database but not a maze-envs journal "
            f"(application_id {app_id:#x}, expected {APPLICATION_ID:#x})"
        )
    if version not in READABLE_VERSIONS or (writing and version != SCHEMA_VERSION):
        written_by = ""
        with contextlib.suppress(sqlite3.Error):
            row = db.execute("SELECT library_version FROM games LIMIT 1").fetchone()
            if row is not None:
                written_by = f", written by maze-envs {row[0]}"
        if version in READABLE_VERSIONS:
            raise JournalError(
                f"{path} uses journal schema version {version}{written_by}; this library writes "
                f"version {SCHEMA_VERSION} only, so it cannot add to it: open it with "
                "Journal(path, readonly=True) to read it (maze-envs verify, view and analyze do), "
                "and write new games to a new journal"
            )
        raise JournalError(
            f"{path} uses journal schema version {version}{written_by}; this library reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS[:-1]))} and "
            f"{READABLE_VERSIONS[-1]} and writes version "
            f"{SCHEMA_VERSION} (version 3 added game meta, per-decision records and blobs); read "
            "or verify it with the maze-envs release that wrote it"
        )
    if not tables >= _TABLES:
        raise JournalError(f"{path} lacks the {', '.join(sorted(_TABLES))} tables of a journal")
    return int(version)


def _unreadable(path: Path, exc: sqlite3.Error) -> JournalError:
    return JournalError(f"{path} is not a readable maze-envs journal (SQLite says: {exc})")


@contextlib.contextmanager
def _closed_on_failure(
    db: sqlite3.Connection, path: Path, explain: Callable[[sqlite3.Error], str | None]
) -> Iterator[None]:
    """Close ``db`` when its set-up fails; a SQLite error becomes a :class:`JournalError` saying
    ``explain(exc)`` (when it says something) or that the file is not a readable journal."""
    try:
        yield
    except sqlite3.Error as exc:
        db.close()
        message = explain(exc)
        raise (JournalError(message) if message else _unreadable(path, exc)) from None
    except JournalError:
        db.close()
        raise


def open_readonly(path: Path, timeout: float = BUSY_TIMEOUT) -> tuple[sqlite3.Connection, int]:
    """A connection that only reads ``path`` (see the module docstring), and its version."""
    _existing_file(path)
    wal = path.with_name(path.name + "-wal")
    mode = "mode=ro" if wal.exists() else "immutable=1"
    try:
        db = sqlite3.connect(
            f"{path.resolve().as_uri()}?{mode}", uri=True, isolation_level=None, timeout=timeout
        )
    except sqlite3.Error as exc:
        raise JournalError(f"cannot open journal {path} read-only: {exc}") from None
    shm = path.with_name(path.name + "-shm")

    def explain(exc: sqlite3.Error) -> str | None:
        if mode == "mode=ro" and not shm.exists():
            return (
                f"cannot read journal {path} read-only: its {wal.name} file (turns committed "
                f"but not yet copied into the file) can only be read with a {shm.name} file "
                f"beside it, which cannot be created here ({exc}); copy {path.name} and "
                f"{wal.name} to a writable folder and read them there"
            )
        return None

    with _closed_on_failure(db, path, explain):
        version = _check(db, path, writing=False)
    return db, version


def _refuse_unwritable(path: Path) -> None:
    """Raise :class:`JournalError` unless ``path`` and its folder (the WAL files) are writable.

    SQLite would open a file it may not write read-only without a word and fail at the first
    turn instead.
    """
    hint = "to read it, open it with Journal(path, readonly=True)"
    try:
        os.close(os.open(path, os.O_RDWR))  # opening for writing writes nothing
    except OSError as exc:
        raise JournalError(f"cannot write to journal {path} ({exc.strerror}); {hint}") from None
    folder = path.parent
    effective = os.access in os.supports_effective_ids
    if not os.access(folder, os.W_OK | os.X_OK, effective_ids=effective):
        raise JournalError(
            f"cannot write to journal {path}: its folder {folder} cannot be written, and the "
            f"journal's WAL files live beside it; {hint}"
        )


def _create_schema(db: sqlite3.Connection) -> None:
    db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before the first write fixes it
    db.execute("PRAGMA journal_mode=WAL")  # only possible outside a transaction
    db.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have created the journal since the caller looked.
        if db.execute("SELECT 1 FROM sqlite_master").fetchone() is None:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def open_writable(
    path: Path, *, create: bool, durable: bool, timeout: float = BUSY_TIMEOUT
) -> sqlite3.Connection:
    """A connection that appends to ``path``, creating the journal when ``create`` allows.

    The file must be of the version this library writes (:data:`~.format.SCHEMA_VERSION`).
    ``timeout``: seconds a write waits for another connection's write lock before it fails.
    """
    if not create:
        _existing_file(path)
    if path.exists():
        _refuse_unwritable(path)
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    except sqlite3.Error as exc:
        raise JournalError(f"cannot open journal {path}: {exc}") from None

    def explain(exc: sqlite3.Error) -> str | None:
        if "readonly" in str(exc).lower():
            return (
                f"cannot write to journal {path} ({exc}); to read it, open it with "
                "Journal(path, readonly=True)"
            )
        return None

    with _closed_on_failure(db, path, explain):
        fresh = (
            db.execute("PRAGMA application_id").fetchone()[0] == 0
            and db.execute("SELECT 1 FROM sqlite_master").fetchone() is None
        )
        if fresh and create:
            _create_schema(db)
        _check(db, path, writing=True)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'NORMAL' if durable else 'OFF'}")
        db.execute("PRAGMA wal_autocheckpoint=0")  # the journal checkpoints between two turns
    return db


def integrity_problems(db: sqlite3.Connection) -> str:
    """What SQLite's ``quick_check`` finds wrong with the file, in a line ("" when nothing)."""
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        return f"the file cannot be read through ({exc})"
    found = [
        line
        for row in rows
        for line in str(row[0]).splitlines()
        if not line.startswith("*** in database")  # a heading, not a problem
    ]
    if found == ["ok"]:
        return ""
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return "; ".join(found[:3]) + more
