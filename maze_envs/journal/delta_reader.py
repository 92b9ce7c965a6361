"""Reading a column of a schema version 5 journal (the format is :mod:`maze_envs.journal.delta`'s):
each turn's full JSON text, or the values of a few keys.

The reader keeps the previous turn's tree and changes it in place: a merge touches only the
keys it lists and the integers that move on by themselves (each container remembers which of
its keys move), so a turn costs what changed in it, not the size of the observations. The JSON
text of every value and container is made once and kept while it is unchanged. A reader made
with ``keep`` applies the changes of those keys of each agent's value only.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import orjson

from maze_envs.journal.delta import (
    FROM_ACTIONS,
    LITERAL,
    MAX_DEPTH,
    MERGE,
    NEW,
    REF,
    SLIDE,
    TEXT_EDIT,
    json_fragment,
)

_PENDING: Final = object()


class Tree:
    """A container of the reader (the column, an agent's value): keys in order, each key's
    value (a text, an ``(integer, step)`` pair, a value's JSON, an :class:`Object`, a
    :class:`Tree`; absent for a key a reader with ``keep`` skips), each value's JSON once made,
    the keys that move on by themselves, and the container's JSON once made."""

    __slots__ = ("frags", "keys", "kids", "movers", "names", "text")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.names = [orjson.dumps(key) + b":" for key in keys]  # each key's JSON and ":"
        self.kids: dict[str, Any] = {}
        self.frags: dict[str, bytes] = {}
        self.movers: set[str] = set()
        self.text: bytes | None = None


class Object:
    """An object value holding stored markers (references, edits): its values, its JSON once
    made."""

    __slots__ = ("kids", "text")

    def __init__(self, kids: dict[str, Any]) -> None:
        self.kids = kids
        self.text: bytes | None = None


def _fragment(child: Any) -> bytes:
    kind = type(child)
    if kind is bytes:
        return child
    if kind is str:
        return orjson.dumps(child)
    if kind is tuple:
        return b"%d" % child[0]
    if kind is Tree:
        return tree_text(child)
    if child.text is None:
        child.text = (
            b"{"
            + b",".join(orjson.dumps(k) + b":" + _fragment(v) for k, v in child.kids.items())
            + b"}"
        )
    return child.text


def tree_text(node: Tree) -> bytes:
    """The JSON text of a container (made once while it is unchanged)."""
    if node.text is None:
        kids, frags = node.kids, node.frags
        pieces = []
        for key, name in zip(node.keys, node.names):  # noqa: B905 (same length)
            fragment = frags.get(key)
            if fragment is None:
                fragment = frags[key] = _fragment(kids[key])
            pieces.append(name + fragment)
        node.text = b"{" + b",".join(pieces) + b"}"
    return node.text


def value_of(child: Any) -> Any:
    """The Python value of a value or container (what ``orjson.loads`` makes of its JSON: new
    lists and dicts every call)."""
    kind = type(child)
    if kind is str:
        return child
    if kind is tuple:
        return child[0]
    if kind is bytes:
        return orjson.loads(child)
    if kind is Tree:
        return {key: value_of(child.kids[key]) for key in child.keys}
    return {key: value_of(item) for key, item in child.kids.items()}


def _advance(node: Tree, keys: Collection[str]) -> None:
    """Move on the values of ``keys`` (integers by their steps, containers by their movers)."""
    kids, frags = node.kids, node.frags
    for key in keys:
        child = kids[key]
        if type(child) is tuple:
            kids[key] = (child[0] + child[1], child[1])
        else:
            _advance(child, child.movers)
        frags.pop(key, None)
    node.text = None


def _range(op: Any, size: int) -> tuple[int, int]:
    if type(op) is not list or not 1 <= len(op) <= 2:
        raise ValueError(f"a text edit op {op!r} is neither a text nor [start] or [start, end]")
    start = op[0]
    end = op[1] if len(op) == 2 else size
    if not (type(start) is int and type(end) is int and 0 <= start <= end <= size):
        raise ValueError(f"a text edit copies {op} of a text of length {size}")
    return start, end


def apply_text_edit(ops: Any, previous: Any, actions: Any = None) -> str:
    """The text an ``{"$s": ops}`` edit makes of ``previous`` (``actions``: this turn's decoded
    actions, whose texts an op may name); ``ValueError`` if it cannot."""
    if type(previous) is not str or type(ops) is not list:
        raise ValueError("a text edit of something that was not a text")
    pieces = []
    for op in ops:
        kind = type(op)
        if kind is str:
            pieces.append(op)
        elif kind is dict:
            pieces.append(_action_text(op.get(FROM_ACTIONS), actions))
        else:
            start, end = _range(op, len(previous))
            pieces.append(previous[start:end])
    return "".join(pieces)


def _action_text(path: Any, actions: Any) -> str:
    """The text at ``path`` of this turn's actions (``ValueError`` when there is none)."""
    node = actions
    if type(path) is not list:
        raise ValueError(f"a text of the actions is named by a path, not {path!r}")
    for name in path:
        if type(node) is dict and type(name) is str:
            node = node.get(name)
        elif type(node) is list and type(name) is int and 0 <= name < len(node):
            node = node[name]
        else:
            node = None
            break
    if type(node) is not str:
        raise ValueError(f"the actions hold no text at {path}")
    return node


def apply_merge(body: Any, previous: Any) -> bytes:
    """The object a ``{"$m": {key: value}}`` item makes of the previous object's JSON."""
    if type(previous) is bytes and previous[:1] == b"{":
        values = orjson.loads(previous)
    elif type(previous) is Object:
        values = value_of(previous)
    else:
        raise ValueError("an object merged where no object was")
    if type(body) is not dict or not body.keys() <= values.keys():
        raise ValueError(f"a merge lists keys the object does not hold: {body!r}")
    values.update(body)
    return orjson.dumps(values)


def apply_slide(body: Any, previous: Any) -> bytes:
    """The array a ``{"$t": [k, element, ...]}`` item makes of the previous array's JSON."""
    values = orjson.loads(previous) if type(previous) is bytes else None
    if type(values) is not list or type(body) is not list or not body:
        raise ValueError("an array moved on where no array was")
    count = body[0]
    if type(count) is not int or not 0 <= count <= len(values):
        raise ValueError(f"an array of {len(values)} elements cannot drop {count!r}")
    return orjson.dumps(values[count:] + body[1:])


class SkippedKeyError(ValueError):
    """A reader that keeps a few keys met a reference to a text under a key it skipped."""


# A reference waiting for the whole turn: (the container, the key, the path it names)
_References = list[tuple[Any, str, Any]]


class DeltaReader:
    """Rebuilds one column of one game, turn after turn, as full JSON text (:meth:`text`) or as
    Python values (:meth:`values`); each turn goes through exactly one of them.

    ``keep``: rebuild only these keys of each agent's value (the others are skipped, never
    rebuilt). A stored reference from a kept text to a skipped one raises
    :class:`SkippedKeyError`: the game must then be read again from its first turn without
    ``keep``.
    """

    def __init__(self, keep: Collection[str] | None = None) -> None:
        self._root: Tree | None = None
        self._keep = None if keep is None else frozenset(keep)
        self._actions: Any = None  # this turn's decoded actions

    def reset(self) -> None:
        """Forget the previous turn (the next item is read without one: a stream starts)."""
        self._root = None

    def text(self, stored: bytes | str, actions: Any = None) -> bytes:
        """This turn's full JSON text; ``ValueError`` when the stored item cannot be read.

        ``actions``: this turn's decoded actions (texts a text edit names)."""
        return tree_text(self.read(stored, actions))

    def values(
        self, stored: bytes | str, keys: Collection[str] | None = None, actions: Any = None
    ) -> dict[str, Any]:
        """This turn's value (``orjson.loads`` of :meth:`text`'s text), made without JSON text.

        ``keys``: keep only these keys of each agent's value (an agent's value that is not an
        object is kept whole); None keeps everything. ``ValueError`` as :meth:`text`.
        """
        root = self.read(stored, actions)
        if keys is None:
            return value_of(root)
        out: dict[str, Any] = {}
        for agent in root.keys:
            child = root.kids[agent]
            if type(child) is Tree:
                kids = child.kids
                out[agent] = {key: value_of(kids[key]) for key in keys if key in kids}
            else:
                out[agent] = value_of(child)
        return out

    def read(self, stored: bytes | str, actions: Any = None) -> Tree:
        """Apply this turn's stored item (``actions``: this turn's decoded actions); the turn's
        tree (``ValueError`` if it cannot)."""
        self._actions = actions
        try:
            item = orjson.loads(stored)
        except orjson.JSONDecodeError as exc:
            self._root = None
            raise ValueError(f"not valid JSON ({exc})") from None
        refs: _References = []
        try:
            root = self._container(item, self._root, 0, refs)
            for owner, key, target in refs:
                keep = self._keep
                if keep is not None and len(target) > 1 and target[1] not in keep:
                    raise SkippedKeyError(f"a reference to {target}, which this reader skips")
                owner.kids[key] = _target(root, target)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            self._root = None
            raise ValueError(
                f"cannot apply the stored changes ({type(exc).__name__}: {exc})"
            ) from None
        except ValueError:
            self._root = None
            raise
        self._root = root
        return root

    def _container(self, item: Any, old: Any, depth: int, refs: _References) -> Tree:
        """A container (the column, an agent's value) from its item: new or merged."""
        if type(item) is not dict:
            raise ValueError(f"a container's item is an object, not {type(item).__name__}")
        if len(item) == 1 and NEW in item:
            return self._new(item[NEW], old.kids if type(old) is Tree else {}, depth, refs)
        if type(old) is not Tree:
            return self._new(item, {}, depth, refs)
        keep = self._keep if depth == 1 else None
        kids, frags = old.kids, old.frags
        movers = old.movers
        if movers:
            unlisted = movers.difference(item)
            if unlisted:
                _advance(old, unlisted)
        old.text = None
        for key, sub in item.items():
            if keep is not None and key not in keep:
                continue  # (a reader that keeps a few keys does not check the others)
            if key not in kids:
                raise ValueError(f"a merge lists {key!r}, which the container does not hold")
            child = self._child(sub, kids[key], depth + 1, refs, True, old, key)
            kids[key] = child
            frags.pop(key, None)
            if (type(child) is tuple and child[1]) or (type(child) is Tree and child.movers):
                movers.add(key)
            else:
                movers.discard(key)
        return old

    def _new(self, item: Any, olds: dict[str, Any], depth: int, refs: _References) -> Tree:
        if type(item) is not dict:
            raise ValueError(f"a new container is an object, not {type(item).__name__}")
        node = Tree(tuple(item))
        keep = self._keep if depth == 1 else None
        kids = node.kids
        for key, sub in item.items():
            if keep is not None and key not in keep:
                continue
            child = self._child(sub, olds.get(key), depth + 1, refs, False, node, key)
            kids[key] = child
            if type(child) is Tree and child.movers:
                node.movers.add(key)
        return node

    def _child(
        self,
        item: Any,
        old: Any,
        depth: int,
        refs: _References,
        merge: bool,
        owner: Any,
        key: str,
    ) -> Any:
        """The value an item makes of ``old`` at ``depth`` (``merge``: listed in a merge, where
        an integer keeps its step)."""
        kind = type(item)
        if kind is int:
            return (item, item - old[0] if merge and type(old) is tuple else 0)
        if kind is str:
            return item
        if kind is not dict:
            return json_fragment(item)
        if len(item) == 1:
            marker, body = next(iter(item.items()))
            if marker == TEXT_EDIT:
                return apply_text_edit(body, old, self._actions)
            if marker == MERGE:
                return apply_merge(body, old)
            if marker == SLIDE:
                return apply_slide(body, old)
            if marker == REF:
                if type(body) is not list:
                    raise ValueError(f"a reference names a path, not {body!r}")
                refs.append((owner, key, body))
                return _PENDING
            if marker == LITERAL:
                return body if type(body) is str else json_fragment(body)
        if depth <= 1:
            return self._container(item, old, depth, refs)
        fragment = json_fragment(item)
        if depth >= MAX_DEPTH or b'"$' not in fragment:
            return fragment
        return self._object(item, old, depth, refs)

    def _object(self, item: dict[str, Any], old: Any, depth: int, refs: _References) -> Object:
        """An object holding stored markers, read value by value."""
        if type(old) is Object:
            olds = old.kids
        elif type(old) is bytes and old[:1] == b"{":
            olds = orjson.loads(old)  # (the previous texts, for edits)
        elif type(old) is dict:  # an object inside such a decoded one
            olds = old
        else:
            olds = {}
        node = Object({})
        kids = node.kids
        for key, sub in item.items():
            kids[key] = self._child(sub, olds.get(key), depth + 1, refs, False, node, key)
        return node


def _target(root: Tree, path: list[Any]) -> str:
    node: Any = root
    for name in path:
        kind = type(node)
        if kind is bytes and node[:1] == b"{":  # an object stored whole (its JSON)
            node, kind = orjson.loads(node), dict
        if kind is Tree or kind is Object:
            node = node.kids[name]
        elif kind is dict:
            node = node[name]
        else:
            raise ValueError(f"the reference {path} does not name a text of this turn")
    if type(node) is not str:
        raise ValueError(f"the reference {path} does not name a text of this turn")
    return node


__all__ = [
    "DeltaReader",
    "Object",
    "SkippedKeyError",
    "Tree",
    "apply_slide",
    "apply_text_edit",
    "tree_text",
    "value_of",
]
