"""Changing a journal file behind the journal's back, as a damaged disk or a forger would.

The tests that check what reading and verification find (a changed row, a missing turn, text
that cannot be read, a forgery whose hashes were made again) change stored turns with these
functions, never with SQL on the columns of ``turns``: the stored form of a turn depends on the
schema version (version 5 compresses each turn in its game's stream, :mod:`maze_envs.journal.
body`), so a new format changes this module only.

* :func:`stored_turns`: what each turn of a game stores, as text per part (``actions``,
  ``observations``, ``events``, ``decisions``: for versions 4 and 5 observations and events
  are what changed, :mod:`maze_envs.journal.delta`), with its hashes;
* :func:`edit_turn`: change the stored text of one part of one turn; the record hashes are kept
  (so the chain finds the edit at that turn) unless ``rehash``, which makes the chain again from
  that turn (a consistent forgery that only a replay finds);
* :func:`set_hashes`: change a turn's stored state or record hash;
* :func:`delete_turns`: lose stored turns;
* :func:`update_game`: change a column of a game's header row;
* :func:`run_sql`: anything else (the blobs table, the file's markers).

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs.journal import Journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> with Journal(path) as journal:
    ...     game = journal.start_game(env_id="toy", config={}, seed=1, library_version="0")
    ...     for turn in range(3):
    ...         _ = journal.record_turn(game, turn, observations={"A": turn}, actions={"A": 1},
    ...                                 events={}, state_digest=b"x")
    >>> [turn.parts["actions"] for turn in stored_turns(path, game)]
    ['{"A":1}', '{"A":1}', '{"A":1}']
    >>> edit_turn(path, game, 1, "actions", lambda text: text.replace("1", "2"))
    >>> from maze_envs.journal import verify_game
    >>> with Journal(path, readonly=True) as journal:
    ...     verify_game(journal, game).describe()
    'game 1: FAILED at turn 1 (edited): the row was changed after it was recorded'
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maze_envs.journal.body import PARTS, pack_bodies, unpack_bodies
from maze_envs.journal.format import GENESIS_HASH, chain_body_hash, chain_record_hash

#: The parts of a stored turn, in the order of the columns of versions 3 and 4.
LEGACY_PARTS = ("observations", "actions", "events", "decisions")


@dataclass
class StoredTurn:
    """One stored turn: its parts' stored text, its hashes (bytes in version 5, hex text
    before), and (version 5) whether it starts its game's stream."""

    turn: int
    parts: dict[str, str]
    state_hash: Any
    record_hash: Any
    starts: bool = False


def _connect(path: Path) -> tuple[sqlite3.Connection, int]:
    db = sqlite3.connect(path)
    return db, int(db.execute("PRAGMA user_version").fetchone()[0])


def _read(db: sqlite3.Connection, version: int, game_id: int) -> list[StoredTurn]:
    if version >= 5:
        rows = db.execute(
            "SELECT turn, body, state_hash, record_hash FROM turns WHERE game_id = ? ORDER BY turn",
            (game_id,),
        ).fetchall()
        read = unpack_bodies(row[1] for row in rows)
        return [
            StoredTurn(
                row[0],
                {name: part.decode() for name, part in zip(PARTS, parts, strict=True)},
                row[2],
                row[3],
                starts,
            )
            for row, (starts, parts) in zip(rows, read, strict=True)
        ]
    rows = db.execute(
        f"SELECT turn, {', '.join(LEGACY_PARTS)}, state_hash, record_hash FROM turns "
        "WHERE game_id = ? ORDER BY turn",
        (game_id,),
    ).fetchall()
    return [
        StoredTurn(row[0], dict(zip(LEGACY_PARTS, row[1:5], strict=True)), *row[5:]) for row in rows
    ]


def stored_turns(path: Path, game_id: int) -> list[StoredTurn]:
    """What each stored turn of a game holds (read without the journal, so without checks)."""
    db, version = _connect(path)
    try:
        return _read(db, version, game_id)
    finally:
        db.close()


