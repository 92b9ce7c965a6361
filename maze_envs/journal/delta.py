"""Schema version 5: a turn's observations and events stored as what changed since the turn before.

A column value (``{agent: observation}``, ``{agent: events}``) is a tree. The column (depth 0)
and each agent's value that is a JSON object (depth 1) are *containers*; the values of an
agent's keys (depth 2) and everything inside them are values. A turn's stored *item* for the
column is read against the previous turn's tree of the same game and column (none at a game's
first turn, and none after a turn that starts a new stream, :mod:`.body`):

``{key: item, ...}`` where the previous value is a container (a *merge*)
    The previous container with each listed key's value replaced by its item, read against
    that key's previous value. A key not listed keeps its value, except that an *integer*
    directly in the container moves on by the step it last took (``turn`` 41 after 39 and 40),
    so counters that tick every turn cost nothing: an agent whose only changes are such
    counters is not listed at all (``{}``: nothing changed).
``{"$n": {key: item, ...}}`` (or a plain object where nothing was)
    A new container with exactly these keys in this order (a game's first turn, keys that came
    or went). Its items are read against the previous values under the same keys for the
    markers below; its integers have step 0.
``{"$s": [op, ...]}`` (a text edit)
    A text made of its ops: ``[a, b]`` copies characters ``a:b`` of the previous text at this
    place, ``[a]`` copies from ``a`` to its end, a string is itself, ``{"a": [key, ...]}`` is
    the text at that path of this turn's actions (a notebook that lost its oldest line and
    gained the note the agent wrote: ``{"$s":[[54],{"a":["A","notebook","append"]},"\\n"]}``,
    the same stored text turn after turn, which the stream stores in a couple of bytes).
``{"$m": {key: value, ...}}`` (an object below an agent's top level, merged)
    The previous object with these keys' values replaced by these (a dict of results of which
    one changed).
``{"$t": [k, element, ...]}`` (an array moved on)
    The previous array at this place without its first ``k`` elements, followed by these
    elements: a trail that dropped its oldest cell and gained the last one.
``{"$r": [key, ...]}`` (a reference)
    The same text as the text at that path of this turn's tree, stored once there: a
    teammate's notebook shown on a shared cell.
``{"$l": value}``
    The value itself (an object that would read as one of these markers).
any other JSON value
    Itself; an object below an agent's top level is read whole, its values by these rules
    (an object :data:`MAX_DEPTH` levels down is a plain value). An integer listed in a merge
    has as its step its change from the previous integer of that key (0 when there was none).

The items are compact JSON; a turn's items, actions, events and decisions are then compressed
together in the game's deflate stream (:mod:`.body`), which stores what repeats from the last
few turns (a dict of results that changed in one field, a note an observation shares with the
action, a message every teammate hears) as back references, so the writer looks no deeper than
an agent's keys. Reading (:class:`~.delta_reader.DeltaReader`) applies these rules turn after
turn and gives back each turn's full JSON text, byte for byte what
:func:`~.format.encode_json_bytes` makes of the value, or the values of a few keys.

**Change hints.** An environment that knows what changed in a turn hands the writer a *hint*:
for each agent, the keys of its value that may have changed since the previous turn
(``{agent: keys}``; an agent left out is compared key by key). The writer then writes those
keys only, their plain values in one encode (in C) instead of comparing each with its previous
value in Python, which is most of the cost of a turn. A key not hinted must be exactly as it
was: with ``MAZE_ENVS_CHECK_HINTS=1`` in the environment (the test suite sets it) every turn is
also compared key by key and a key that changed without being hinted raises
:class:`WrongHintError`, so a wrong hint fails a test, never a journal.

Example:
    >>> from maze_envs.journal.delta_reader import DeltaReader
    >>> writer, reader = DeltaWriter(), DeltaReader()
    >>> turns = [{"A": {"turn": t, "notebook": "a note; " * (t + 20)}} for t in range(3)]
    >>> stored = [writer.encode(value) for value in turns]
    >>> stored[2]
    b'{"A":{"notebook":{"$s":[[0],"a note; "]}}}'
    >>> [orjson.loads(reader.text(text)) == value for text, value in zip(stored, turns)]
    [True, True, True]
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from operator import attrgetter, itemgetter
from typing import Any, Final

import numpy as np
import orjson

from maze_envs.journal.format import json_default
from maze_envs.journal.text_edit import action_texts, text_edit

NEW: Final = "$n"
MERGE: Final = "$m"
TEXT_EDIT: Final = "$s"
SLIDE: Final = "$t"
REF: Final = "$r"
LITERAL: Final = "$l"
#: Objects with a key among these are stored as ``{"$l": value}``.
MARKERS: Final = frozenset({NEW, MERGE, TEXT_EDIT, SLIDE, REF, LITERAL})
#: The key of a text edit's op that copies a text of this turn's actions.
FROM_ACTIONS: Final = "a"
#: Objects this many levels down (the column 0, an agent's value 1) are plain values.
MAX_DEPTH: Final = 4
#: A text this long or longer that is the very object of another text of the same turn (a
#: notebook shown to a teammate) is stored as a reference to it.
REF_MIN: Final = 64
#: A changed text this long or longer is stored as an edit of its previous version when that
#: is shorter.
EDIT_MIN: Final = 64
#: Integer arrays this long or longer are checked for having moved on by one element.
SLIDE_MIN: Final = 8
#: An agent's values encoded together longer than this are written one by one instead (they
#: hold a long text a reference or an edit stores shorter).
BULK_MAX: Final = 2048
#: The environment variable that makes every writer check every hint against a whole walk.
CHECK_HINTS_VARIABLE: Final = "MAZE_ENVS_CHECK_HINTS"

#: ``{agent: keys that may have changed}`` (see the module docstring).
Hint = Mapping[str, Collection[str]]

_OPTIONS: Final = orjson.OPT_SERIALIZE_NUMPY
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # the integers JSON readers (orjson) take exactly
_STALE: Final = object()  # a value written without being kept: compare it with nothing
# Values a hinted agent's keys are encoded together in one call when they hold (a text only
# when short; an object only when it holds no long text nor key that looks like a marker)
_BULK: Final = frozenset({np.ndarray, dict, list, float, bool, type(None), str})
# Immutable values a container of nothing else is compared by (a tuple compare in C)
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_NDIM: Final = attrgetter("ndim")


class WrongHintError(AssertionError):
    """An environment's change hint left out a key that changed (a bug of the environment)."""


