"""Edits of schema version 4 (read, no longer written): a new text or JSON fragment as copies of
its previous version, of this turn's actions, and new pieces (:mod:`.changes`).

Two forms, read against the previous value at the same place:

``{"$s": [op, ...]}`` (a text)
    The new string is the concatenation of its ops: ``[start, end]`` is that range of characters
    of the previous string, a string is itself, ``{"a": [start, end]}`` is that byte range of
    this turn's stored actions text, read as UTF-8 (a note quoted from the action).
``{"$e": [op, ...]}`` (any other JSON fragment, such as an array)
    The same over the bytes of the previous fragment: ``[start, end]`` is a byte range of it.

Example:
    >>> old = "line 1\\nline 2\\n"
    >>> apply_text_edit([[0, 14], {"a": [6, 29]}, "\\n"], old, b'{"A":"line 3, from the action"}')
    'line 1\\nline 2\\nline 3, from the action\\n'
"""

from __future__ import annotations

from typing import Any, Final

#: The key of an op that copies from this turn's stored actions text.
FROM_ACTIONS: Final = "a"


def _range(op: Any, size: int, what: str) -> tuple[int, int]:
    start, end = op
    if not (type(start) is int and type(end) is int and 0 <= start <= end <= size):
        raise ValueError(f"an edit copies {op} of {what} of length {size}")
    return start, end


def apply_text_edit(ops: Any, previous: Any, actions: bytes) -> str:
    """The text an ``{"$s": ops}`` edit makes of ``previous`` (``ValueError`` if it cannot)."""
    if type(previous) is not str or type(ops) is not list:
        raise ValueError("a text edit of something that was not a text")
    pieces = []
    for op in ops:
        kind = type(op)
        if kind is str:
            pieces.append(op)
        elif kind is list:
            start, end = _range(op, len(previous), "a text")
            pieces.append(previous[start:end])
        else:
            start, end = _range(op[FROM_ACTIONS], len(actions), "the actions")
            pieces.append(actions[start:end].decode())
    return "".join(pieces)


def apply_bytes_edit(ops: Any, previous: Any, actions: bytes) -> bytes:
    """The fragment an ``{"$e": ops}`` edit makes of ``previous`` (``ValueError`` if it cannot)."""
    if type(previous) is not bytes or type(ops) is not list:
        raise ValueError("an edit of something that was not a stored fragment")
    pieces = []
    for op in ops:
        kind = type(op)
        if kind is str:
            pieces.append(op.encode())
        elif kind is list:
            start, end = _range(op, len(previous), "a fragment")
            pieces.append(previous[start:end])
        else:
            start, end = _range(op[FROM_ACTIONS], len(actions), "the actions")
            pieces.append(actions[start:end])
    return b"".join(pieces)


__all__ = ["FROM_ACTIONS", "apply_bytes_edit", "apply_text_edit"]
