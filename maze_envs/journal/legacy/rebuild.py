"""Rebuilding a column of a schema version 4 journal (read, no longer written): each turn's full
JSON text from what was stored (the format is :mod:`.changes`'s), or its values directly.

The reader keeps the previous turn's tree and builds each turn's tree copy-on-write: a patch
copies its container's children (one dict copy in C) and touches only the keys it lists and
the integers that move on by themselves (each container remembers which children move), so the
cost of a turn follows what changed, not the size of the observation. The JSON text of a
container is made once and kept while the container is unchanged; :meth:`ChangeReader.values`
gives the turn as Python values without making JSON text at all (and, for reading a few keys of
each agent's observation, only those).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import orjson

from maze_envs.journal.legacy.changes import (
    EDIT,
    HISTORY,
    HISTORY_CHARS,
    LITERAL,
    MARKERS,
    MAX_DEPTH,
    NEW,
    REF,
    TEXT_EDIT,
    WHOLE,
    TextHistory,
    json_fragment,
    key_json,
)
from maze_envs.journal.legacy.edits import apply_bytes_edit, apply_text_edit

_PENDING: Final = object()
# (the children holding a reference, its path, the path it names)
_References = list[tuple[dict[str, Any], tuple[str, ...], Any]]


class Tree:
    """A container of the reader: children by key (in order), the keys of the children that
    move on by themselves (an integer with a non-zero step, a container holding one), and its
    JSON text once made. A tree is never changed once built (a later turn copies it)."""

    __slots__ = ("children", "movers", "text")

    def __init__(self, children: dict[str, Any], movers: tuple[str, ...]) -> None:
        self.children = children
        self.movers = movers
        self.text: bytes | None = None


def _moves(child: Any) -> bool:
    kind = type(child)
    return bool((kind is tuple and child[1]) or (kind is Tree and child.movers))


def _advance(value: Any) -> Any:
    """A value a patch does not list: its integers move on by their steps."""
    kind = type(value)
    if kind is tuple:
        return (value[0] + value[1], value[1]) if value[1] else value
    if kind is Tree and value.movers:
        children = value.children.copy()
        for name in value.movers:
            children[name] = _advance(children[name])
        return Tree(children, value.movers)
    return value


def _text(value: Any) -> bytes:
    kind = type(value)
    if kind is bytes:
        return value
    if kind is str:
        return orjson.dumps(value)
    if kind is tuple:
        return b"%d" % value[0]
    if value.text is None:
        value.text = (
            b"{"
            + b",".join(
                key_json(key) + b":" + _text(child) for key, child in value.children.items()
            )
            + b"}"
        )
    return value.text


def _value(value: Any) -> Any:
    """The Python value of a tree or leaf (what ``orjson.loads`` makes of its JSON text)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is tuple:
        return value[0]
    if kind is bytes:
        return orjson.loads(value)
    out = {}
    for key, child in value.children.items():  # the leaves inline: most children are leaves
        kind = type(child)
        if kind is str:
            out[key] = child
        elif kind is tuple:
            out[key] = child[0]
        elif kind is bytes:
            out[key] = orjson.loads(child)
        else:
            out[key] = _value(child)
    return out


def _literal(value: Any, previous: Any) -> Any:
    kind = type(value)
    if kind is int:
        return (value, value - previous[0] if type(previous) is tuple else 0)
    if kind is str:
        return value
    return json_fragment(value)


class SkippedKeyError(ValueError):
    """A reader that keeps a few keys met a reference to a text under a key it skipped."""


