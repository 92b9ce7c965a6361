"""The journal's file format: tables, markers, JSON encoding and the two hash chains.

Every text column holds compact JSON (UTF-8, no ASCII escaping, keys in the order the
environment built them), written by :func:`encode_json` so the same value always gives the same
bytes. Numpy arrays and scalars are written as plain JSON numbers and lists; mappings of any
kind (``MappingProxyType``, custom ``Mapping`` classes) as JSON objects.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

import orjson

#: Marks a SQLite file as a maze-envs journal (``PRAGMA application_id``; ASCII "MZJ1").
APPLICATION_ID: Final = 0x4D5A4A31
#: Version of the file format (``PRAGMA user_version``): tables and what their columns hold.
#: 2: observations stored as delivered (not converted), games record an injected generator.
#: 3: ``games.meta`` (what a runner attaches), ``turns.decisions`` (per-decision records, in the
#: record-hash chain) and the ``blobs`` table (large repeated text stored once).
#: 4: ``turns.observations`` and ``turns.events`` hold what changed since the game's previous
#: turn (:mod:`maze_envs.journal.changes`); the tables are those of version 3.
SCHEMA_VERSION: Final = 4
#: The versions this library reads (and verifies); it writes :data:`SCHEMA_VERSION` only.
READABLE_VERSIONS: Final = (3, 4)
#: The "previous hash" of turn 0 in both chains.
GENESIS_HASH: Final = bytes(32)

SCHEMA: Final = """
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    env_id TEXT NOT NULL,
    config TEXT NOT NULL,
    generator TEXT,  -- JSON: an injected instance generator (NULL: the config names it)
    seed,  -- no type: an integer, or text when it does not fit in 64 bits
    library_version TEXT NOT NULL,
    created TEXT NOT NULL,
    outcome TEXT,  -- JSON object (NULL while the game is unfinished)
    meta TEXT  -- JSON object the runner attached (run key, policy specs, ...), or NULL
);
CREATE TABLE turns (
    game_id INTEGER NOT NULL REFERENCES games (id),
    turn INTEGER NOT NULL,
    observations TEXT NOT NULL,  -- JSON: {agent: observation}, what changed (version 4)
    actions TEXT NOT NULL,
    events TEXT NOT NULL,  -- JSON: {agent: events}, what changed (version 4)
    decisions TEXT NOT NULL,  -- JSON object {agent: record}, {} when none
    state_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    UNIQUE (game_id, turn)
);
CREATE TABLE blobs (
    key TEXT PRIMARY KEY,  -- sha256 hex of the UTF-8 content
    content TEXT NOT NULL
);
"""
# The JSON columns are bound as UTF-8 bytes and stored as TEXT (no decoding in Python).
INSERT_TURN: Final = (
    "INSERT INTO turns (game_id, turn, observations, actions, events, decisions, state_hash, "
    "record_hash) VALUES (?, ?, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), "
    "CAST(? AS TEXT), ?, ?)"
)
INSERT_BLOB: Final = "INSERT OR IGNORE INTO blobs (key, content) VALUES (?, ?)"
GAME_COLUMNS: Final = "id, env_id, config, generator, seed, library_version, created, outcome, meta"
SELECT_HEADER: Final = f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?"
SELECT_GAME: Final = (
    f"SELECT {GAME_COLUMNS}, (SELECT COUNT(*) FROM turns WHERE turns.game_id = games.id) FROM games"
)
TURN_COLUMNS: Final = "turn, observations, actions, events, decisions, state_hash, record_hash"
SELECT_TURNS: Final = f"SELECT {TURN_COLUMNS} FROM turns WHERE game_id = ? ORDER BY turn"


class JournalError(Exception):
    """The file is not a usable journal, or the journal was used wrongly, or a write failed."""


class CorruptTurnError(JournalError):
    """A stored turn cannot be trusted; ``turn`` is the first bad one."""

    def __init__(self, game_id: int, turn: int, reason: str) -> None:
        super().__init__(f"game {game_id}, turn {turn}: {reason}")
        self.game_id = game_id
        self.turn = turn
        self.reason = reason


# -- JSON --------------------------------------------------------------------------------------


def json_default(value: Any) -> Any:
    """JSON form of values orjson does not write itself (mappings, odd numpy arrays, pydantic)."""
    if isinstance(value, Mapping):  # MappingProxyType, custom Mapping classes
        return dict(value)
    tolist = getattr(value, "tolist", None)  # numpy arrays orjson refuses (0-d, strided)
    if callable(tolist):
        return tolist()
    model_dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(model_dump):
        return model_dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    raise TypeError(f"cannot store a {type(value).__name__} in the journal")


_OPTIONS: Final = orjson.OPT_SERIALIZE_NUMPY


def encode_json_bytes(value: Any) -> bytes:
    """The journal's compact UTF-8 JSON of ``value`` (numpy, pydantic and mappings included).

    Keys keep their order, so equal values built the same way give equal bytes. JSON has no
    NaN or infinity: such floats are written as ``null``. Raises ``TypeError`` for a value JSON
    cannot hold (and for mapping keys that are not strings).
    """
    return orjson.dumps(value, default=json_default, option=_OPTIONS)


def encode_json(value: Any) -> str:
    """:func:`encode_json_bytes` as text."""
    return orjson.dumps(value, default=json_default, option=_OPTIONS).decode()


def encode_received(value: Mapping[str, Any]) -> bytes:
    """Encode the actions an environment accepted, or raise :class:`JournalError` naming why.

    An accepted action is plain data once the environment has normalised it (and mappings of
    any kind, numpy scalars and arrays and pydantic models encode as JSON anyway), so it is
    never stored as an opaque placeholder: a game whose actions cannot be stored could not be
    replayed, so it is refused loudly instead of being journaled unverifiable.
    """
    try:
        return encode_json_bytes(value)
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        culprit = ""
        if isinstance(value, Mapping):
            for key, item in value.items():
                try:
                    encode_json_bytes({key: item})
                except TypeError:
                    culprit = f" (the action of {key!r}: {type(item).__name__} {item!r:.80})"
                    break
        raise JournalError(
            f"cannot record the actions{culprit}: {exc}; actions must be JSON data "
            "(numbers, strings, lists, mappings with string keys)"
        ) from None


def decode_json(text: str | bytes) -> Any:
    """Parse stored JSON (raises ``ValueError`` when it is not valid JSON)."""
    return orjson.loads(text)


# -- hash chains -------------------------------------------------------------------------------


def chain_state_hash(previous: bytes, state_digest: bytes) -> bytes:
    """Next link of the state-hash chain: ``sha256(previous + state_digest)``."""
    return hashlib.sha256(previous + state_digest).digest()


def chain_record_hash(
    previous: bytes,
    state_hash: str | bytes,
    observations: str | bytes,
    actions: str | bytes,
    events: str | bytes,
    decisions: str | bytes,
) -> bytes:
    """Next link of the record-hash chain over a row's stored text.

    ``sha256(previous + state_hash + NUL + observations + NUL + actions + NUL + events + NUL +
    decisions)``, every field as its UTF-8 text.
    """
    fields = [
        field.encode() if isinstance(field, str) else field
        for field in (state_hash, observations, actions, events, decisions)
    ]
    return hashlib.sha256(previous + b"\0".join(fields)).digest()  # one pass over the bytes