def checking_hints() -> bool:
    """Whether writers check every hint (:data:`CHECK_HINTS_VARIABLE` is set and not ``0``)."""
    return os.environ.get(CHECK_HINTS_VARIABLE, "") not in ("", "0")


def json_fragment(value: Any) -> bytes:
    """The JSON of a value as the journal writes it (:func:`~.format.encode_json_bytes`)."""
    return orjson.dumps(value, default=json_default, option=_OPTIONS)


def _is_marker(value: Mapping[str, Any]) -> bool:
    return not MARKERS.isdisjoint(value)


def _key_json(key: Any) -> bytes:
    if type(key) is not str:
        raise TypeError(f"mapping keys must be strings to be stored, got {key!r}")
    return orjson.dumps(key)


class _Array:
    """An integer array of the writer that may move on by one element: its bytes (what the
    next turn's array is compared with)."""

    __slots__ = ("data", "dtype", "shape")

    def __init__(self, item: np.ndarray[Any, Any], data: bytes) -> None:
        self.dtype, self.shape, self.data = item.dtype, item.shape, data


class _Object:
    """An object value of the writer (below an agent's top level): its JSON, its keys' values
    where they are texts or objects (what edits and nested objects are read against), and, for
    an object of immutable scalars, its keys and values (what a merge is worked out from)."""

    __slots__ = ("fragment", "keys", "kids", "values")

    def __init__(
        self,
        fragment: bytes | None,
        kids: dict[str, Any],
        keys: tuple[str, ...] = (),
        values: tuple[Any, ...] | None = None,
    ) -> None:
        self.fragment, self.kids, self.keys, self.values = fragment, kids, keys, values


