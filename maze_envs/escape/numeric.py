"""The numeric observation of Maze Escape, defined once: its fields, their order and its spaces.

Reinforcement learning reads Maze Escape as numbers. This module says which numbers: each agent's
observation (version 1 layout: every agent slot, the agent's own blank) as a ``Dict`` of ``Box`` /
``MultiBinary`` / ``Discrete`` / ``MultiDiscrete`` fields, or flattened into one ``Box(float32)``.
Three things read it: :class:`wrappers.escape_numeric.EscapeNumericObservation` (the scalar env,
through :mod:`maze_envs.escape.numeric_encoder`), the batched engine
(:mod:`maze_envs.escape.batch.observe`, which writes the same vector straight from its arrays)
and policies that play from numbers. Keys, with ``n`` agents, a trail of ``K`` turns, ``S`` radio
symbols and ``B`` hash buckets (optional keys only when their feature is on in the config):

==================  =====================  ==================================================
key                 space                  value
==================  =====================  ==================================================
edges               MultiBinary(12)        one-hot edge kinds, direction-major: N open, N
                                           interior wall, N outer brick, E open, ... W outer
                                           brick (``edges="codes"``: MultiDiscrete([3]*4),
                                           the env's codes)
on_exit             Discrete(2)            1 on the exit cell
landmark            Discrete(25)           0 none, else 1 + index into ``LANDMARK_NAMES``
time                Box([0,1], (2,))       ``[turn, turns_left] / max_turns``
last_action         MultiDiscrete([6,3,3]) last move, notebook and radio result codes
radio_cooldown      Box([0,1], (1,))       turns until the radio may send / ``radio_cooldown``
radio_heard         MultiBinary(n)         1 per agent slot that radioed text last turn
notebook_shown      MultiBinary(n)         1 per agent slot whose notebook is shown here
distances           Box([0,1], (1+n,))     exit then agents, tenths / the maze's diagonal
position            Box((2,))              ``[x, y] / [width-1, height-1]`` (own/shared
                                           frames: in [-1, 1]; absolute: in [0, 1])
trail               Box((K, 2))            the trail, scaled like ``position``
trail_mask          MultiBinary(K)         1 for the rows of the trail that are real
colocated_with      MultiBinary(n)         the env's meeting alert
used_exits          MultiBinary(4)         the env's used exits
radio_symbols       MultiDiscrete([S+1]*n) the symbol each slot sent last turn (0: none)
notebook_hash       MultiBinary(B)         ``text="hash"`` only: hashed words of the notebook
radio_hash          MultiBinary(n*B)       ... of each slot's radio message (slot-major)
teammate_hash       MultiBinary(n*B)       ... of each shown teammate notebook
reasons_hash        MultiBinary(B)         ... of the last action's rejection reasons
==================  =====================  ==================================================

Free text is dropped (``text="drop"``, the default: only the presence flags ``radio_heard`` and
``notebook_shown`` remain) or hashed (``text="hash"``): lower-cased words (``\\w+``), each
setting bucket ``crc32(word) % hash_buckets`` (a stable hash: the same in every process).
Float boxes are ``float32``, binary arrays ``int8``.

The flattened form (:meth:`NumericLayout.flat_space`) is one ``Box(float32)``: the binary fields
first, in the table's order (``Discrete`` and ``MultiDiscrete`` codes one-hot, the
``MultiBinary`` ones as 0/1), then the boxes' values (``time``, ``radio_cooldown``,
``distances``, ``position``, ``trail``); :attr:`NumericLayout.names` names every entry.

The fields of the optional features (``distances`` ... ``radio_symbols``) are those the features
declare (:mod:`maze_envs.escape.features`, their ``numeric``), so a new feature comes with its
numeric form and none is dropped.

Example:
    >>> from maze_envs.escape.config import Config
    >>> layout = NumericLayout(Config(width=7, height=7))
    >>> layout.width, layout.names[:2], layout.flat_space().shape
    (64, ['edges[N=open]', 'edges[N=interior_wall]'], (64,))
    >>> layout.start["time"] == layout.binary_width
    True
"""

