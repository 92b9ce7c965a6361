"""One game's rows in a journal file: where its hash chains stand (to record more turns of it),
and copying it verbatim into another file (how shard journals are merged)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

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


def copy_game_rows(
    source: sqlite3.Connection,
    source_path: Path,
    db: sqlite3.Connection,
    path: Path,
    game_id: int,
) -> tuple[int, list[str]]:
    """Copy game ``game_id``'s header, rows and referenced blobs from ``source`` into ``db`` in
    one transaction (whole or absent); return the new game id and the blob keys copied."""
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
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            cursor = db.execute(
                "INSERT INTO games (env_id, config, generator, seed, library_version, "
                "created, outcome, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                header[1:],
            )
            new_id = cursor.lastrowid
            assert new_id is not None
            db.executemany(
                f"INSERT INTO turns (game_id, {TURN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(new_id, *row) for row in rows],
            )
            db.executemany(INSERT_BLOB, blobs)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise JournalError(
            f"cannot copy game {game_id} of {source_path} into {path}: {exc}"
        ) from exc
    return new_id, [key for key, _ in blobs]
