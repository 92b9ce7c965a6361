"""Schema version 4 (read, no longer written): a turn's observations and events stored as what
changed since the turn before.

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

Example (a version 4 turn read against the one before it):
    >>> from maze_envs.journal.legacy.rebuild import ChangeReader
    >>> reader = ChangeReader()
    >>> reader.decode(b'{"$w":1,"A":{"turn":0,"notebook":"a note; "}}', b"{}")
    b'{"A":{"turn":0,"notebook":"a note; "}}'
    >>> reader.decode(b'{"A":{"turn":1,"notebook":{"$s":[[0,8],"a note; "]}}}', b"{}")
    b'{"A":{"turn":1,"notebook":"a note; a note; "}}'
    >>> reader.decode(b'{"A":{}}', b"{}")  # the counter moves on by its step
    b'{"A":{"turn":2,"notebook":"a note; a note; "}}'
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

import orjson

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


__all__ = [
    "HISTORY_CHARS",
    "HISTORY_SIZE",
    "MARKERS",
    "MAX_DEPTH",
    "REF_MIN",
    "TextHistory",
    "json_fragment",
    "key_json",
]
