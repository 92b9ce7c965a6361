"""Group commit: the turn rows a :class:`~maze_envs.journal.Journal` has not committed yet.

With ``durability="batch"`` (the default) a journal encodes and hashes each turn when it is
recorded, as always, but keeps the finished row in a :class:`TurnBatch` and writes the pending
rows in one transaction (one ``executemany`` and one commit) when :data:`BATCH_ROWS` rows are
pending, or when a turn is added :data:`BATCH_SECONDS` or more after the last commit, and
always before anything else is written or read through the journal (a game's start or outcome,
:meth:`~maze_envs.journal.Journal.flush`, ``settle``, ``close``). The rows, their hashes
included, are exactly the ones ``durability="turn"`` commits one by one.

Example:
    >>> batch = TurnBatch()
    >>> batch.add((1, 0, b"body 0", b"state hash", b"record hash"), [])
    >>> batch.add((1, 1, b"body 1", b"state hash", b"record hash"), [("k", "text")])
    >>> len(batch), batch.describe()
    (2, 'turns 0-1 of game 1')
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any, Final

from maze_envs.journal.format import INSERT_BLOB, INSERT_TURN, TURNS

#: A batch is written when this many rows are pending.
BATCH_ROWS: Final = 64
#: ... or when a turn is added this many seconds (or more) after the last commit.
BATCH_SECONDS: Final = 0.2
#: The two ``durability`` settings of a journal.
DURABILITIES: Final = ("batch", "turn")


def check_durability(durability: str) -> str:
    """``durability`` if it is one of :data:`DURABILITIES`, else a clear ``ValueError``.

    >>> check_durability("turn")
    'turn'
    """
    if durability not in DURABILITIES:
        raise ValueError(
            f"durability must be 'batch' (group commit, the default) or 'turn' (each turn "
            f"committed before record_turn returns), not {durability!r}"
        )
    return durability


class TurnBatch:
    """Encoded turn rows (``(game_id, turn, body, state_hash, record_hash)``) and the new blobs
    they reference, not yet written."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.blobs: list[tuple[str, str]] = []
        self.blob_keys: set[str] = set()

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, row: tuple[Any, ...], blobs: list[tuple[str, str]]) -> None:
        """Append one turn row and the blobs (``(key, text)``) it needs that are not stored."""
        self.rows.append(row)
        for key, text in blobs:
            if key not in self.blob_keys:
                self.blob_keys.add(key)
                self.blobs.append((key, text))

    def last_turns(self) -> dict[int, int]:
        """``{game_id: last pending turn}``."""
        return {row[0]: row[1] for row in self.rows}

    def describe(self) -> str:
        """The pending turns in words (``turn 5 of game 1``, ``turns 5-68 of game 1``...)."""
        spans: dict[int, tuple[int, int]] = {}
        for row in self.rows:
            first = spans.get(row[0], (row[1], row[1]))[0]
            spans[row[0]] = (first, row[1])
        parts = [
            f"turn {a} of game {g}" if a == b else f"turns {a}-{b} of game {g}"
            for g, (a, b) in spans.items()
        ]
        return ", ".join(parts)

    def clear(self) -> None:
        self.rows, self.blobs, self.blob_keys = [], [], set()

    def write(self, db: sqlite3.Connection) -> None:
        """Write every pending row in one transaction (all or nothing); raises ``sqlite3.Error``.

        The batch is emptied either way: after a failure nothing of it is in the file.
        """
        rows, blobs = self.rows, self.blobs
        self.clear()
        rows = [(game * TURNS + turn, *rest) for game, turn, *rest in rows]  # the key of a row
        if len(rows) == 1 and not blobs:
            db.execute(INSERT_TURN, rows[0])  # one statement commits on its own
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            if blobs:  # the texts and the turns that reference them: one transaction
                db.executemany(INSERT_BLOB, blobs)
            db.executemany(INSERT_TURN, rows)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise


def write_at_exit(db: sqlite3.Connection, batch: TurnBatch) -> None:
    """Write what is pending when a journal that was never closed goes away (best effort)."""
    if batch.rows:
        with contextlib.suppress(sqlite3.Error):
            batch.write(db)
