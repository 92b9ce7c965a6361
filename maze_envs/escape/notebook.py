"""The two notebook rules: ``splice`` and ``rolling_log``.

Both are pure functions ``(notebook, edit, limits) -> (new notebook or None, reason)``. An edit
that breaks a limit or points outside the text is *rejected*: ``None`` comes back (the notebook
stays as it was) with a reason the agent reads next turn. Nothing is trimmed or clamped silently;
the one automatic change is the documented rolling-log rule that drops the oldest whole lines
when the log is full, and the reason then says how many lines went.

Sizes are UTF-8 bytes; splice positions are characters (Python string indices).

Example:
    >>> splice("hello world", 6, 11, "maze", max_bytes=8192, turn_bytes=1024)
    ('hello maze', '')
    >>> append_line("a\\nb\\n", "c", max_bytes=4, turn_bytes=1024)
    ('b\\nc\\n', 'dropped 1 oldest line(s) to fit 4 bytes')
"""

from __future__ import annotations

from maze_envs.escape.refusals import NOTEBOOK


def _size(text: str) -> int:
    """UTF-8 size; ``isascii`` is a constant-time flag check in CPython, so ASCII is free."""
    return len(text) if text.isascii() else len(text.encode())


def _too_much_new_text(size: int, turn_bytes: int) -> str:
    return NOTEBOOK["too_much_new_text"].format(size=size, turn_bytes=turn_bytes)


def splice(
    notebook: str, start: int, end: int, text: str, *, max_bytes: int, turn_bytes: int
) -> tuple[str | None, str]:
    """Replace ``notebook[start:end]`` with ``text``; insert, delete and replace are all splices.

    Positions are checked against the text: ``start > end`` or ``end`` past the notebook's
    length rejects the edit with a reason that says so.
    """
    new, _, reason = splice_sized(
        notebook, _size(notebook), start, end, text, max_bytes=max_bytes, turn_bytes=turn_bytes
    )
    return new, reason


def splice_sized(
    notebook: str,
    notebook_bytes: int,
    start: int,
    end: int,
    text: str,
    *,
    max_bytes: int,
    turn_bytes: int,
) -> tuple[str | None, int, str]:
    """:func:`splice` for a notebook whose UTF-8 size is known: ``(new or None, its size,
    reason)``. The size of the result comes from the sizes of the parts, so a long notebook
    is never encoded again (the rules run this every turn)."""
    size = _size(text)
    if size > turn_bytes:
        return None, notebook_bytes, _too_much_new_text(size, turn_bytes)
    length = len(notebook)
    if start > end:
        return None, notebook_bytes, NOTEBOOK["start_after_end"].format(start=start, end=end)
    if end > length:
        return (
            None,
            notebook_bytes,
            NOTEBOOK["end_beyond_text"].format(end=end, length=length),
        )
    result_bytes = notebook_bytes - _size(notebook[start:end]) + size
    if result_bytes > max_bytes:
        return (
            None,
            notebook_bytes,
            NOTEBOOK["notebook_too_large"].format(size=result_bytes, max_bytes=max_bytes),
        )
    return notebook[:start] + text + notebook[end:], result_bytes, ""


def append_line(
    notebook: str, text: str, *, max_bytes: int, turn_bytes: int
) -> tuple[str | None, str]:
    """Append ``text`` as a line (a newline is added unless it ends with one).

    When the notebook would exceed ``max_bytes``, its oldest whole lines are dropped until it fits.
    """
    new, _, reason = append_line_sized(
        notebook, _size(notebook), text, max_bytes=max_bytes, turn_bytes=turn_bytes
    )
    return new, reason


def append_line_sized(
    notebook: str, notebook_bytes: int, text: str, *, max_bytes: int, turn_bytes: int
) -> tuple[str | None, int, str]:
    """:func:`append_line` for a notebook whose UTF-8 size is known: ``(new or None, its
    size, reason)``."""
    size = _size(text)
    if size > turn_bytes:
        return None, notebook_bytes, _too_much_new_text(size, turn_bytes)
    entry = text if text.endswith("\n") else text + "\n"
    entry_bytes = size if entry is text else size + 1
    if entry_bytes > max_bytes:
        return (
            None,
            notebook_bytes,
            NOTEBOOK["entry_too_large"].format(size=entry_bytes, max_bytes=max_bytes),
        )
    result = notebook + entry
    total = notebook_bytes + entry_bytes
    excess = total - max_bytes
    if excess <= 0:
        return result, total, ""
    dropped = 0
    start = 0
    while excess > 0:
        cut = result.index("\n", start) + 1
        line_bytes = _size(result[start:cut])
        excess -= line_bytes
        total -= line_bytes
        start = cut
        dropped += 1
    return (
        result[start:],
        total,
        NOTEBOOK["lines_dropped"].format(dropped=dropped, max_bytes=max_bytes),
    )
