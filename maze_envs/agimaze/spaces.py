"""Observation spaces of the AGI Maze environments and the encoders that fill them.

One observation carries the narration ``text``, the ``formal`` observation (``status``,
``observe``, ``events``) and the ``inventory``; tutorial (open-map) labyrinths add the ``map``
text. Every value the engine can emit has a place: ``observe`` and ``events`` index the engine's
vocabularies (:data:`OBSERVE_KINDS`, :data:`EVENT_KINDS`), each ending in ``"other"`` for values
a remote server might send that the embedded engine never does. Texts use :data:`CHARSET`
(printable ASCII, newline and U+FFFD); :func:`clean_text` replaces any other character of a remote
reply by U+FFFD and cuts overlong text, so observations always lie in their spaces.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from gymnasium import spaces

from maze_envs.agimaze.formal import EVENT_NAMES, OBSERVE_VALUES
from maze_envs.agimaze.shared_text import SharedText
from maze_envs.agimaze.types import MAX_SIDE

REPLACEMENT: Final = "\ufffd"
#: Every character an observation text may hold.
CHARSET: Final = "".join(chr(c) for c in range(32, 127)) + "\n" + REPLACEMENT
_CHARSET_SET: Final = frozenset(CHARSET)
#: Longest narration text (a flashlight beam over a 64-cell row stays well below).
TEXT_MAX_LENGTH: Final = 4096
#: Longest map text: 2H+1 lines of 4W+1 characters plus the newlines, for the largest board.
MAP_MAX_LENGTH: Final = (2 * MAX_SIDE + 1) * (4 * MAX_SIDE + 2)
#: The formal ``status`` values, by index.
STATUS_KINDS: Final = ("success", "blocked")
#: The formal ``observe`` values, by index.
OBSERVE_KINDS: Final = (*OBSERVE_VALUES, "other")
#: Event names, by bit of the ``events`` MultiBinary.
EVENT_KINDS: Final = (*EVENT_NAMES, "other")
#: Inventory flags; ``grenades`` is a count.
INVENTORY_FLAGS: Final = ("key", "treasure", "exit_key", "boat", "flashlight")
#: Most grenades one can hold (at most 4 packs of at most 99).
MAX_GRENADES: Final = 4 * 99

_STATUS_INDEX: Final = {name: i for i, name in enumerate(STATUS_KINDS)}
_OBSERVE_INDEX: Final = {name: i for i, name in enumerate(OBSERVE_KINDS)}
_EVENT_INDEX: Final = {name: i for i, name in enumerate(EVENT_KINDS)}
_OTHER_OBSERVE: Final = len(OBSERVE_KINDS) - 1
_OTHER_EVENT: Final = len(EVENT_KINDS) - 1


def text_space(max_length: int = TEXT_MAX_LENGTH) -> spaces.Text:
    """A Text space over :data:`CHARSET` (empty strings allowed; async vector envs carry it)."""
    return SharedText(max_length=max_length, min_length=0, charset=CHARSET)


def formal_space() -> spaces.Dict:
    """``status`` (index of STATUS_KINDS), ``observe`` (OBSERVE_KINDS), ``events`` (bits)."""
    return spaces.Dict(
        {
            "status": spaces.Discrete(len(STATUS_KINDS)),
            "observe": spaces.Discrete(len(OBSERVE_KINDS)),
            "events": spaces.MultiBinary(len(EVENT_KINDS)),
        }
    )


def inventory_space() -> spaces.Dict:
    """0/1 per held item of INVENTORY_FLAGS, and the ``grenades`` count."""
    fields: dict[str, spaces.Space[Any]] = {name: spaces.Discrete(2) for name in INVENTORY_FLAGS}
    fields["grenades"] = spaces.Discrete(MAX_GRENADES + 1)
    return spaces.Dict(fields)


def _lookup(table: dict[str, int], value: object, default: int) -> int:
    return table.get(value, default) if type(value) is str else default


def encode_formal(formal: dict[str, Any]) -> dict[str, Any]:
    """The formal observation of the API (a dict) as a value of :func:`formal_space`."""
    events = np.zeros(len(EVENT_KINDS), dtype=np.int8)
    for name in formal.get("events", ()):
        events[_lookup(_EVENT_INDEX, name, _OTHER_EVENT)] = 1
    return {
        "status": _lookup(_STATUS_INDEX, formal.get("status"), 1),
        "observe": _lookup(_OBSERVE_INDEX, formal.get("observe"), _OTHER_OBSERVE),
        "events": events,
    }


def encode_inventory(inventory: dict[str, Any]) -> dict[str, int]:
    """The API's inventory dict (only held items listed) as a value of :func:`inventory_space`."""
    get = inventory.get
    grenades = get("grenades", 0)
    if type(grenades) is not int:
        grenades = 0
    return {
        "key": 1 if get("key") else 0,
        "treasure": 1 if get("treasure") else 0,
        "exit_key": 1 if get("exit_key") else 0,
        "boat": 1 if get("boat") else 0,
        "flashlight": 1 if get("flashlight") else 0,
        "grenades": min(max(grenades, 0), MAX_GRENADES),
    }


def play_spaces(map_shown: bool) -> dict[str, spaces.Space[Any]]:
    """The fields of a labyrinth in play, as both AGI Maze envs observe it: its ``text``, the
    ``formal`` reply, the ``inventory`` and, when the labyrinth's map is shown, the ``map``."""
    fields: dict[str, spaces.Space[Any]] = {
        "text": text_space(),
        "formal": formal_space(),
        "inventory": inventory_space(),
    }
    if map_shown:
        fields["map"] = text_space(MAP_MAX_LENGTH)
    return fields


def play_values(text: str, formal: dict[str, Any], map_text: str | None) -> dict[str, Any]:
    """The values of :func:`play_spaces` for the API's reply (``map_text`` None: no map shown)."""
    obs = {
        "text": text,
        "formal": encode_formal(formal),
        "inventory": encode_inventory(formal.get("inventory") or {}),
    }
    if map_text is not None:
        obs["map"] = map_text
    return obs


def clean_text(text: object, max_length: int = TEXT_MAX_LENGTH) -> str:
    """``text`` made to fit a :func:`text_space`: foreign characters → U+FFFD, cut to length."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if not _CHARSET_SET.issuperset(text):
        text = "".join(ch if ch in _CHARSET_SET else REPLACEMENT for ch in text)
    return text[:max_length]
