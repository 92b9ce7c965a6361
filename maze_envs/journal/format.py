"""The journal's file format: tables, markers, JSON encoding, the two hash chains, row types.

Every text column holds compact JSON (UTF-8, no ASCII escaping, keys in the order the
environment built them), written by :func:`encode_json` so the same value always gives the same
bytes. Numpy arrays and scalars are written as plain JSON numbers and lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

#: Marks a SQLite file as a maze-envs journal (``PRAGMA application_id``; ASCII "MZJ1").
APPLICATION_ID: Final = 0x4D5A4A31
#: Version of the file format (``PRAGMA user_version``): tables and what their columns hold.
#: 2: observations stored as delivered (not converted), games record an injected generator.
SCHEMA_VERSION: Final = 2
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
    outcome TEXT
);
CREATE TABLE turns (
    game_id INTEGER NOT NULL REFERENCES games (id),
    turn INTEGER NOT NULL,
    observations TEXT NOT NULL,
    actions TEXT NOT NULL,
    events TEXT NOT NULL,
    state_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    UNIQUE (game_id, turn)
);
"""
# The JSON columns are bound as UTF-8 bytes and stored as TEXT (no decoding in Python).
INSERT_TURN: Final = (
    "INSERT INTO turns (game_id, turn, observations, actions, events, state_hash, record_hash) "
    "VALUES (?, ?, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), ?, ?)"
)
SELECT_GAME: Final = (
    "SELECT id, env_id, config, generator, seed, library_version, created, outcome, "
    "(SELECT COUNT(*) FROM turns WHERE turns.game_id = games.id) FROM games"
)
SELECT_TURNS: Final = (
    "SELECT turn, observations, actions, events, state_hash, record_hash "
    "FROM turns WHERE game_id = ? ORDER BY turn"
)


class JournalError(Exception):
    """The file is not a usable journal, or the journal was used wrongly."""


class CorruptTurnError(JournalError):
    """A stored turn cannot be trusted; ``turn`` is the first bad one."""

    def __init__(self, game_id: int, turn: int, reason: str) -> None:
        super().__init__(f"game {game_id}, turn {turn}: {reason}")
        self.game_id = game_id
        self.turn = turn
        self.reason = reason


# -- JSON --------------------------------------------------------------------------------------


def _to_json(value: Any) -> Any:
    """JSON form of values orjson does not write itself (odd numpy arrays, pydantic, sets)."""
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
    """The journal's compact UTF-8 JSON of ``value`` (numpy and pydantic values included).

    Keys keep their order, so equal values built the same way give equal bytes. JSON has no
    NaN or infinity: such floats are written as ``null``.
    """
    return orjson.dumps(value, default=_to_json, option=_OPTIONS)


def encode_json(value: Any) -> str:
    """:func:`encode_json_bytes` as text."""
    return orjson.dumps(value, default=_to_json, option=_OPTIONS).decode()


def encode_received(value: Mapping[str, Any]) -> bytes:
    """Encode what agents sent; an entry JSON cannot hold is stored as ``{"unencodable": repr}``."""
    try:
        return encode_json_bytes(value)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        safe: dict[str, Any] = {}
        for key, item in value.items():
            try:
                encode_json_bytes(item)
                safe[str(key)] = item
            except (TypeError, ValueError):
                safe[str(key)] = {"unencodable": repr(item)}
        return encode_json_bytes(safe)


def decode_json(text: str | bytes) -> Any:
    """Parse stored JSON (raises ``ValueError`` when it is not valid JSON)."""
    return orjson.loads(text)


# -- hash chains -------------------------------------------------------------------------------


def chain_state_hash(previous: bytes, state_digest: bytes) -> bytes:
    """Next link of the state-hash chain."""
    return hashlib.sha256(previous + state_digest).digest()