def _write(
    db: sqlite3.Connection, version: int, game_id: int, turns: list[StoredTurn], first: int
) -> None:
    """Store ``turns`` again from index ``first`` on (bodies packed again in version 5)."""
    if version >= 5:
        bodies = pack_bodies((t.starts, [t.parts[name].encode() for name in PARTS]) for t in turns)
        db.executemany(
            "UPDATE turns SET body = ?, state_hash = ?, record_hash = ? "
            "WHERE game_id = ? AND turn = ?",
            [
                (bodies[i], t.state_hash, t.record_hash, game_id, t.turn)
                for i, t in enumerate(turns)
                if i >= first
            ],
        )
        return
    db.executemany(
        f"UPDATE turns SET {', '.join(f'{name} = ?' for name in LEGACY_PARTS)}, "
        "state_hash = ?, record_hash = ? WHERE game_id = ? AND turn = ?",
        [
            (
                *(t.parts[name] for name in LEGACY_PARTS),
                t.state_hash,
                t.record_hash,
                game_id,
                t.turn,
            )
            for t in turns[first:]
        ],
    )


def _rehash(version: int, turns: list[StoredTurn]) -> None:
    """Make every record hash again over the stored turns (a forger's consistent chain)."""
    previous = GENESIS_HASH
    if version >= 5:
        previous = bytes(len(turns[0].record_hash))  # a game's chains keep its hashes' length
        bodies = pack_bodies((t.starts, [t.parts[n].encode() for n in PARTS]) for t in turns)
        for stored, body in zip(turns, bodies, strict=True):
            previous = stored.record_hash = chain_body_hash(previous, stored.state_hash, body)
        return
    for stored in turns:
        parts = [stored.parts[name] for name in LEGACY_PARTS]
        previous = chain_record_hash(previous, stored.state_hash, *parts)
        stored.record_hash = previous.hex()


def edit_turn(
    path: Path,
    game_id: int,
    turn: int,
    part: str,
    change: Callable[[str], str],
    *,
    rehash: bool = False,
) -> None:
    """Replace the stored text of ``part`` of ``turn`` by ``change(text)``.

    The record hashes are kept (so the record-hash chain finds the edit at that turn) unless
    ``rehash``, which makes them again from that turn on (only a replay then finds it).
    """
    db, version = _connect(path)
    try:
        with db:
            turns = _read(db, version, game_id)
            index = next(i for i, stored in enumerate(turns) if stored.turn == turn)
            turns[index].parts[part] = change(turns[index].parts[part])
            if rehash:
                _rehash(version, turns)
            _write(db, version, game_id, turns, index)
    finally:
        db.close()


def set_hashes(
    path: Path,
    game_id: int,
    turn: int,
    *,
    state_hash: Any = None,
    record_hash: Any = None,
) -> None:
    """Store these hashes for ``turn`` (as given: bytes, or text for versions 3 and 4)."""
    columns = {"state_hash": state_hash, "record_hash": record_hash}
    columns = {name: value for name, value in columns.items() if value is not None}
    run_sql(
        path,
        f"UPDATE turns SET {', '.join(f'{name} = ?' for name in columns)} "
        "WHERE game_id = ? AND turn = ?",
        *columns.values(),
        game_id,
        turn,
    )


def delete_turns(path: Path, game_id: int, first: int, last: int | None = None) -> None:
    """Lose the stored turns ``first`` to ``last`` (None: to the game's end)."""
    end = 2**62 if last is None else last
    run_sql(
        path, "DELETE FROM turns WHERE game_id = ? AND turn BETWEEN ? AND ?", game_id, first, end
    )


def update_game(path: Path, game_id: int, **columns: Any) -> None:
    """Set columns of a game's header row (``config``, ``seed``, ``env_id``, ``outcome``,
    ``generator``, ``meta``: JSON text where the column holds JSON)."""
    run_sql(
        path,
        f"UPDATE games SET {', '.join(f'{name} = ?' for name in columns)} WHERE id = ?",
        *columns.values(),
        game_id,
    )


def run_sql(path: Path, sql: str, *params: Any) -> None:
    """Run one statement on the file behind the journal's back."""
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute(sql, params)
    finally:
        db.close()


__all__ = [
    "StoredTurn",
    "delete_turns",
    "edit_turn",
    "run_sql",
    "set_hashes",
    "stored_turns",
    "update_game",
]
