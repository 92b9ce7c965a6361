"""One open journal per file while the games of an application write to it.

The front ends that play games for another framework (the Inspect tasks, the verifiers
environments) run many games at once in one event loop, as the runner's inline executor does;
they share one :class:`~maze_envs.journal.Journal` per file (reference counted), closed when its
last game ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

from maze_envs.journal import Journal


class JournalPool:
    """One open journal per file while games write to it (reference counted)."""

    def __init__(self) -> None:
        self._open: dict[Path, tuple[Journal, int]] = {}

    @contextlib.asynccontextmanager
    async def use(self, path: Path) -> AsyncIterator[Journal]:
        """The journal of ``path`` (its folder made when missing), open for this block."""
        key = path.resolve()
        journal, users = self._open.get(key, (None, 0))
        if journal is None:
            key.parent.mkdir(parents=True, exist_ok=True)
            journal = Journal(key)
        self._open[key] = (journal, users + 1)
        try:
            yield journal
        finally:
            journal, users = self._open[key]
            if users == 1:
                del self._open[key]
                journal.close()
            else:
                self._open[key] = (journal, users - 1)


#: The process's journal pool.
JOURNALS: Final = JournalPool()