def chain_record_hash(
    previous: bytes,
    state_hash: str | bytes,
    observations: str | bytes,
    actions: str | bytes,
    events: str | bytes,
) -> bytes:
    """Next link of the record-hash chain over a row's stored text (UTF-8, fields NUL-separated)."""
    digest = hashlib.sha256(previous)
    for separator, field in (
        (b"", state_hash),
        (b"\0", observations),
        (b"\0", actions),
        (b"\0", events),
    ):
        digest.update(separator)
        digest.update(field.encode() if isinstance(field, str) else field)
    return digest.digest()


# -- rows --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameInfo:
    """One game's header row."""

    id: int
    env_id: str
    config: dict[str, Any]
    seed: int | None
    library_version: str
    created: str
    outcome: dict[str, Any] | None  # None while the game is unfinished
    turn_count: int  # stored turn rows, turn 0 included
    generator: dict[str, Any] | None = None  # an injected generator's description, if any


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One stored turn, decoded."""

    turn: int
    observations: dict[str, Any]
    actions: dict[str, Any]
    events: dict[str, Any]
    state_hash: str
    record_hash: str
    raw_observations: str  # the stored text, for exact comparison
    raw_events: str


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A whole game: its header and every turn."""

    info: GameInfo
    turns: list[TurnRecord]


@dataclass(frozen=True, slots=True)
class Problem:
    """The first turn of a game that cannot be trusted, and why."""

    turn: int
    kind: Literal["unreadable", "missing", "edited", "mismatch", "replay_error", "extra"]
    reason: str


EDITED: Final = "the row was changed after it was recorded"


def decode_row(expected: int, row: tuple[Any, ...]) -> TurnRecord | Problem:
    """A stored ``turns`` row (as :data:`SELECT_TURNS` gives it) decoded, or why it cannot be."""
    turn, observations, actions, events, state_hash, record_hash = row
    if turn != expected:
        if isinstance(turn, int) and turn > expected:
            return Problem(expected, "missing", f"turn {expected} is missing (next is {turn})")
        return Problem(expected, "unreadable", f"turn number {turn!r} where {expected} belongs")
    decoded: list[dict[str, Any]] = []
    for name, text in (("observations", observations), ("actions", actions), ("events", events)):
        if not isinstance(text, str):
            return Problem(turn, "unreadable", f"{name} are not text")
        try:
            value = orjson.loads(text)
        except ValueError as exc:
            return Problem(turn, "unreadable", f"{name} are not valid JSON ({exc})")
        if not isinstance(value, dict):
            return Problem(turn, "unreadable", f"{name} are not a JSON object")
        decoded.append(value)
    if not (isinstance(state_hash, str) and isinstance(record_hash, str)):
        return Problem(turn, "unreadable", "hashes are not text")
    return TurnRecord(
        turn=turn,
        observations=decoded[0],
        actions=decoded[1],
        events=decoded[2],
        state_hash=state_hash,
        record_hash=record_hash,
        raw_observations=observations,
        raw_events=events,
    )


def scan_rows(
    rows: Iterator[tuple[Any, ...]], read_error: type[Exception]
) -> Iterator[tuple[TurnRecord, bool] | Problem]:
    """Rows in order as (record, intact); stops after the first unreadable or missing one.

    ``intact`` is False when the record-hash chain does not match the stored text, i.e. the row
    (or an earlier one) was changed after it was recorded; callers stop at the first such row.
    ``read_error`` is the exception that fetching a row raises when the file is damaged.
    """
    expected = 0
    previous = GENESIS_HASH
    while True:
        try:
            row = next(rows, None)
        except read_error as exc:
            yield Problem(expected, "unreadable", f"the row cannot be read ({exc})")
            return
        if row is None:
            return
        item = decode_row(expected, row)
        if isinstance(item, Problem):
            yield item
            return
        recomputed = chain_record_hash(previous, item.state_hash, row[1], row[2], row[3])
        yield item, recomputed.hex() == item.record_hash
        previous = recomputed
        expected += 1
