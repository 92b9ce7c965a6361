"""Edits: a new text or JSON fragment as copies of its previous version, of this turn's actions,
and new pieces (schema version 4, :mod:`.changes`).

Two forms, read against the previous value at the same place:

``{"$s": [op, ...]}`` (a text)
    The new string is the concatenation of its ops: ``[start, end]`` is that range of characters
    of the previous string, a string is itself, ``{"a": [start, end]}`` is that byte range of
    this turn's stored actions text, read as UTF-8 (a note quoted from the action).
``{"$e": [op, ...]}`` (any other JSON fragment, such as an array)
    The same over the bytes of the previous fragment: ``[start, end]`` is a byte range of it.

An edit is written only when it is shorter than the value's JSON. Finding one costs a few
comparisons in C: a text that grew at its end, lost its start (a rolling log dropping its oldest
lines), or grew at its start is recognised at once; otherwise the common prefix and suffix are
found by galloping comparisons and one block of the previous version is looked up from an anchor.

Example:
    >>> old = "line 1\\nline 2\\n"
    >>> text_edit(old, old + "line 3, from the action\\n", b'{"A":"line 3, from the action"}')
    b'{"$s":[[0,14],{"a":[6,29]},"\\\\n"]}'
    >>> apply_text_edit([[0, 14], {"a": [6, 29]}, "\\n"], old, b'{"A":"line 3, from the action"}')
    'line 1\\nline 2\\nline 3, from the action\\n'
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

import orjson

#: An edit is tried for a changed text of this many characters or more (or a fragment of this
#: many bytes): shorter ones are stored whole.
EDIT_MIN: Final = 40
#: Characters (bytes) an edit looks up to find a block it can copy.
ANCHOR: Final = 12
#: The key of an op that copies from this turn's stored actions text.
FROM_ACTIONS: Final = "a"

Sliceable = TypeVar("Sliceable", str, bytes)


def common_prefix(a: Sliceable, i: int, b: Sliceable, j: int, limit: int) -> int:
    """Length of the common prefix of ``a[i:]`` and ``b[j:]``, at most ``limit``."""
    if a[i : i + limit] == b[j : j + limit]:
        return limit
    near = limit - 8  # a block copied up to a few characters before its end: the common case
    lo, hi = (near, limit) if near > 0 and a[i : i + near] == b[j : j + near] else (0, 16)
    while lo < hi < limit and a[i + lo : i + hi] == b[j + lo : j + hi]:
        lo, hi = hi, min(limit, hi * 4)
    hi = min(hi, limit)
    while hi - lo > 1:  # a[i:i+lo] == b[j:j+lo]; they differ before hi
        mid = (lo + hi) // 2
        if a[i + lo : i + mid] == b[j + lo : j + mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_suffix(a: Sliceable, b: Sliceable, limit: int) -> int:
    """Length of the common suffix of ``a`` and ``b``, at most ``limit``."""
    n, m = len(a), len(b)
    if limit <= 0:
        return 0
    if a[n - limit :] == b[m - limit :]:
        return limit
    lo, hi = 0, min(16, limit)
    while lo < hi < limit and a[n - hi : n - lo] == b[m - hi : m - lo]:
        lo, hi = hi, min(limit, hi * 4)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[n - mid : n - lo] == b[m - mid : m - lo]:
            lo = mid
        else:
            hi = mid
    return lo


def _char_start(data: bytes, index: int) -> int:
    """``index`` moved back to the start of a UTF-8 character of ``data``."""
    while 0 < index < len(data) and data[index] & 0xC0 == 0x80:
        index -= 1
    return index


def literal_ops(text: str, actions: bytes) -> list[bytes]:
    """Ops for new ``text``: a copy of this turn's actions where it starts with some of them."""
    if len(text) >= ANCHOR:
        data = text.encode()
        found = actions.find(data[:ANCHOR])
        if found >= 0:
            length = common_prefix(actions, found, data, 0, min(len(actions) - found, len(data)))
            length = _char_start(data, length)
            if length >= ANCHOR:
                ops = [b'{"a":[%d,%d]}' % (found, found + length)]
                if length < len(data):
                    ops.append(orjson.dumps(data[length:].decode()))
                return ops
    return [orjson.dumps(text)] if text else []


def text_edit(previous: str, new: str, actions: bytes) -> bytes | None:
    """The stored ``{"$s": ops}`` of ``new`` against ``previous``, or None when not shorter."""
    n, m = len(previous), len(new)
    ops: list[bytes]
    if new.startswith(previous):  # written at its end
        ops = [b"[0,%d]" % n, *literal_ops(new[n:], actions)]
    else:
        found = previous.find(new[:ANCHOR], 1) if m >= ANCHOR else -1
        if found > 0 and new.startswith(previous[found:]):  # its start dropped, maybe more added
            ops = [b"[%d,%d]" % (found, n), *literal_ops(new[n - found :], actions)]
        elif new.endswith(previous):  # written at its start
            ops = [*literal_ops(new[: m - n], actions), b"[0,%d]" % n]
        else:
            ops = _general(previous, new, actions)
    stored = b'{"$s":[' + b",".join(ops) + b"]}"
    return stored if len(stored) < m else None


def _general(previous: str, new: str, actions: bytes) -> list[bytes]:
    n, m = len(previous), len(new)
    limit = min(n, m)
    start = common_prefix(previous, 0, new, 0, limit)
    end = m - common_suffix(previous, new, limit - start)
    ops = [b"[0,%d]" % start] if start else []
    if end - start >= ANCHOR:  # one block of the old text moved inside the new one
        found = previous.find(new[start : start + ANCHOR])
        if found >= 0:
            length = common_prefix(previous, found, new, start, min(n - found, end - start))
            ops.append(b"[%d,%d]" % (found, found + length))
            start += length
    ops += literal_ops(new[start:end], actions)
    if end < m:
        ops.append(b"[%d,%d]" % (n - (m - end), n))
    return ops


def bytes_edit(previous: bytes, fragment: bytes, actions: bytes) -> bytes | None:
    """The stored ``{"$e": ops}`` of JSON ``fragment`` against ``previous``, or None."""
    n, m = len(previous), len(fragment)
    limit = min(n, m)
    start = _char_start(fragment, common_prefix(previous, 0, fragment, 0, limit))
    end = m - common_suffix(previous, fragment, limit - start)
    while end < m and fragment[end] & 0xC0 == 0x80:  # the suffix starts a character
        end += 1
    ops = [b"[0,%d]" % start] if start else []
    for _ in range(4):  # a few blocks at most: a sliding window is one
        if end - start < ANCHOR:
            break
        found = previous.find(fragment[start : start + ANCHOR])
        if found < 0:
            break
        length = common_prefix(previous, found, fragment, start, min(n - found, end - start))
        length = _char_start(fragment, start + length) - start
        if length < ANCHOR:
            break
        ops.append(b"[%d,%d]" % (found, found + length))
        start += length
    if start < end:
        ops += literal_ops(fragment[start:end].decode(), actions)
    if end < m:
        ops.append(b"[%d,%d]" % (n - (m - end), n))
    stored = b'{"$e":[' + b",".join(ops) + b"]}"
    return stored if len(stored) < m else None


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


__all__ = [
    "ANCHOR",
    "EDIT_MIN",
    "FROM_ACTIONS",
    "apply_bytes_edit",
    "apply_text_edit",
    "bytes_edit",
    "common_prefix",
    "common_suffix",
    "literal_ops",
    "text_edit",
]