class Node:
    """A container of the writer (the column, an agent's value): its keys, each key's record
    (an ``(integer, step)`` pair, a text, an :class:`_Array`, an :class:`_Object`, a value's
    JSON, a :class:`Node`, or ``_STALE``), the keys of the integers that move on by
    themselves, and the hinted keys of each hint seen, in key order."""

    __slots__ = ("flat", "keys", "kids", "marked", "movers", "names", "orders")

    def __init__(self, keys: tuple[str, ...], kids: dict[str, Any]) -> None:
        self.keys = keys
        self.kids = kids
        self.names = {key: _key_json(key) + b":" for key in keys}  # each key's JSON and ":"
        self.movers: set[str] = set()
        self.orders: dict[Any, _Split | None] = {}
        self.flat: tuple[Any, ...] | None = None  # the values, when all are immutable scalars
        # a key that looks like a marker: a merge of it alone would read as one
        self.marked = any(type(key) is str and key[:1] == "$" for key in keys)

    def split(self, hinted: Collection[str]) -> _Split | None:
        """The hinted keys, split by how they are written (None when one of them is not a key
        of this container); worked out once per hint (a few keep coming back)."""
        try:
            return self.orders[hinted]
        except KeyError:
            pass
        except TypeError:  # an unhashable collection: worked out each time
            return self._split(hinted)
        found = self.orders[hinted] = self._split(hinted)
        return found

    def _split(self, hinted: Collection[str]) -> _Split | None:
        wanted = set(hinted)
        if not wanted <= self.kids.keys():
            return None
        ordered = [key for key in self.keys if key in wanted]
        # one by one: what was an integer, a text, an object or an array that may move on; the
        # rest in one
        kids = self.kids
        single = tuple(  # (an object too: a small one is merged into the previous one)
            key
            for key in ordered
            if type(kids[key]) in (tuple, str, _Array, _Object) or kids[key] is None
        )
        plain = tuple(key for key in ordered if key not in single)
        getter = itemgetter(*plain) if len(plain) > 1 else None
        return _Split(single, plain, getter, dict.fromkeys(plain, _STALE))


class _Split:
    """A hint's keys: written one by one, and written together (their getter, their records)."""

    __slots__ = ("getter", "plain", "single", "stale")

    def __init__(
        self,
        single: tuple[str, ...],
        plain: tuple[str, ...],
        getter: Any,
        stale: dict[str, Any],
    ) -> None:
        self.single, self.plain, self.getter, self.stale = single, plain, getter, stale


class _Slot:
    """An item whose object is written once every agent's top level is (so that a reference
    from inside it finds the agents' own texts): filled in then."""

    __slots__ = ("text",)

    def __init__(self) -> None:
        self.text = b""


class _Parts:
    """An object item made of parts, joined once every slot in it is filled."""

    __slots__ = ("new", "parts")

    def __init__(self, parts: list[Any], new: bool = False) -> None:
        self.parts, self.new = parts, new


# (value, previous record, depth, path, the record's owner, key, the slot to fill)
_Deferred = tuple[Any, Any, int, tuple[str, ...], dict[str, Any], str, _Slot]
# A part of an item: its bytes, or (the bytes before it, a slot or parts joined later)
_Part = bytes | tuple[bytes, _Slot | _Parts]


