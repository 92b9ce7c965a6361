"""Progress of a run: games done, successes, elapsed time.

A rich progress bar on a terminal (``pip install 'maze-envs[bench]'``); plain lines otherwise
(no rich, or output that is not a TTY, such as CI logs): one line at most every few seconds and
one at the end. ``quiet`` shows nothing.

A game counts as a success when the team escaped (Maze Escape) or the labyrinth (a set's target)
was solved within the evaluation budget (AGI Maze): :func:`row_success`.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

#: Seconds between two plain progress lines.
PLAIN_INTERVAL = 5.0


def row_success(row: dict[str, Any]) -> bool:
    """Whether a results row is a success: its labyrinth solved within the budget when the row
    has a ``solved`` column (AGI Maze: a labyrinth, or a set's target), its ``success`` column
    otherwise (Maze Escape: the team escaped). Read from the row's columns, not its
    environment's name, so a labyrinth set counts as a labyrinth does.

    >>> row_success({"env": "agimaze-set", "solved": True, "success": False})
    True
    >>> row_success({"env": "escape", "success": True}), row_success({"status": "error"})
    (True, False)
    """
    return bool(row["solved"] if "solved" in row else row.get("success"))


class Progress(Protocol):
    def update(self, row: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class _Quiet:
    def update(self, row: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


class _Plain:
    def __init__(self, total: int, skipped: int, stream: TextIO) -> None:
        self.total, self.done, self.successes = total, skipped, 0
        self.stream = stream
        self.started = self.last = time.perf_counter()
        if skipped:
            print(f"bench: {skipped} of {total} games already done (resumed)", file=stream)

    def _line(self) -> None:
        elapsed = time.perf_counter() - self.started
        share = 100 * self.done / self.total if self.total else 100.0
        print(
            f"bench: {self.done}/{self.total} games ({share:.0f}%), "
            f"{self.successes} successes, {elapsed:.1f} s",
            file=self.stream,
            flush=True,
        )

    def update(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.successes += row_success(row)
        now = time.perf_counter()
        if now - self.last >= PLAIN_INTERVAL:
            self.last = now
            self._line()

    def close(self) -> None:
        self._line()


class _Rich:
    def __init__(self, total: int, skipped: int, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.successes = 0
        self.bar = RichProgress(
            TextColumn("bench"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games, {task.fields[successes]} successes"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=False,
        )
        self.task = self.bar.add_task("games", total=total, completed=skipped, successes=0)
        self.bar.start()

    def update(self, row: dict[str, Any]) -> None:
        self.successes += row_success(row)
        self.bar.update(self.task, advance=1, successes=self.successes)

    def close(self) -> None:
        self.bar.stop()


def make_progress(
    total: int, skipped: int = 0, *, quiet: bool = False, stream: TextIO | None = None
) -> Progress:
    """The progress display for a run of ``total`` games of which ``skipped`` are done."""
    out = sys.stderr if stream is None else stream
    if quiet:
        return _Quiet()
    if out.isatty():
        try:
            return _Rich(total, skipped, out)
        except ImportError:  # rich is optional: plain lines
            pass
    return _Plain(total, skipped, out)
