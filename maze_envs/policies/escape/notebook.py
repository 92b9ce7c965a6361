"""Keeping a notebook in a wanted state within the game's limits, in either notebook mode.

Example:
    >>> splice_to("EXIT a:N\\nHERE:E2\\n", "EXIT a:N\\nHERE:E\\n")
    SpliceEdit(start=15, end=16, text='')
    >>> splice_to("same", "same") is None
    True
"""

from __future__ import annotations

from collections.abc import Sequence

from maze_envs.escape.types import AppendEdit, Config, SpliceEdit


def _utf8(text: str) -> int:
    return len(text.encode())


def splice_to(current: str, desired: str) -> SpliceEdit | None:
    """The smallest splice that turns ``current`` into ``desired`` (``None`` if equal)."""
    if current == desired:
        return None
    start = 0
    limit = min(len(current), len(desired))
    while start < limit and current[start] == desired[start]:
        start += 1
    end_cur, end_des = len(current), len(desired)
    while end_cur > start and end_des > start and current[end_cur - 1] == desired[end_des - 1]:
        end_cur -= 1
        end_des -= 1
    return SpliceEdit(start=start, end=end_cur, text=desired[start:end_des])


def fit_lines(lines: Sequence[str], max_bytes: int) -> list[str]:
    """The first lines (each with its newline) that fit in ``max_bytes`` together."""
    kept: list[str] = []
    size = 0
    for line in lines:
        size += _utf8(line) + 1
        if size > max_bytes:
            break
        kept.append(line)
    return kept


class NotebookKeeper:
    """Writes lines into the agent's notebook under the config's limits.

    ``splice`` notebooks are rewritten to exactly the wanted lines (the smallest splice); a
    ``rolling_log`` gets each wanted line appended when it is not already the newest line of its
    kind (its first word), so a reader always finds the current one last.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.budget = min(config.notebook_max_bytes, config.notebook_turn_bytes)

    def edit(self, current: str, lines: Sequence[str]) -> SpliceEdit | AppendEdit | None:
        if self.config.notebook_mode == "splice":
            kept = fit_lines(lines, self.budget)
            return splice_to(current, "".join(f"{line}\n" for line in kept))
        newest: dict[str, str] = {}
        for line in current.splitlines():
            newest[_kind(line)] = line
        fresh = [line for line in lines if newest.get(_kind(line)) != line]
        kept = fit_lines(fresh, self.budget - 1)
        return AppendEdit(text="\n".join(kept)) if kept else None


def _kind(line: str) -> str:
    return line.split(":", 1)[0].split(" ", 1)[0]