class DeltaWriter:
    """Encodes one column of one game, turn after turn (see the module docstring)."""

    def __init__(self, *, check_hints: bool | None = None) -> None:
        self._root: Node | None = None
        self._turn_refs: dict[int, tuple[str, ...]] = {}  # id(text) -> its path, this turn
        self._deferred: list[_Deferred] | None = None  # None: write objects at once
        self._check = checking_hints() if check_hints is None else check_hints
        self._seen: dict[str, dict[str, bytes]] = {}  # when checking hints: last turn's JSON
        self._actions: Mapping[str, Any] | None = None  # this turn's
        self._pieces: dict[str, bytes] | None = None  # their texts -> their paths' JSON

    def encode(
        self,
        value: Mapping[str, Any],
        hint: Hint | None = None,
        actions: Mapping[str, Any] | None = None,
    ) -> bytes:
        """This turn's stored item for ``value``; ``hint`` as in the module docstring;
        ``actions``: this turn's actions as stored (their texts are what a text edit may name).

        Raises ``TypeError`` for a value JSON cannot hold (the writer must then be dropped: its
        tree may be half updated) and :class:`WrongHintError` for a wrong hint when checking.
        """
        if not isinstance(value, Mapping):
            raise TypeError(f"a column value must be a mapping, got {type(value).__name__}")
        if self._check:
            self._check_hint(value, hint)
        keys = tuple(value)
        root = self._root
        first = root is None
        new = root is None or root.keys != keys
        if new:
            if any(type(key) is not str or key[:1] == "$" for key in keys):
                raise TypeError(f"agent names must be texts not starting with '$' (got {keys})")
            olds = root.kids if root is not None else {}
            root = Node(keys, {key: olds.get(key) for key in keys})
        assert root is not None
        kids = root.kids
        parts: list[_Part] = []
        deferred: list[_Deferred] = []
        self._turn_refs, self._deferred = {}, deferred
        self._actions, self._pieces = actions, None
        try:
            names = root.names
            for agent, item in value.items():
                previous = kids[agent]
                if type(item) is dict or isinstance(item, Mapping):
                    listed = None if hint is None or new else hint.get(agent)
                    stored = self._agent(item, previous, agent, listed, kids)
                else:
                    stored = self._value(item, previous, 1, (agent,), kids, agent, not new)
                if stored is not None:
                    parts.append(_part(names[agent], stored))
            self._deferred = None
            for item, previous, depth, path, owner, key, slot in deferred:
                slot.text = self._object(item, previous, depth, path, owner, key)
        finally:
            self._turn_refs, self._deferred = {}, None
            self._actions = self._pieces = None
        self._root = root
        item = _object_item(parts, new and not first)
        return item if isinstance(item, bytes) else _render(item)

    # -- an agent's value ----------------------------------------------------------------------

    def _agent(
        self,
        value: Mapping[str, Any],
        old: Any,
        agent: str,
        hinted: Collection[str] | None,
        owner: dict[str, Any],
    ) -> Any:
        keys = tuple(value)
        if type(old) is not Node or old.keys != keys or old.marked:  # a new container
            olds = old.kids if type(old) is Node else {}
            node = owner[agent] = Node(keys, {key: olds.get(key) for key in keys})
            kids, names = node.kids, node.names
            parts = []
            for key, item in value.items():
                stored = self._value(item, kids[key], 2, (agent, key), kids, key, False, node)
                parts.append(_part(names[key], stored))
            return _object_item(parts, type(old) is Node or node.marked)
        node = old
        split = node.split(hinted) if hinted is not None else None
        if split is not None:
            return self._hinted(value, node, agent, split)
        flat = node.flat
        values = tuple(value.values())
        if flat is not None and not node.movers:
            if values == flat:  # (in C: nothing changed)
                return None
            walk: Any = (
                (key, item)
                for key, item, before in zip(keys, values, flat)  # noqa: B905 (same keys)
                if item is not before
            )
        else:
            walk = value.items()
        node.flat = values if _SCALARS.issuperset(map(type, values)) else None
        # Compared key by key; written for speed (it runs for every agent every turn): what
        # did not change is skipped inline, without a call
        kids, names, refs = node.kids, node.names, self._turn_refs
        parts = []
        for key, item in walk:
            previous = kids[key]
            kind = type(item)
            if item is previous or (kind is str and type(previous) is str and item == previous):
                if kind is str and len(item) >= REF_MIN:
                    refs.setdefault(id(item), (agent, key))
                continue
            if kind is int and type(previous) is tuple and item == previous[0] + previous[1]:
                if previous[1]:
                    kids[key] = (item, previous[1])
                continue
            stored = self._value(item, previous, 2, (agent, key), kids, key, True, node)
            if stored is not None:
                parts.append(_part(names[key], stored))
        return _object_item(parts) if parts else None

    def _hinted(self, value: Mapping[str, Any], node: Node, agent: str, split: _Split) -> Any:
        """A hinted agent's merge: integers, texts and arrays that may move on one by one, the
        other values in one encode (written as they are: the stream stores a value that did not
        change in a few bytes)."""
        kids, names = node.kids, node.names
        node.flat = None
        parts: list[_Part] = []
        for key in split.single:
            item = value[key]
            previous = kids[key]
            if type(item) is int and type(previous) is tuple and item == previous[0] + previous[1]:
                if previous[1]:
                    kids[key] = (item, previous[1])
                continue
            stored = self._value(item, previous, 2, (agent, key), kids, key, True, node)
            if stored is not None:
                parts.append(_part(names[key], stored))
        if node.movers:
            for key in node.movers.difference(split.single):  # said unchanged: not as predicted
                stored = self._value(value[key], kids[key], 2, (agent, key), kids, key, True, node)
                if stored is not None:
                    parts.append(_part(names[key], stored))
        plain = split.plain
        if plain:
            values = split.getter(value) if split.getter is not None else (value[plain[0]],)
            kinds = set(map(type, values))
            text = None
            if kinds <= _BULK and (
                np.ndarray not in kinds
                or all(map(_NDIM, (v for v in values if type(v) is np.ndarray)))
            ):
                text = orjson.dumps(dict(zip(plain, values)), default=json_default, option=_OPTIONS)  # noqa: B905
                if len(text) > BULK_MAX or b'"$' in text:  # long or marker-like texts inside
                    text = None
            if text is not None:
                kids.update(split.stale)
                if node.movers:
                    node.movers.difference_update(plain)
                parts.append(text[1:-1])
            else:  # one by one, each against what the reader holds
                for key, item in zip(plain, values):  # noqa: B905 (same length)
                    stored = self._value(item, kids[key], 2, (agent, key), kids, key, True, node)
                    if stored is not None:
                        parts.append(_part(names[key], stored))
        return _object_item(parts) if parts else None

    # -- one value ----------------------------------------------------------------------------

    def _value(
        self,
        item: Any,
        previous: Any,
        depth: int,
        path: tuple[str, ...],
        owner: dict[str, Any],
        key: str,
        merge: bool,
        node: Node | None = None,
    ) -> Any:
        """The stored item of ``item`` (None: unchanged, in a merge; a :class:`_Slot` for an
        object written later), its record kept in ``owner[key]`` (``node``: the container,
        whose movers it updates)."""
        kind = type(item)
        if kind is int:
            if not _INT_MIN <= item <= _INT_MAX:
                raise TypeError(f"integer {item} does not fit in 64 bits")
            return self._integer(item, previous, owner, key, merge, node)
        if node is not None:
            node.movers.discard(key)
        if kind is str:
            if merge and (item is previous or (type(previous) is str and item == previous)):
                if len(item) >= REF_MIN:
                    self._turn_refs.setdefault(id(item), path)
                return None
            owner[key] = item
            return self._text(item, previous, path)
        if kind is np.ndarray and item.ndim:
            return self._array(item, previous, owner, key, merge)
        if kind is bool or item is None:
            if merge and previous is item:
                return None
            owner[key] = item
            return b"null" if item is None else b"true" if item else b"false"
        else:
            fragment = json_fragment(item)
            if kind is not dict and kind is not list:
                if _is_int(fragment):  # a numpy integer...: an integer, as it reads back
                    return self._integer(int(fragment), previous, owner, key, merge, node)
                if fragment[:1] == b'"':  # a str subclass...: a text
                    text = orjson.loads(fragment)
                    return self._value(text, previous, depth, path, owner, key, merge, node)
            if fragment[:1] == b"{" and depth < MAX_DEPTH:  # an object, read whole
                value = item if kind is dict else None
                return self._whole(fragment, value, previous, depth, path, owner, key, merge)
        if merge and type(previous) is bytes and previous == fragment:
            return None
        owner[key] = fragment
        if fragment[:2] == b'{"' and _is_marker(orjson.loads(fragment)):
            return b'{"$l":' + fragment + b"}"
        return fragment

    def _whole(
        self,
        fragment: bytes,
        value: dict[str, Any] | None,
        previous: Any,
        depth: int,
        path: tuple[str, ...],
        owner: dict[str, Any],
        key: str,
        merge: bool,
    ) -> Any:
        """An object below an agent's top level (``fragment``: its JSON; ``value``: the object,
        whose texts may be references to this turn's texts), read whole (or merged into the
        previous one, for an object of scalars)."""
        if merge and type(previous) is _Object and previous.fragment == fragment:
            return None
        if b'"$' in fragment:  # a key that may look like a marker: a plain value
            owner[key] = _Object(fragment, {})
            return b'{"$l":' + fragment + b"}"
        decoded = None
        if len(fragment) >= REF_MIN:
            decoded = value if value is not None else orjson.loads(fragment)
            if not _long(decoded):
                decoded = None
        if decoded is None:  # no long text: whole, or merged into the previous one
            values = None if value is None else tuple(value.values())
            if values is None or not _SCALARS.issuperset(map(type, values)):
                owner[key] = _Object(fragment, {})
                return fragment
            keys = tuple(value)  # type: ignore[arg-type]
            owner[key] = _Object(fragment, {}, keys, values)
            if (
                merge
                and type(previous) is _Object
                and previous.values is not None
                and previous.keys == keys
            ):
                changed = {
                    name: item
                    for name, item, before in zip(keys, values, previous.values)  # noqa: B905
                    if item is not before and item != before
                }
                if 0 < len(changed) < len(keys):
                    return b'{"$m":' + orjson.dumps(changed) + b"}"
            return fragment
        if self._deferred is None:
            return self._object(decoded, previous, depth, path, owner, key)
        slot = _Slot()  # filled once every agent's top level is written
        self._deferred.append((decoded, previous, depth, path, owner, key, slot))
        return slot

    def _integer(
        self,
        item: int,
        previous: Any,
        owner: dict[str, Any],
        key: str,
        merge: bool,
        node: Node | None,
    ) -> bytes | None:
        step = 0
        if merge and node is not None and type(previous) is tuple:
            before, step = previous
            if item == before + step:
                owner[key] = previous if not step else (item, step)
                return None
            step = item - before
        owner[key] = (item, step)
        if node is not None:
            if step:
                node.movers.add(key)
            else:
                node.movers.discard(key)
        return b"%d" % item

    def _array(
        self,
        item: np.ndarray[Any, Any],
        previous: Any,
        owner: dict[str, Any],
        key: str,
        merge: bool,
    ) -> bytes | None:
        data = item.tobytes()
        if (
            merge
            and type(previous) is _Array
            and previous.dtype is item.dtype
            and previous.shape == item.shape
        ):
            if previous.data == data:
                return None
            size = len(data) // item.shape[0]
            if data[:-size] == previous.data[size:]:  # moved on by one element
                owner[key] = _Array(item, data)
                return b'{"$t":[1,%s]}' % orjson.dumps(item[-1], option=_OPTIONS)
        fragment = orjson.dumps(item, default=json_default, option=_OPTIONS)
        if item.dtype.kind in "iub" and item.ndim <= 2 and item.shape[0] >= SLIDE_MIN:
            owner[key] = _Array(item, data)
        else:
            if merge and type(previous) is bytes and previous == fragment:
                return None
            owner[key] = fragment
        return fragment

    def _object(
        self,
        value: Mapping[str, Any],
        previous: Any,
        depth: int,
        path: tuple[str, ...],
        owner: dict[str, Any],
        key: str,
    ) -> bytes:
        """An object holding long texts, written key by key (its texts as references, or edits
        of the previous object's texts of the same keys); it holds no key like a marker."""
        olds = previous.kids if type(previous) is _Object else {}
        kids: dict[str, Any] = {}
        parts = []
        for name, item in value.items():
            stored = self._value(item, olds.get(name), depth + 1, (*path, name), kids, name, False)
            parts.append(_part(_key_json(name) + b":", stored))
        owner[key] = _Object(None, kids)  # written whole whenever it is listed
        return _render(_Parts(parts))

    def _text(self, value: str, previous: Any, path: tuple[str, ...]) -> bytes:
        if len(value) >= REF_MIN:
            target = self._turn_refs.get(id(value))
            if target is not None:
                return b'{"$r":' + orjson.dumps(target) + b"}"
            self._turn_refs[id(value)] = path
            if type(previous) is str and len(value) >= EDIT_MIN:
                stored = text_edit(previous, value, self._action_texts())
                if stored is not None:
                    return stored
        return orjson.dumps(value)

    def _action_texts(self) -> dict[str, bytes]:
        """This turn's action texts (of 8 characters or more) -> their paths' JSON."""
        if self._pieces is None:
            self._pieces = {}
            if self._actions is not None:
                action_texts(self._actions, [], self._pieces)
        return self._pieces

    # -- checking hints ------------------------------------------------------------------------

    def _check_hint(self, value: Mapping[str, Any], hint: Hint | None) -> None:
        """Raise :class:`WrongHintError` when a key not hinted differs from the last turn (and
        keep this turn's JSON, key by key, for the next)."""
        before_all, now = self._seen, {}
        for agent, observation in value.items():
            if not isinstance(observation, Mapping):
                continue
            fragments = now[agent] = {k: json_fragment(v) for k, v in observation.items()}
            before, listed = before_all.get(agent), None if hint is None else hint.get(agent)
            if before is None or listed is None:
                continue
            wrong = [
                key
                for key, fragment in fragments.items()
                if key not in listed and key in before and before[key] != fragment
            ]
            if wrong:
                raise WrongHintError(
                    f"the change hint for {agent!r} leaves out {wrong}, which changed "
                    f"(hinted: {sorted(listed)})"
                )
        self._seen = now


