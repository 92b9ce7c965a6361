"""One game's rows in a journal file: where its hash chains stand (to record more turns of it),
and its stored rows (:class:`StoredGame`), read from one file and written verbatim into another
(how the games of shard journals and of Ray workers reach the run's journal)."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maze_envs.journal.blobs import BLOB_REF, references
from maze_envs.journal.body import BodyUnpacker
from maze_envs.journal.format import (
    GENESIS_HASH,
    INSERT_BLOB,
    INSERT_TURN,
    SCHEMA_VERSION,
    SELECT_HEADER,
    TURNS,
    JournalError,
    decode_json,
    of_game,
    select_turns,
)


def read_tail(
    db: sqlite3.Connection, path: Path, game_id: int, start: bytes = GENESIS_HASH
) -> tuple[int, bytes, bytes]:
    """(last stored turn, its state hash, its record hash) of an unfinished game; (-1, ``start``,
    ``start``) when it has no turn (a game's chains keep the length of its stored hashes);
    :class:`JournalError` for a missing or finished game."""
    row = db.execute("SELECT outcome FROM games WHERE id = ?", (game_id,)).fetchone()
    if row is None:
        raise JournalError(f"no game {game_id} in {path}")
    if row[0] is not None:
        raise JournalError(f"game {game_id} is finished; no more turns can be recorded")
    last = db.execute(
        f"SELECT turn, state_hash, record_hash FROM turns WHERE {of_game(SCHEMA_VERSION)} "
        "ORDER BY game_turn DESC LIMIT 1",
        (game_id,),
    ).fetchone()
    if last is None:
        return (-1, start, start)
    return (int(last[0]), bytes(last[1]), bytes(last[2]))


@dataclass(frozen=True)
class StoredGame:
    """One game's rows exactly as a journal file stores them: what travels from the journal a
    game was recorded in to the run's journal (a shard on this machine, or a worker's own
    journal on another node, the rows then sent through Ray's object store).

    ``header`` holds the ``games`` columns after ``id``, ``turns`` every ``turns`` row (the
    columns of :data:`~.format.TURN_COLUMNS` of ``schema_version``, in turn order: the turn,
    then its stored columns), ``blobs`` the ``(key, content)`` rows its decisions reference.
    Nothing is decoded: only a file of the same version takes the rows. ``source`` and
    ``game_id`` say where they came from (for messages).
    """

    schema_version: int
    header: tuple[Any, ...]  # env_id, config, generator, seed, library_version, created, ...
    turns: list[tuple[Any, ...]]
    blobs: list[tuple[str, Any]]
    game_id: int = 0  # its id in the file it was read from
    source: str = ""  # that file


def _referenced_blobs(rows: list[tuple[Any, ...]], version: int) -> dict[str, None]:
    """The blob keys the decisions of a game's rows reference (in order, once each)."""
    keys: dict[str, None] = {}
    if version >= 5:
        unpacker = BodyUnpacker()
        for row in rows:
            try:
                decisions = unpacker.unpack(row[1])[1][3]
            except ValueError:
                break  # an unreadable row is copied verbatim all the same; verify reports it
            if BLOB_REF.encode() in decisions:
                with contextlib.suppress(ValueError):
                    keys.update(dict.fromkeys(references(decode_json(decisions))))
        return keys
    for row in rows:
        if BLOB_REF in row[4]:
            with contextlib.suppress(ValueError):
                keys.update(dict.fromkeys(references(decode_json(row[4]))))
    return keys


def stored_game(db: sqlite3.Connection, path: Path, game_id: int, version: int) -> StoredGame:
    """Game ``game_id`` of ``db`` as stored (:class:`JournalError` when there is none)."""
    header = db.execute(SELECT_HEADER, (game_id,)).fetchone()
    if header is None:
        raise JournalError(f"no game {game_id} in {path}")
    rows = db.execute(select_turns(version), (game_id,)).fetchall()
    blobs = []
    for key in _referenced_blobs(rows, version):
        content = db.execute("SELECT content FROM blobs WHERE key = ?", (key,)).fetchone()
        if content is not None:
            blobs.append((key, content[0]))
    return StoredGame(version, tuple(header[1:]), rows, blobs, game_id, str(path))


def insert_game(db: sqlite3.Connection, path: Path, game: StoredGame) -> int:
    """Add ``game`` to ``db`` (a file of this library's version) in one transaction (whole or
    absent); its new id."""
    if game.schema_version != SCHEMA_VERSION:
        raise JournalError(f"only games of schema version {SCHEMA_VERSION} can be added")
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
                INSERT_TURN, [(new_id * TURNS + turn, *rest) for turn, *rest in game.turns]
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


__all__ = ["StoredGame", "insert_game", "read_tail", "stored_game"]
