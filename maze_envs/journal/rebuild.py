"""Rebuilding a column of a schema version 4 journal: each turn's full JSON text from what was
stored (the format is :mod:`maze_envs.journal.changes`'s)."""

from __future__ import annotations

from typing import Any, Final

import orjson

from maze_envs.journal.changes import (
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
    Node,
    TextHistory,
    json_fragment,
    key_json,
)
from maze_envs.journal.edits import apply_bytes_edit, apply_text_edit

_PENDING: Final = object()
# (the children holding a reference, its path, the path it names)
_References = list[tuple[dict[str, Any], tuple[str, ...], Any]]


def _advance(value: Any) -> Any:
    """A value a patch does not list: its integers move on by their steps."""
    kind = type(value)
    if kind is tuple:
        return (value[0] + value[1], value[1]) if value[1] else value
    if kind is Node and value.moving:
        node = Node({key: _advance(child) for key, child in value.children.items()})
        node.keys, node.moving = value.keys, True
        return node
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


def _literal(value: Any, previous: Any) -> Any:
    kind = type(value)
    if kind is int:
        return (value, value - previous[0] if type(previous) is tuple else 0)
    if kind is str:
        return value
    return json_fragment(value)


class ChangeReader:
    """Rebuilds one column of one game, turn after turn, as full JSON text."""

    def __init__(self) -> None:
        self._root: Node | None = None
        self._history: dict[tuple[str, ...], TextHistory] = {}

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
            if type(root) is not Node:
                raise ValueError("the stored value is not a JSON object")
            for children, path, target in refs:
                text = children[path[-1]] = _target(root, target)
                self._remember(path, text)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"cannot apply the stored changes ({type(exc).__name__}: {exc})"
            ) from None
        self._root = root
        return _text(root)

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
        if type(old) is Node and NEW not in item:
            return self._patch(item, old, depth, actions, refs, path)
        item.pop(NEW, None)
        node = Node({})
        node.keys = tuple(item)
        olds = old.children if type(old) is Node else {}
        for name, sub in item.items():
            node.children[name] = self._item(
                sub, olds.get(name), depth + 1, actions, refs, node.children, (*path, name)
            )
        node.moving = _moving(node)
        return node

    def _patch(
        self,
        body: Any,
        old: Any,
        depth: int,
        actions: bytes,
        refs: _References,
        path: tuple[str, ...],
    ) -> Any:
        if not body:
            return _advance(old)
        if not body.keys() <= old.children.keys():
            raise ValueError(f"a patch adds keys {sorted(body.keys() - old.children.keys())}")
        node = Node({})
        node.keys = old.keys
        children = node.children
        for name, previous in old.children.items():
            if name in body:
                children[name] = self._item(
                    body[name], previous, depth + 1, actions, refs, children, (*path, name)
                )
            else:
                children[name] = _advance(previous)
        node.moving = _moving(node)
        return node


def _target(root: Node, path: list[Any]) -> str:
    node: Any = root
    for name in path[:-1]:
        node = node.children[name]
    leaf = node.children[path[-1]]
    if type(leaf) is not str:
        raise ValueError(f"the reference {path} does not name a text of this turn")
    return leaf


def _moving(node: Node) -> bool:
    for child in node.children.values():
        kind = type(child)
        if (kind is tuple and child[1]) or (kind is Node and child.moving):
            return True
    return False


__all__ = ["ChangeReader"]
