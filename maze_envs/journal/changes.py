"""Schema version 4: a turn's observations and events stored as what changed since the turn before.

A column value (``{agent: observation}``, ``{agent: events}``) is a tree: a JSON object at depth 0
to :data:`MAX_DEPTH` - 1 (the column, an agent's value, and two levels inside it) is a
*container*; any other value is a *leaf*, whose JSON text is what
:func:`~.format.encode_json_bytes` writes. A turn's stored text is an *item* for the column, read
against the previous turn's tree of the same game and column (none at turn 0):

``{key: item, ...}`` (an object at a container's depth, where the previous value is a
container: a patch)
    The previous container, in its key order, with the listed keys replaced by their items. A
    key not listed keeps its previous value, except that an *integer* (a JSON number of digits,
    maybe after ``-``) moves on by the step it last took: ``turn`` 41 after 39 and 40, so the
    counters that tick every turn cost nothing. A patch adds and removes no key, so a stored
    observation looks like the observation with only what changed in it (``{}``: nothing).
    The column lists every agent.
``{"$n": 1, key: item, ...}``, or an object where the previous value is not a container
    A new container with exactly these keys in this order; each item is read against the
    previous value under the same key, if any.
``{"$s": ops}``, ``{"$e": ops}`` (edits, :mod:`.edits`)
    A text, or another leaf's JSON, as copies of its previous version and of this turn's stored
    actions text, and new pieces: a notebook that gained a line and lost its oldest is a copy of
    the old one, a copy of the note from the action and a newline.
``{"$h": n}`` (a text seen before)
    The text this place held as its ``n``-th distinct text (counted from 0 for each place of the
    tree, over texts of at most :data:`HISTORY_CHARS` characters; only the last
    :data:`HISTORY_SIZE` are kept): a narration or a reason that comes back.
``{"$r": [key, ...]}`` (a reference)
    The same text as the leaf at that path of this turn's tree, stored once there: a teammate's
    notebook shown on a shared cell, a radio message every teammate hears.
``{"$l": value}``
    The leaf ``value`` (an object that would otherwise read as one of these markers).
``{"$w": 1, key: item, ...}`` (the column only: a turn read without the one before)
    A game's first turn, the first turn a writer stores after a failed write, and every turn of
    a journal opened with ``changes=False`` (:func:`whole`); the next turn is read against it.
anything else
    A leaf: that JSON value (an object with a key that is one of these markers is a leaf,
    stored as ``{"$l": value}``). An integer's step is its change from the
    previous integer at this place (0 when there was none).

Reading (:class:`~.rebuild.ChangeReader`) applies these rules turn after turn and gives back
each turn's full JSON text, byte for byte what :func:`~.format.encode_json_bytes` makes of the
value (what version 3 stored).

Example:
    >>> from maze_envs.journal.rebuild import ChangeReader
    >>> writer, reader = ChangeWriter(), ChangeReader()
    >>> turns = [{"A": {"turn": t, "notebook": "a note; " * (t + 20)}} for t in range(3)]
    >>> stored = [writer.encode(value, b"{}") for value in turns]
    >>> stored[2]
    b'{"A":{"notebook":{"$s":[[0,168],"a note; "]}}}'
    >>> [orjson.loads(reader.decode(text, b"{}")) == value for text, value in zip(stored, turns)]
    [True, True, True]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import orjson

from maze_envs.journal.edits import EDIT_MIN, bytes_edit
from maze_envs.journal.edits import text_edit as _text_edit
from maze_envs.journal.format import json_default

NEW: Final = "$n"
TEXT_EDIT: Final = "$s"
EDIT: Final = "$e"
REF: Final = "$r"
HISTORY: Final = "$h"
WHOLE: Final = "$w"
LITERAL: Final = "$l"
MARKERS: Final = frozenset({NEW, TEXT_EDIT, EDIT, REF, HISTORY, LITERAL})
#: Objects at depths below this are containers (the column 0, an agent's value 1, then 2, 3).
MAX_DEPTH: Final = 4
#: A text this long or longer that is the very object of another text of the same turn (a
#: notebook shown to a teammate, a radio message) is stored as a reference to it.
REF_MIN: Final = 24
#: Texts up to this long are remembered at their place, the last :data:`HISTORY_SIZE` of them.
HISTORY_CHARS: Final = 512
HISTORY_SIZE: Final = 32

_OPTIONS: Final = orjson.OPT_SERIALIZE_NUMPY
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # the integers JSON readers (orjson) take exactly
_KEYS: dict[str, bytes] = {}
_UNCHANGED: Final = b"{}"


def json_fragment(value: Any) -> bytes:
    """The JSON of a value as the journal writes it (:func:`~.format.encode_json_bytes`)."""
    return orjson.dumps(value, default=json_default, option=_OPTIONS)


def key_json(key: Any) -> bytes:
    """The JSON of a mapping key (cached); ``TypeError`` for a key that is not a string."""
    text = _KEYS.get(key) if type(key) is str else None
    if text is None:
        if type(key) is not str:
            raise TypeError(f"mapping keys must be strings to be stored, got {key!r}")
        if len(_KEYS) > 4096:
            _KEYS.clear()
        text = _KEYS[key] = orjson.dumps(key)
    return text


def _is_int(fragment: bytes) -> bool:
    return fragment.isdigit() or (fragment[:1] == b"-" and fragment[1:].isdigit())


def _is_marker(value: Mapping[str, Any]) -> bool:
    """Whether an object has a key that is a marker: it is then stored as a leaf, as
    ``{"$l": value}`` (a patch listing only such a key would read as the marker)."""
    return not MARKERS.isdisjoint(value)


class Node:
    """A container: its children by key (in order), its JSON text once known, and whether an
    integer under it moves on by itself (a non-zero step)."""

    __slots__ = ("children", "keys", "moving", "names", "text")

    def __init__(self, children: dict[str, Any]) -> None:
        self.children = children
        self.keys: tuple[str, ...] = ()
        self.names: tuple[bytes, ...] = ()  # the keys' JSON (the writer's)
        self.text: bytes | None = None
        self.moving = False


class TextHistory:
    """The distinct texts one place of the tree held, numbered in the order they came."""

    __slots__ = ("count", "numbers", "order", "texts")

    def __init__(self) -> None:
        self.count = 0
        self.numbers: dict[str, int] = {}  # text -> its number
        self.texts: dict[int, str] = {}  # number -> text
        self.order: deque[str] = deque()

    def remember(self, text: str) -> int | None:
        """Remember ``text`` (a no-op when it is remembered); its number from before, if any."""
        number = self.numbers.get(text)
        if number is not None:
            return number
        self.numbers[text] = self.count
        self.texts[self.count] = text
        self.count += 1
        self.order.append(text)
        if len(self.order) > HISTORY_SIZE:
            del self.texts[self.numbers.pop(self.order.popleft())]
        return None


class _Array:
    """A numpy array leaf of the writer: its type, shape and bytes, and its JSON."""

    __slots__ = ("data", "dtype", "fragment", "shape")

    def __init__(self, item: np.ndarray[Any, Any], data: bytes, fragment: bytes) -> None:
        self.dtype, self.shape, self.data, self.fragment = item.dtype, item.shape, data, fragment


def _slid(item: np.ndarray[Any, Any], data: bytes, old: _Array) -> tuple[bytes, bytes] | None:
    """(JSON, stored edit) of an integer array that is ``old`` moved on by one row (a trail: its
    oldest entry dropped, a new one appended), or None when it is not."""
    rows = item.shape[0]
    if item.ndim > 2 or rows < 8 or item.dtype.kind not in "iub":
        return None
    size = len(data) // rows
    if data[:-size] != old.data[size:]:
        return None
    fragment = old.fragment
    first = fragment.index(b"]," if item.ndim == 2 else b",", 1) + (2 if item.ndim == 2 else 1)
    tail = b"," + orjson.dumps(item[-1].tolist()) + b"]"  # digits: no escapes in a JSON string
    new = b"[" + fragment[first:-1] + tail
    return new, b'{"$e":[[0,1],[%d,%d],"%s"]}' % (first, len(fragment) - 1, tail)


class _Out:
    """What a container stores: ``key:item`` parts (bytes, or ``(key JSON, _Out)`` for a
    container); whether it is a patch, whether it leaves out what is unchanged (a patch below
    the column), whether it is marked new."""

    __slots__ = ("new", "parts", "patch", "skip")

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.patch = self.skip = self.new = False


# A container whose walk waits until every agent's top level is written (so that a reference
# from inside it finds the agents' own texts): (value, old, depth, path, out, parent, key, text).
_Deferred = tuple[Mapping[str, Any], Any, int, tuple[str, ...], _Out, Node, str, bytes | None]


class ChangeWriter:
    """Encodes one column of one game, turn after turn (see the module docstring)."""

    def __init__(self) -> None:
        self._root: Node | None = None
        self._refs: dict[int, tuple[str, ...]] = {}
        self._actions = b""
        self._history: dict[tuple[str, ...], TextHistory] = {}

    def encode(self, value: Mapping[str, Any], actions: bytes) -> bytes:
        """This turn's stored text of ``value`` (``actions``: this turn's stored actions text).

        Raises ``TypeError`` for a value JSON cannot hold (the previous turn stays the base).
        """
        if not isinstance(value, Mapping):
            raise TypeError(f"a column value must be a mapping, got {type(value).__name__}")
        if any(type(key) is str and key[:1] == "$" for key in value):
            raise TypeError(f"agent names may not start with '$' (got {sorted(value)})")
        self._refs, self._actions = {}, actions
        out, deferred = _Out(), list[_Deferred]()
        try:
            root = self._walk(value, self._root, 0, (), out, deferred)
            for item, old, depth, path, sub, parent, key, text in deferred:
                child = self._walk(item, old, depth, path, sub, None)
                child.text = text
                parent.children[key] = child
        finally:
            self._refs, self._actions = {}, b""
        fresh, self._root = self._root is None, root
        text = _serialize(out)
        if fresh:  # read without whatever the reader holds from before
            return b'{"$w":1' + (b"," + text[1:] if len(text) > 2 else b"}")
        return text

    def _walk(
        self,
        value: Mapping[str, Any],
        old: Node | None,
        depth: int,
        path: tuple[str, ...],
        out: _Out,
        deferred: list[_Deferred] | None,
    ) -> Node:
        # Written for speed (it runs for every agent every turn): locals, no calls for the
        # common leaves (integers, texts, arrays), containers compared whole before a walk.
        node = Node({})
        children, parts, refs = node.children, out.parts, self._refs
        keys = node.keys = tuple(value)
        if old is not None and old.keys == keys:
            olds, names = old.children, old.names
            patch = out.patch = True
        else:
            olds = old.children if old is not None else {}
            names = tuple(_KEYS.get(key) or key_json(key) for key in keys)
            patch = out.patch = False
            out.new = old is not None
        node.names = names
        skip = out.skip = patch and depth > 0  # the column lists every agent
        inner = depth + 1
        moving = False
        for kj, (key, item) in zip(names, value.items(), strict=True):
            previous = olds.get(key)
            kind = type(item)
            if kind is int:
                if not -9223372036854775808 <= item <= 18446744073709551615:
                    raise TypeError(f"integer {item} does not fit in 64 bits")
                if type(previous) is tuple:
                    before, step = previous
                    if item == before + step:
                        if step:
                            children[key] = (item, step)
                            moving = True
                        else:
                            children[key] = previous
                        if not skip:
                            parts.append(b"%s:%d" % (kj, item))
                        continue
                    step = item - before
                    if step:
                        moving = True
                else:
                    step = 0
                children[key] = (item, step)
                parts.append(b"%s:%d" % (kj, item))
            elif kind is str:
                children[key] = item
                if item is previous or (type(previous) is str and item == previous):
                    if len(item) >= REF_MIN:
                        refs.setdefault(id(item), (*path, key))
                    if not skip:
                        parts.append(kj + b":" + orjson.dumps(item))
                        self._remember((*path, key), item)
                else:
                    parts.append(kj + b":" + self._text(item, previous, (*path, key)))
            elif kind is np.ndarray and item.ndim:
                data = item.tobytes()
                if (
                    type(previous) is _Array
                    and previous.dtype is item.dtype
                    and previous.shape == item.shape
                ):
                    if previous.data == data:
                        children[key] = previous
                        if not skip:
                            parts.append(kj + b":" + previous.fragment)
                        continue
                    slid = _slid(item, data, previous)
                    if slid is not None:
                        children[key] = _Array(item, data, slid[0])
                        parts.append(kj + b":" + slid[1])
                        continue
                fragment = orjson.dumps(item, default=json_default, option=_OPTIONS)
                children[key] = _Array(item, data, fragment)
                parts.append(kj + b":" + self._changed(fragment, previous))
            elif kind is bool or item is None:  # as _other writes them, without its calls
                fragment = b"null" if item is None else b"true" if item else b"false"
                children[key] = fragment
                if fragment != previous or not skip:
                    parts.append(kj + b":" + fragment)
            elif kind is dict and inner < MAX_DEPTH and not _is_marker(item):
                if self._container(node, key, kj, item, previous, inner, path, out, deferred):
                    moving = True
            elif self._other(node, key, kj, item, previous, inner, path, out, deferred):
                moving = True
        node.moving = moving
        return node

    def _container(
        self,
        node: Node,
        key: str,
        kj: bytes,
        value: Mapping[str, Any],
        previous: Any,
        depth: int,
        path: tuple[str, ...],
        out: _Out,
        deferred: list[_Deferred] | None,
    ) -> bool:
        """Write a child container (compared whole first, deferred at an agent's top level);
        whether it moves (known for a container walked now)."""
        old = previous if type(previous) is Node else None
        text = None
        # small containers are compared whole first (most stay the same), unless they hold a
        # counter that moves on (then they never stay the same)
        if depth >= 2 and (old is None or not old.moving):
            text = json_fragment(value)
            if old is not None and not old.moving and old.text == text:
                node.children[key] = old
                if not out.skip:
                    out.parts.append(kj + b":" + _UNCHANGED)
                return False
        sub = _Out()
        out.parts.append((kj, sub))
        if deferred is not None and depth >= 2:
            node.children[key] = old  # replaced once the deferred walk is done
            deferred.append((value, old, depth, (*path, key), sub, node, key, text))
            return False
        child = self._walk(value, old, depth, (*path, key), sub, deferred)
        child.text = text
        node.children[key] = child
        return child.moving

    def _other(
        self,
        node: Node,
        key: str,
        kj: bytes,
        value: Any,
        previous: Any,
        depth: int,
        path: tuple[str, ...],
        out: _Out,
        deferred: list[_Deferred] | None,
    ) -> bool:
        """A leaf of another type (or an object JSON writes as an object): whether it moves."""
        fragment = json_fragment(value)
        if _is_int(fragment):  # numpy integers...: integers, as they read
            number = int(fragment)
            if type(previous) is tuple:
                before, step = previous
                if out.skip and number == before + step:
                    node.children[key] = (number, step)
                    return step != 0
                step = number - before
            else:
                step = 0
            node.children[key] = (number, step)
            out.parts.append(kj + b":" + fragment)
            return step != 0
        if fragment[:1] == b'"':  # a str subclass...: a text, as it reads
            text = orjson.loads(fragment)
            node.children[key] = text
            if text != previous or type(previous) is not str or not out.skip:
                out.parts.append(kj + b":" + self._text(text, previous, (*path, key)))
            return False
        marker = False
        if fragment[:1] == b"{" and (depth < MAX_DEPTH or fragment[:3] == b'{"$'):
            decoded = orjson.loads(fragment)
            marker = _is_marker(decoded)
            if not marker and depth < MAX_DEPTH:  # read back as a container: write it so
                return self._container(node, key, kj, decoded, previous, depth, path, out, deferred)
        node.children[key] = fragment
        if fragment != previous or not out.skip:
            stored = self._changed(fragment, previous)
            wrap = marker and stored is fragment
            out.parts.append(kj + b":" + (b'{"$l":' + stored + b"}" if wrap else stored))
        return False

    def _remember(self, path: tuple[str, ...], text: str) -> int | None:
        if len(text) > HISTORY_CHARS:
            return None
        history = self._history.get(path)
        if history is None:
            history = self._history[path] = TextHistory()
        return history.remember(text)

    def _text(self, value: str, previous: Any, path: tuple[str, ...]) -> bytes:
        number = self._remember(path, value)
        if number is not None:
            return b'{"$h":%d}' % number
        if len(value) >= REF_MIN:
            target = self._refs.get(id(value))
            if target is not None:
                return b'{"$r":' + orjson.dumps(target) + b"}"
            self._refs[id(value)] = path
        if type(previous) is str and len(value) >= EDIT_MIN:
            stored = _text_edit(previous, value, self._actions)
            if stored is not None:
                return stored
        return orjson.dumps(value)

    def _changed(self, fragment: bytes, previous: Any) -> bytes:
        if len(fragment) >= EDIT_MIN:
            before = previous.fragment if type(previous) is _Array else previous
            if type(before) is bytes:
                stored = bytes_edit(before, fragment, self._actions)
                if stored is not None:
                    return stored
        return fragment


def whole(value: Mapping[str, Any], actions: bytes) -> bytes:
    """The stored text of a turn stored whole, ``{"$w": 1, ...}``: its JSON as written (one
    encode in C), or, when the value holds an object that would read as a marker, the first turn
    of a new :class:`ChangeWriter` (which stores such objects as ``{"$l": ...}``)."""
    text = json_fragment(value) if isinstance(value, Mapping) else b""
    if not text.startswith(b"{"):
        raise TypeError(f"a column value must be a mapping, got {type(value).__name__}")
    if b'"$' in text:  # a key or a text that starts with "$": let a writer sort it out
        return ChangeWriter().encode(value, actions)
    return b'{"$w":1' + (b"," + text[1:] if len(text) > 2 else b"}")


def _serialize(out: _Out) -> bytes:
    items = out.parts
    if any(type(part) is tuple for part in items):
        items = []
        for part in out.parts:
            if type(part) is tuple:
                kj, sub = part
                if sub.patch and not sub.parts:  # nothing but predictions: nothing to store
                    if out.skip:
                        continue
                    part = kj + b":" + _UNCHANGED
                else:
                    part = kj + b":" + _serialize(sub)
            items.append(part)
    if out.new:
        return b'{"$n":1,' + b",".join(items) + b"}" if items else b'{"$n":1}'
    return b"{" + b",".join(items) + b"}"


__all__ = [
    "HISTORY_CHARS",
    "HISTORY_SIZE",
    "MARKERS",
    "MAX_DEPTH",
    "REF_MIN",
    "ChangeWriter",
    "Node",
    "TextHistory",
    "json_fragment",
    "key_json",
    "whole",
]
