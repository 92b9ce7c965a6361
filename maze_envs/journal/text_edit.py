"""Text edits of schema version 5 (:mod:`.delta`): a changed text stored as ``{"$s": ops}``
against its previous version, its new pieces named by their path in the turn's actions when
they are texts of the actions (the note an agent wrote, which its notebook gained)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

#: Characters an edit looks up to find a block of the previous text it can copy.
ANCHOR: Final = 12
#: Action values this many levels down are not looked into for texts.
ACTION_DEPTH: Final = 4
#: Texts of the actions shorter than this are not named (their path is no shorter).
PIECE_MIN: Final = 8


def text_edit(previous: str, new: str, pieces: Mapping[str, bytes] | None = None) -> bytes | None:
    """The stored ``{"$s": ops}`` of ``new`` against ``previous``, or None when not shorter;
    ``pieces``: texts of this turn's actions -> their paths' JSON (a new piece that is one,
    maybe with a newline after it, is named by its path).

    >>> old = "".join(f"line {i}: a note about the maze\\n" for i in range(3))
    >>> text_edit(old, old[old.index("\\n") + 1 :] + "line 3: the new note\\n")
    b'{"$s":[[30],"line 3: the new note\\\\n"]}'
    >>> text_edit(old, old + "line 3: the new note\\n", {"line 3: the new note": b'["A"]'})
    b'{"$s":[[0],{"a":["A"]},"\\\\n"]}'
    """
    n, m = len(previous), len(new)
    found_in = pieces or {}
    ops: list[bytes]
    if new.startswith(previous):  # written at its end
        ops = [b"[0]", *_piece(new[n:], found_in)]
    else:
        found = previous.find(new[:ANCHOR], 1) if m >= ANCHOR else -1
        if found > 0 and new.startswith(previous[found:]):  # its start dropped, maybe more added
            ops = [b"[%d]" % found]
            if m > n - found:
                ops += _piece(new[n - found :], found_in)
        elif new.endswith(previous):  # written at its start
            ops = [*_piece(new[: m - n], found_in), b"[0]"]
        else:
            ops = _general(previous, new)
    stored = b'{"$s":[' + b",".join(ops) + b"]}"
    return stored if len(stored) < m else None


def _piece(text: str, pieces: Mapping[str, bytes]) -> list[bytes]:
    """The ops of a new piece: a text of the actions by its path (and a newline), or itself."""
    path = pieces.get(text)
    if path is not None:
        return [b'{"a":' + path + b"}"]
    if text[-1:] == "\n":
        path = pieces.get(text[:-1])
        if path is not None:
            return [b'{"a":' + path + b"}", b'"\\n"']
    return [orjson.dumps(text)]


def action_texts(value: Any, path: list[Any], out: dict[str, bytes], depth: int = 0) -> None:
    """Put the texts (:data:`PIECE_MIN` characters or more) of an action value in ``out``,
    each -> its path's JSON (the first path wins)."""
    kind = type(value)
    if kind is str:
        if len(value) >= PIECE_MIN and value not in out:
            out[value] = orjson.dumps(path)
        return
    if depth >= ACTION_DEPTH or kind in _LEAVES:
        return
    if kind is dict or (kind is not list and kind is not tuple and isinstance(value, Mapping)):
        items: Any = value.items()
    elif kind is list or kind is tuple:
        items = enumerate(value)
    else:
        return
    for key, item in items:  # (written for speed: an action's numbers are skipped inline)
        if type(item) in _LEAVES or (
            type(key) is not str and kind is not list and kind is not tuple
        ):
            continue
        if type(item) is str:
            if len(item) >= PIECE_MIN and item not in out:
                out[item] = orjson.dumps([*path, key])
        else:
            action_texts(item, [*path, key], out, depth + 1)


#: Action values that hold no text.
_LEAVES: Final = frozenset({int, float, bool, type(None)})
_SEQUENCES: Final = (list, tuple)


def common_prefix(a: str, i: int, b: str, j: int, limit: int) -> int:
    """Length of the common prefix of ``a[i:]`` and ``b[j:]``, at most ``limit`` (by galloping
    slice comparisons, done in C)."""
    if a[i : i + limit] == b[j : j + limit]:
        return limit
    lo, hi = 0, min(16, limit)
    while lo < hi < limit and a[i + lo : i + hi] == b[j + lo : j + hi]:
        lo, hi = hi, min(limit, hi * 4)
    while hi - lo > 1:  # a[i:i+lo] == b[j:j+lo]; they differ before hi
        mid = (lo + hi) // 2
        if a[i + lo : i + mid] == b[j + lo : j + mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_suffix(a: str, b: str, limit: int) -> int:
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


def _general(previous: str, new: str) -> list[bytes]:
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
    if start < end:
        ops.append(orjson.dumps(new[start:end]))
    if end < m:
        ops.append(b"[%d]" % (n - (m - end)))
    return ops


__all__ = ["ANCHOR", "action_texts", "common_prefix", "common_suffix", "text_edit"]