from __future__ import annotations

import re
import zlib
from typing import Any, Final, Literal

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from maze_envs.escape.config import Config
from maze_envs.escape.features import NumericField, enabled_features
from maze_envs.escape.features.base import flags, scaled
from maze_envs.escape.vocab import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
)

__all__ = [
    "EdgeMode",
    "NumericLayout",
    "TextMode",
    "base_fields",
    "field_size",
    "hash_fields",
    "hash_text",
    "is_binary",
]

TextMode = Literal["drop", "hash"]
EdgeMode = Literal["onehot", "codes"]
_LAST_ACTION: Final = (len(MOVE_RESULTS), len(NOTEBOOK_RESULTS), len(RADIO_RESULTS))
_WORDS: Final = re.compile(r"\w+")


def hash_text(text: str, buckets: int) -> list[int]:
    """The buckets the words of ``text`` fall in (sorted, no repeats; stable across processes).

    Example:
        >>> hash_text("Exit: north, NORTH!", 16) == hash_text("north exit", 16)
        True
        >>> hash_text("", 16)
        []
    """
    if not text:
        return []
    return sorted({zlib.crc32(w.encode()) % buckets for w in _WORDS.findall(text.lower())})


def is_binary(space: spaces.Space[Any]) -> bool:
    """Whether a numeric field lies in the binary part of the flattened vector (every space but
    a float ``Box``: one-hot codes and flags)."""
    return not isinstance(space, spaces.Box)


def field_size(field: NumericField) -> int:
    """Entries of ``field`` in the flattened vector (a code one-hot over its values)."""
    space = field.space
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(space.nvec.sum())
    return int(np.prod(space.shape or (1,)))


def base_fields(config: Config, edges: EdgeMode = "onehot") -> list[NumericField]:
    """The fields every numeric observation has (the features' follow them)."""
    slots = config.agents
    n = len(slots)
    edge_names = tuple(f"edges[{d}={k}]" for d in DIRECTIONS for k in EDGE_KINDS)
    codes = spaces.MultiDiscrete([len(EDGE_KINDS)] * len(DIRECTIONS))
    cooldown = 1.0 / config.radio_cooldown if config.radio_cooldown else 0.0
    return [
        NumericField(
            "edges",
            spaces.MultiBinary(len(edge_names)) if edges == "onehot" else codes,
            "edges",
            edge_names,
            onehot=(len(EDGE_KINDS),) * len(DIRECTIONS) if edges == "onehot" else (),
        ),
        NumericField("on_exit", spaces.Discrete(2), "on_exit", ("on_exit[0]", "on_exit[1]")),
        NumericField(
            "landmark",
            spaces.Discrete(len(LANDMARK_NAMES) + 1),
            "landmark",
            ("landmark=none", *(f"landmark={name}" for name in LANDMARK_NAMES)),
        ),
        NumericField(
            "time",
            spaces.Box(0.0, 1.0, (2,), np.float32),
            ("turn", "turns_left"),
            ("time[0]", "time[1]"),
            scaled([1.0 / config.max_turns]),
        ),
        NumericField(
            "last_action",
            spaces.MultiDiscrete(list(_LAST_ACTION)),
            ("last_action.move", "last_action.notebook", "last_action.radio"),
            (
                *(f"last_action.move={r}" for r in MOVE_RESULTS),
                *(f"last_action.notebook={r}" for r in NOTEBOOK_RESULTS),
                *(f"last_action.radio={r}" for r in RADIO_RESULTS),
            ),
        ),
        NumericField(
            "radio_cooldown",
            spaces.Box(0.0, 1.0, (1,), np.float32),
            "last_action.radio_cooldown",
            ("radio_cooldown[0]",),
            scaled([cooldown]),
        ),
        NumericField(
            "radio_heard",
            spaces.MultiBinary(n),
            "radio_heard",
            tuple(f"radio_heard[{s}]" for s in slots),
            flags,
        ),
        NumericField(
            "notebook_shown",
            spaces.MultiBinary(n),
            "notebook_shown",
            tuple(f"notebook_shown[{s}]" for s in slots),
            flags,
        ),
    ]