def _long(value: Mapping[str, Any]) -> bool:
    """Whether an object holds a text long enough to be a reference or an edit."""
    for item in value.values():
        if type(item) is str and len(item) >= REF_MIN:
            return True
        if type(item) is dict and _long(item):
            return True
    return False


def _is_int(fragment: bytes) -> bool:
    return fragment.isdigit() or (fragment[:1] == b"-" and fragment[1:].isdigit())


def _part(name: bytes, stored: Any) -> _Part:
    """``name`` (a key's JSON and ``:``) then ``stored`` (a slot or parts are joined later)."""
    if type(stored) is bytes:
        return name + stored
    return (name, stored)


def _object_item(parts: list[_Part], new: bool = False) -> bytes | _Parts:
    """An object item of parts: its bytes, or the parts to join once their slots are filled."""
    for part in parts:
        if type(part) is not bytes:
            return _Parts(parts, new)
    text = b"{" + b",".join(parts) + b"}"  # type: ignore[arg-type]
    return b'{"$n":' + text + b"}" if new else text


def _render(item: _Slot | _Parts) -> bytes:
    """The bytes of an item (its slots filled by now)."""
    if type(item) is _Slot:
        return item.text
    assert type(item) is _Parts
    text = (
        b"{"
        + b",".join(
            part if type(part) is bytes else part[0] + _render(part[1]) for part in item.parts
        )
        + b"}"
    )
    return b'{"$n":' + text + b"}" if item.new else text


__all__ = [
    "BULK_MAX",
    "CHECK_HINTS_VARIABLE",
    "EDIT_MIN",
    "MARKERS",
    "MAX_DEPTH",
    "REF_MIN",
    "SLIDE_MIN",
    "DeltaWriter",
    "Hint",
    "WrongHintError",
    "checking_hints",
    "json_fragment",
]
