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


def _size(text: str) -> int:
    """UTF-8 size; ``isascii`` is a constant-time flag check in CPython, so ASCII is free."""
    return len(text) if text.isascii() else len(text.encode())


def _too_much_new_text(size: int, turn_bytes: int) -> str:
    return f"new text is {size} bytes; at most {turn_bytes} bytes of new text per turn"


def splice(
    notebook: str, start: int, end: int, text: str, *, max_bytes: int, turn_bytes: int
) -> tuple[str | None, str]:
    """Replace ``notebook[start:end]`` with ``text``; insert, delete and replace are all splices."""
    size = _size(text)
    if size > turn_bytes:
        return None, _too_much_new_text(size, turn_bytes)
    length = len(notebook)
    if start > end:
        return None, f"start {start} is after end {end}"
    if end > length:
        return None, f"end {end} is beyond the notebook's {length} characters (0..{length})"
    result = notebook[:start] + text + notebook[end:]
    result_bytes = _size(result)
    if result_bytes > max_bytes:
        return None, f"the notebook would be {result_bytes} bytes; it holds at most {max_bytes}"
    return result, ""


def append_line(
    notebook: str, text: str, *, max_bytes: int, turn_bytes: int
) -> tuple[str | None, str]:
    """Append ``text`` as a line (a newline is added unless it ends with one).

    When the notebook would exceed ``max_bytes``, its oldest whole lines are dropped until it fits.
    """
    size = _size(text)
    if size > turn_bytes:
        return None, _too_much_new_text(size, turn_bytes)
    entry = text if text.endswith("\n") else text + "\n"
    entry_bytes = _size(entry)
    if entry_bytes > max_bytes:
        return None, f"the entry is {entry_bytes} bytes; the notebook holds at most {max_bytes}"
    result = notebook + entry
    excess = _size(result) - max_bytes
    if excess <= 0:
        return result, ""
    dropped = 0
    start = 0
    while excess > 0:
        cut = result.index("\n", start) + 1
        excess -= len(result[start:cut].encode())
        start = cut
        dropped += 1
    return result[start:], f"dropped {dropped} oldest line(s) to fit {max_bytes} bytes"