def hash_fields(n: int, buckets: int) -> list[NumericField]:
    """The hashed-text fields (``text="hash"``), written apart from the scatter."""

    def field(key: str, size: int) -> NumericField:
        return NumericField(
            key, spaces.MultiBinary(size), (), tuple(f"{key}[{i}]" for i in range(size))
        )

    return [
        field("notebook_hash", buckets),
        field("radio_hash", n * buckets),
        field("teammate_hash", n * buckets),
        field("reasons_hash", buckets),
    ]


class NumericLayout:
    """The numeric observation of one game configuration: its fields in order, where each one
    starts in the flattened vector, its names and its spaces.

    ``text`` (``"drop"`` or ``"hash"``), ``hash_buckets`` and ``edges`` (``"onehot"`` or
    ``"codes"``) are the options of :class:`wrappers.escape_numeric.EscapeNumericObservation`;
    anything else raises ``ValueError`` saying what is allowed.
    """

    def __init__(
        self,
        config: Config,
        *,
        text: TextMode = "drop",
        hash_buckets: int = 32,
        edges: EdgeMode = "onehot",
    ) -> None:
        if text not in ("drop", "hash"):
            raise ValueError(f"text must be 'drop' or 'hash', got {text!r}")
        if edges not in ("onehot", "codes"):
            raise ValueError(f"edges must be 'onehot' or 'codes', got {edges!r}")
        if isinstance(hash_buckets, bool) or not isinstance(hash_buckets, int) or hash_buckets < 1:
            raise ValueError(f"hash_buckets must be an int >= 1, got {hash_buckets!r}")
        self.config, self.text, self.hash_buckets, self.edges = config, text, hash_buckets, edges
        self.slots = config.agents
        fields = base_fields(config, edges)
        for feature in enabled_features(config):  # every feature declares its numeric form
            fields += feature.numeric(config, self.slots)
        if text == "hash":
            fields += hash_fields(len(self.slots), hash_buckets)
        #: every field, in the declared order (the Dict form's key order)
        self.fields: list[NumericField] = fields
        self.by_key: dict[str, NumericField] = {f.key: f for f in fields}
        # the flattened layout: binary fields first, then the float boxes (declared order)
        ordered = [f for f in fields if is_binary(f.space)] + [
            f for f in fields if not is_binary(f.space)
        ]
        #: where each field starts in the flattened vector
        self.start: dict[str, int] = {}
        offset = 0
        for field in ordered:
            self.start[field.key] = offset
            offset += field_size(field)
        #: entries of the flattened vector, and of its binary part (which comes first)
        self.width = offset
        self.binary_width = sum(field_size(f) for f in fields if is_binary(f.space))
        #: a name per entry of the flattened vector (``edges[N=open]``, ``time[0]``, ...)
        self.names: list[str] = [name for f in ordered for name in f.names]

    def flat_space(self) -> spaces.Box:
        """The flattened observation's space: ``Box(float32)`` of :attr:`width` entries, 0..1
        except where a float field's box says otherwise (own-frame coordinates reach -1)."""
        low, high = self.bounds()
        return spaces.Box(low, high, dtype=np.float32)

    def bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Per-entry lowest and highest values of the flattened vector."""
        low = np.zeros(self.width, dtype=np.float32)
        high = np.ones(self.width, dtype=np.float32)
        for field in self.fields:
            if isinstance(field.space, spaces.Box):
                start, size = self.start[field.key], field_size(field)
                low[start : start + size] = field.space.low.ravel()
                high[start : start + size] = field.space.high.ravel()
        return low, high

    def dict_space(self) -> spaces.Dict:
        """The ``Dict`` form's space (the table of the module docstring)."""
        return spaces.Dict({f.key: f.space for f in self.fields})

    def span(self, key: str) -> slice:
        """The entries of field ``key`` in the flattened vector."""
        start = self.start[key]
        return slice(start, start + field_size(self.by_key[key]))
