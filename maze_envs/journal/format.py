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
#: 5: a turn is one compressed ``body`` (:mod:`maze_envs.journal.body`: its actions, what
#: changed in its observations and events (:mod:`maze_envs.journal.delta`), its decisions) and
#: its two hashes as 32 raw bytes; ``turns`` is keyed by ``(game_id, turn)`` without a rowid.
SCHEMA_VERSION: Final = 5
#: The versions this library reads (and verifies); it writes :data:`SCHEMA_VERSION` only.
READABLE_VERSIONS: Final = (3, 4, 5)
#: The "previous hash" of turn 0 in both chains of a game of 32-byte hashes (every game of
#: versions 3 and 4, and of version 5 by default); a game of 16-byte hashes starts from
#: ``bytes(16)`` (:func:`genesis`).
GENESIS_HASH: Final = bytes(32)
#: The lengths a version 5 game's hashes may have: 32 bytes (SHA-256, the default) or 16 (its
#: first 128 bits: ``Journal(path, hash_size=16)``, what ``maze-envs bench`` writes); all the
#: hashes of one game have the length of its first (docs/journal.md, "Hash sizes").
HASH_SIZES: Final = (32, 16)


def genesis(size: int) -> bytes:
    """The "previous hash" of turn 0 of a game whose hashes are ``size`` bytes long."""
    if size not in HASH_SIZES:
        raise ValueError(f"a journal's hashes are 32 or 16 bytes long, not {size!r}")
    return bytes(size)


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
    game_turn INTEGER PRIMARY KEY,  -- game_id * 2**32 + turn: a game's turns lie together
    body BLOB NOT NULL,  -- the turn, compressed in the game's stream (maze_envs.journal.body)
    state_hash BLOB NOT NULL,  -- 32 bytes
    record_hash BLOB NOT NULL,  -- 32 bytes: sha256(previous record_hash + state_hash + body)
    game_id INTEGER GENERATED ALWAYS AS (game_turn >> 32) VIRTUAL,
    turn INTEGER GENERATED ALWAYS AS (game_turn & 4294967295) VIRTUAL
);
CREATE TABLE blobs (
    key TEXT PRIMARY KEY,  -- sha256 hex of the UTF-8 content
    content TEXT NOT NULL
);
"""
INSERT_TURN: Final = (
    "INSERT INTO turns (game_turn, body, state_hash, record_hash) VALUES (?, ?, ?, ?)"
)
#: Turns of a game are numbered below this (``game_turn = game_id * TURNS + turn``).
TURNS: Final = 2**32
INSERT_BLOB: Final = "INSERT OR IGNORE INTO blobs (key, content) VALUES (?, ?)"
GAME_COLUMNS: Final = "id, env_id, config, generator, seed, library_version, created, outcome, meta"
SELECT_HEADER: Final = f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?"
#: The columns of a stored turn row, by schema version (as :meth:`Journal.raw_turns` gives them).
TURN_COLUMNS: Final = {
    3: "turn, observations, actions, events, decisions, state_hash, record_hash",
    4: "turn, observations, actions, events, decisions, state_hash, record_hash",
    5: "turn, body, state_hash, record_hash",
}
# A game's turn rows: in version 5 a range of the key (the generated columns have no index)
_OF_GAME: Final = {
    3: "game_id = ?1",
    4: "game_id = ?1",
    5: f"game_turn BETWEEN ?1 * {TURNS} AND ?1 * {TURNS} + {TURNS - 1}",
}


def of_game(version: int, table: str = "turns") -> str:
    """The condition (parameter ``?1``: the game id) on the turn rows of a game."""
    condition = _OF_GAME[version]
    if table != "turns":
        condition = condition.replace("?1", table)
    return condition


def select_game(version: int) -> str:
    """The query of every game header with its number of stored turns."""
    count = f"(SELECT COUNT(*) FROM turns WHERE {of_game(version, 'games.id')})"
    return f"SELECT {GAME_COLUMNS}, {count} FROM games"


def select_turns(version: int) -> str:
    """The query of a game's stored turn rows in order (parameter: the game id)."""
    order = "game_turn" if version >= 5 else "turn"
    return f"SELECT {TURN_COLUMNS[version]} FROM turns WHERE {of_game(version)} ORDER BY {order}"


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
    """Next link of the state-hash chain: ``sha256(previous + state_digest)``, cut to the
    length of ``previous`` (a chain keeps the length of its genesis: 32 bytes, or 16)."""
    return hashlib.sha256(previous + state_digest).digest()[: len(previous)]


def chain_body_hash(previous: bytes, state_hash: bytes, body: bytes) -> bytes:
    """Next link of the record-hash chain of schema version 5: ``sha256(previous + state_hash
    + body)`` over the row's stored bytes (the body covers the turn's actions, decisions and
    what changed in its observations and events; with the rows before it, everything every
    agent saw), cut to the length of ``previous`` as :func:`chain_state_hash`."""
    return hashlib.sha256(previous + state_hash + body).digest()[: len(previous)]


def chain_record_hash(
    previous: bytes,
    state_hash: str | bytes,
    observations: str | bytes,
    actions: str | bytes,
    events: str | bytes,
    decisions: str | bytes,
) -> bytes:
    """Next link of the record-hash chain over a row's stored text (schema versions 3 and 4).

    ``sha256(previous + state_hash + NUL + observations + NUL + actions + NUL + events + NUL +
    decisions)``, every field as its UTF-8 text.
    """
    fields = [
        field.encode() if isinstance(field, str) else field
        for field in (state_hash, observations, actions, events, decisions)
    ]
    return hashlib.sha256(previous + b"\0".join(fields)).digest()  # one pass over the bytes
