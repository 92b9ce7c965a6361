"""Fault injection for journals: a SQLite connection whose writes fail on demand."""

from __future__ import annotations

import sqlite3
from typing import Any

from maze_envs.journal import Journal


class FailingConnection:
    """Wraps a journal's connection; statements starting with a prefix in ``fail`` raise.

    ``fail`` maps an SQL prefix (``"INSERT INTO turns"``, ``"UPDATE games"``) to the SQLite
    error message to raise, as a full disk or a vanished device would.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self.fail: dict[str, str] = {}

    def _check(self, sql: str) -> None:
        for prefix, message in self.fail.items():
            if sql.lstrip().startswith(prefix):
                raise sqlite3.OperationalError(message)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        self._check(sql)
        return self._db.execute(sql, params)

    def executemany(self, sql: str, params: Any) -> sqlite3.Cursor:
        self._check(sql)
        return self._db.executemany(sql, params)

    def close(self) -> None:
        self._db.close()


def inject(journal: Journal) -> FailingConnection:
    """Put a :class:`FailingConnection` under ``journal`` and return it."""
    connection = FailingConnection(journal._db)
    journal._db = connection  # type: ignore[assignment]
    return connection
