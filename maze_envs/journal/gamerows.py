"""One game's rows in a journal file: where its hash chains stand (to record more turns of it),
and its stored rows (:class:`StoredGame`), read from one file and written verbatim into another
(how the games of shard journals and of Ray workers reach the run's journal)."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maze_envs.journal.blobs import references
from maze_envs.journal.format import (
    GENESIS_HASH,
    INSERT_BLOB,
    SELECT_HEADER,
    TURN_COLUMNS,
    JournalError,
    decode_json,
)


def read_tail(db: sqlite3.Connection, path: Path, game_id: int) -> tuple[int, bytes, bytes]:
    """(last stored turn, its state hash, its record hash) of an unfinished game; (-1, genesis,
    genesis) when it has no turn; :class:`JournalError` for a missing or finished game."""
    row = db.execute("SELECT outcome FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        raise JournalError(f"no game {game_id} in {path}")
    if row[0] is not None:
        raise JournalError(f"game {game_id} is finished; no more turns can be recorded")
    last = db.execute(
        "SELECT turn, state_hash, record_hash FROM turns WHERE game_id = ? "
        "ORDER BY turn DESC LIMIT 1",
        (game_id,),
    ).fetchone()
    if last is None:
        return (-1, GENESIS_HASH, GENESIS_HASH)
    return (int(last[0]), bytes.fromhex(last[1]), bytes.fromhex(last[2]))


@dataclass(frozen=True)
class StoredGame:
    """One game's rows exactly as a journal file stores them: what travels from the journal a
    game was recorded in to the run's journal (a shard on this machine, or a worker's own
    journal on another node, the rows then sent through Ray's object store).

    ``header`` holds the ``games`` columns after ``id``, ``turns`` every ``turns`` row (the
    columns of :data:`~.format.TURN_COLUMNS`, in turn order), ``blobs`` the ``(key, content)``
    rows its decisions reference. Nothing is decoded: the rows are those of a file of
    ``schema_version``, and only a file of the same version takes them. ``source`` and
    ``game_id`` say where they came from (for messages).
    """

    schema_version: int
    header: tuple[Any, ...]
    turns: list[tuple[Any, ...]]
    blobs: list[tuple[str, Any]]
    game_id: int = 0  # its id in the file it was read from
    source: str = ""  # that file


def stored_game(
    source: sqlite3.Connection, source_path: Path, game_id: int, schema_version: int
) -> StoredGame:
    """Game ``game_id``'s rows in ``source`` (:class:`JournalError` when it has no such game)."""
    header = source.execute(SELECT_HEADER, (game_id,)).fetchone()
    if header is None:
        raise JournalError(f"no game {game_id} in {source_path}")
    rows = source.execute(
        f"SELECT {TURN_COLUMNS} FROM turns WHERE game_id = ? ORDER BY turn", (game_id,)
    ).fetchall()
    keys: dict[str, None] = {}
    for row in rows:
        if '"$blob"' in row[4]:
            # an unreadable row is copied verbatim all the same; verify reports it
            with contextlib.suppress(ValueError):
                keys.update(dict.fromkeys(references(decode_json(row[4]))))
    blobs = []
    for key in keys:
        found = source.execute("SELECT content FROM blobs WHERE key = ?", (key,))
        content = found.fetchone()
        if content is not None:
            blobs.append((key, content[0]))
    return StoredGame(schema_version, tuple(header[1:]), rows, blobs, game_id, str(source_path))


def insert_game(db: sqlite3.Connection, path: Path, game: StoredGame) -> int:
    """Store ``game`` in ``db`` as a new game, in one transaction (whole or absent); its id."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            cursor = db.execute(
                "INSERT INTO games (env_id, config, generator, seed, library_version, "
                "created, outcome, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                game.header,
            )
            new_id = cursor.lastrowid
            assert new_id is not None
            db.executemany(
                f"INSERT INTO turns (game_id, {TURN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(new_id, *row) for row in game.turns],
            )
            db.executemany(INSERT_BLOB, game.blobs)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise JournalError(
            f"cannot copy game {game.game_id} of {game.source} into {path}: {exc}"
        ) from exc
    return new_id