class ChangeReader:
    """Rebuilds one column of one game, turn after turn, as full JSON text (:meth:`decode`)
    or as Python values (:meth:`values`); each turn goes through exactly one of them.

    ``keep``: rebuild only these keys of each agent's value (the others are skipped, never
    rebuilt; :meth:`decode` then gives the JSON of what was kept). A stored reference from a
    kept text to a skipped one raises :class:`SkippedKeyError`: the game must then be read
    again from its first turn without ``keep``.
    """

    def __init__(self, keep: Collection[str] | None = None) -> None:
        self._root: Tree | None = None
        self._history: dict[tuple[str, ...], TextHistory] = {}
        self._keep = None if keep is None else frozenset(keep)

    def _remember(self, path: tuple[str, ...], text: str) -> None:
        if len(text) <= HISTORY_CHARS:
            history = self._history.get(path)
            if history is None:
                history = self._history[path] = TextHistory()
            history.remember(text)

    def decode(self, stored: str | bytes, actions: bytes) -> bytes:
        """This turn's full JSON text; ``ValueError`` when the stored item cannot be read.

        ``actions``: this turn's stored actions text (edits may copy from it).
        """
        return _text(self._read(stored, actions))

    def values(
        self, stored: str | bytes, actions: bytes, keys: Collection[str] | None = None
    ) -> dict[str, Any]:
        """This turn's value (``orjson.loads`` of :meth:`decode`'s text), made without JSON text.

        ``keys``: keep only these keys of each agent's value (an agent's value that is not an
        object is kept whole); None keeps everything. ``ValueError`` as :meth:`decode`.
        """
        root = self._read(stored, actions)
        if keys is None:
            return {agent: _value(child) for agent, child in root.children.items()}
        out: dict[str, Any] = {}
        for agent, child in root.children.items():
            if type(child) is Tree:
                children = child.children
                out[agent] = {key: _value(children[key]) for key in keys if key in children}
            else:
                out[agent] = _value(child)
        return out

    def _read(self, stored: str | bytes, actions: bytes) -> Tree:
        try:
            item = orjson.loads(stored)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
        refs: _References = []
        old = self._root
        if type(item) is dict and WHOLE in item:  # stored whole: read without the previous
            del item[WHOLE]
            old = None
            self._history.clear()
        try:
            root = self._item(item, old, 0, actions, refs, None, ())
            if type(root) is not Tree:
                raise ValueError("the stored value is not a JSON object")
            for children, path, target in refs:
                if self._keep is not None and len(target) > 1 and target[1] not in self._keep:
                    raise SkippedKeyError(f"a reference to {target}, which this reader skips")
                text = children[path[-1]] = _target(root, target)
                self._remember(path, text)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"cannot apply the stored changes ({type(exc).__name__}: {exc})"
            ) from None
        self._root = root
        return root

    def _item(
        self,
        item: Any,
        old: Any,
        depth: int,
        actions: bytes,
        refs: _References,
        children: dict[str, Any] | None,
        path: tuple[str, ...],
    ) -> Any:
        if type(item) is not dict:
            value = _literal(item, old)
            if type(value) is str:
                self._remember(path, value)
            return value
        if len(item) == 1:
            marker, body = next(iter(item.items()))
            if marker == TEXT_EDIT:
                text = apply_text_edit(body, old, actions)
                self._remember(path, text)
                return text
            if marker == HISTORY:
                if type(body) is not int:
                    raise ValueError(f"a text seen before is named by a number, not {body!r}")
                return self._history[path].texts[body]
            if marker == EDIT:
                return apply_bytes_edit(body, old, actions)
            if marker == REF and children is not None and type(body) is list:
                refs.append((children, path, body))
                return _PENDING
            if marker == LITERAL:
                return _literal(body, old)
            if marker in MARKERS and marker != NEW:
                raise ValueError(f"{marker} where it cannot be")
        if depth >= MAX_DEPTH:
            return json_fragment(item)
        if type(old) is Tree and NEW not in item:
            return self._patch(item, old, depth, actions, refs, path)
        item.pop(NEW, None)
        olds = old.children if type(old) is Tree else {}
        made: dict[str, Any] = {}
        keep = self._keep if depth == 1 else None
        for name, sub in item.items():
            if keep is not None and name not in keep:
                continue
            made[name] = self._item(
                sub, olds.get(name), depth + 1, actions, refs, made, (*path, name)
            )
        return Tree(made, tuple(name for name, child in made.items() if _moves(child)))

    def _patch(
        self,
        body: dict[str, Any],
        old: Tree,
        depth: int,
        actions: bytes,
        refs: _References,
        path: tuple[str, ...],
    ) -> Any:
        if not body:
            return _advance(old)
        olds = old.children
        if depth == 1 and self._keep is not None:
            body = {name: sub for name, sub in body.items() if name in self._keep}
            if not body:
                return _advance(old)
        if not body.keys() <= olds.keys():
            raise ValueError(f"a patch adds keys {sorted(body.keys() - olds.keys())}")
        children = olds.copy()
        for name in old.movers:
            if name not in body:
                children[name] = _advance(children[name])
        for name, sub in body.items():
            children[name] = self._item(
                sub, olds[name], depth + 1, actions, refs, children, (*path, name)
            )
        movers = tuple(name for name in old.movers if name not in body) + tuple(
            name for name in body if _moves(children[name])
        )
        return Tree(children, movers)


def _target(root: Tree, path: list[Any]) -> str:
    node: Any = root
    for name in path[:-1]:
        node = node.children[name]
    leaf = node.children[path[-1]]
    if type(leaf) is not str:
        raise ValueError(f"the reference {path} does not name a text of this turn")
    return leaf


__all__ = ["ChangeReader", "SkippedKeyError", "Tree"]
