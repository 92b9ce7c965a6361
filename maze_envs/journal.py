"""The game journal: one SQLite file format for every environment in the library.

A journal holds many games. Each game is a row of ``games`` (environment id, configuration,
seed, library version, creation time and, once finished, the outcome) and one row of ``turns``
per turn: every agent's observation exactly as delivered, every action exactly as received, the
turn's events, and two chained hashes. Turn 0 is the reset state (no actions); turn ``k`` holds
the actions that led to state ``k``, the events of that step and the observations of state ``k``.

``state_hash``
    ``sha256(previous state_hash + state_digest)`` where ``state_digest`` is the environment's
    canonical digest of its full state, and the previous hash of turn 0 is 32 zero bytes. Same
    seed and actions give the same chain, so a replay checks determinism turn by turn.
``record_hash``
    ``sha256(previous record_hash + state_hash + observations + actions + events)`` over the
    stored text, so an edited row is found even when it does not change what a replay computes.

Every turn is committed on its own (WAL mode), so a process killed mid-game loses at most the
turn in progress and leaves a readable file. The file is marked with ``PRAGMA application_id``
and its schema version with ``PRAGMA user_version``.

An outcome with ``"aborted": true`` marks a game abandoned before its end (for instance reset
mid-game): its turns verify, but no end is expected.

The generic half of replay lives here too: :func:`scan_turns` walks a game's rows and reports
the first unreadable, missing or edited one, and :func:`verify_game` drives any environment's
:class:`Replayer` through the recorded actions and reports the first turn that disagrees.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> with Journal(path) as journal:
    ...     game = journal.start_game(env_id="toy", config={}, seed=1, library_version="0")
    ...     _ = journal.record_turn(game, 0, observations={"A": 0}, actions={}, events={},
    ...                             state_digest=b"start")
    ...     journal.finish_game(game, {"success": True})
    ...     [turn.observations for turn in journal.turns(game)]
    [{'A': 0}]
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Protocol

#: Marks a SQLite file as a maze-envs journal (``PRAGMA application_id``; ASCII "MZJ1").
APPLICATION_ID: Final = 0x4D5A4A31
#: Version of the table layout (``PRAGMA user_version``).
SCHEMA_VERSION: Final = 1
#: The "previous hash" of turn 0 in both chains.
GENESIS_HASH: Final = bytes(32)

_SCHEMA: Final = """
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    env_id TEXT NOT NULL,
    config TEXT NOT NULL,
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
_INSERT_TURN: Final = (
    "INSERT INTO turns (game_id, turn, observations, actions, events, state_hash, record_hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_SELECT_GAME: Final = (
    "SELECT id, env_id, config, seed, library_version, created, outcome, "
    "(SELECT COUNT(*) FROM turns WHERE turns.game_id = games.id) FROM games"
)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class JournalError(Exception):
    """The file is not a usable journal, or the journal was used wrongly."""


class CorruptTurnError(JournalError):
    """A stored turn cannot be trusted; ``turn`` is the first bad one."""

    def __init__(self, game_id: int, turn: int, reason: str) -> None:
        super().__init__(f"game {game_id}, turn {turn}: {reason}")
        self.game_id = game_id
        self.turn = turn
        self.reason = reason


def _to_json(value: Any) -> Any:
    """JSON form of values the standard encoder does not know (numpy, pydantic, sets, bytes)."""
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
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


_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_to_json)
# Observations and events come from environments, never cyclic: skipping the per-container
# cycle bookkeeping makes encoding a third faster. What agents send keeps the checks.
_TRUSTED_ENCODER: Final = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, default=_to_json, check_circular=False
)


def encode_json(value: Any) -> str:
    """The journal's compact JSON text of environment output (numpy and pydantic included)."""
    return _TRUSTED_ENCODER.encode(value)


def _encode_received(value: Mapping[str, Any]) -> str:
    """Encode what agents sent; values JSON cannot hold are stored as their ``repr``."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError):
        safe: dict[str, Any] = {}
        for key, item in value.items():
            try:
                _ENCODER.encode(item)
                safe[str(key)] = item
            except (TypeError, ValueError):
                safe[str(key)] = {"unencodable": repr(item)}
        return _ENCODER.encode(safe)


def chain_state_hash(previous: bytes, state_digest: bytes) -> bytes:
    """Next link of the state-hash chain."""
    return hashlib.sha256(previous + state_digest).digest()


def chain_record_hash(
    previous: bytes, state_hash: str, observations: str, actions: str, events: str
) -> bytes:
    """Next link of the record-hash chain over a row's stored text (fields NUL-separated)."""
    text = "\0".join((state_hash, observations, actions, events))
    return hashlib.sha256(previous + text.encode("utf-8")).digest()


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


class Journal:
    """A SQLite journal of games (see the module docstring for the format).

    ``Journal(path)`` creates the file when it does not exist; ``create=False`` refuses to.

    Every turn is its own committed transaction either way, so a killed process loses at most the
    turn in progress. ``durable=True`` (``PRAGMA synchronous=NORMAL``) also keeps the file intact
    through an operating-system crash or power loss, at the price of flushing to disk at each
    WAL checkpoint; ``durable=False`` (``synchronous=OFF``) skips those flushes, which makes each
    turn cheaper on slow disks, for runs that can be repeated.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, create: bool = True, durable: bool = True
    ) -> None:
        self.path = Path(path)
        self.durable = durable
        if not create and not self.path.is_file():
            raise JournalError(f"no journal at {self.path}")
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        except sqlite3.Error as exc:
            raise JournalError(f"cannot open journal {self.path}: {exc}") from None
        try:
            self._prepare()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise JournalError(
                f"{self.path} is not a readable maze-envs journal (SQLite says: {exc})"
            ) from None
        except JournalError:
            self._db.close()
            raise
        # game id -> (last turn, last state hash, last record hash), for appending turns
        self._tails: dict[int, tuple[int, bytes, bytes]] = {}

    def _prepare(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app_id == 0 and not tables:
            db.execute("PRAGMA journal_mode=WAL")  # only possible outside a transaction
            db.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have created the journal since the check above.
                if db.execute("SELECT 1 FROM sqlite_master").fetchone() is None:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                    db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return self._prepare()
        if app_id != APPLICATION_ID:
            raise JournalError(
                f"{self.path} is a SQLite database but not a maze-envs journal "
                f"(application_id {app_id:#x}, expected {APPLICATION_ID:#x})"
            )
        if version != SCHEMA_VERSION:
            raise JournalError(
                f"{self.path} uses journal schema version {version}; this library reads "
                f"version {SCHEMA_VERSION}"
            )
        if not {"games", "turns"} <= tables:
            raise JournalError(f"{self.path} lacks the games/turns tables of a journal")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={'NORMAL' if self.durable else 'OFF'}")

    # -- writing -------------------------------------------------------------------------

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """One statement in its own transaction; SQLite failures become :class:`JournalError`."""
        try:
            return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise JournalError(f"cannot write to journal {self.path}: {exc}") from exc

    def start_game(
        self, *, env_id: str, config: Mapping[str, Any], seed: int | None, library_version: str
    ) -> int:
        """Add a game and return its id."""
        stored_seed: int | str | None = seed
        if seed is not None and not _INT64_MIN <= seed <= _INT64_MAX:
            stored_seed = str(seed)  # SQLite integers are 64-bit; keep big seeds exactly
        created = datetime.now(UTC).isoformat(timespec="seconds")
        cursor = self._write(
            "INSERT INTO games (env_id, config, seed, library_version, created) "
            "VALUES (?, ?, ?, ?, ?)",
            (env_id, encode_json(config), stored_seed, library_version, created),
        )
        game_id = cursor.lastrowid
        assert game_id is not None
        return game_id

    def record_turn(
        self,
        game_id: int,
        turn: int,
        *,
        observations: Mapping[str, Any],
        actions: Mapping[str, Any],
        events: Mapping[str, Any],
        state_digest: bytes,
    ) -> str:
        """Store one turn (committed at once) and return its chained state hash in hex."""
        tail = self._tails.get(game_id)
        if tail is None:
            tail = self._load_tail(game_id)
        expected = tail[0] + 1
        if turn != expected:
            raise JournalError(
                f"game {game_id}: turn {turn} recorded out of order; the next turn is {expected}"
            )
        observations_text = encode_json(observations)
        actions_text = _encode_received(actions)
        events_text = encode_json(events)
        state_hash = chain_state_hash(tail[1], state_digest)
        state_hex = state_hash.hex()
        record_hash = chain_record_hash(
            tail[2], state_hex, observations_text, actions_text, events_text
        )
        self._write(
            _INSERT_TURN,
            (
                game_id,
                turn,
                observations_text,
                actions_text,
                events_text,
                state_hex,
                record_hash.hex(),
            ),
        )
        self._tails[game_id] = (turn, state_hash, record_hash)
        return state_hex

    def _load_tail(self, game_id: int) -> tuple[int, bytes, bytes]:
        row = self._db.execute("SELECT outcome FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise JournalError(f"no game {game_id} in {self.path}")
        if row[0] is not None:
            raise JournalError(f"game {game_id} is finished; no more turns can be recorded")
        last = self._db.execute(
            "SELECT turn, state_hash, record_hash FROM turns WHERE game_id = ? "
            "ORDER BY turn DESC LIMIT 1",
            (game_id,),
        ).fetchone()
        if last is None:
            return (-1, GENESIS_HASH, GENESIS_HASH)
        return (int(last[0]), bytes.fromhex(last[1]), bytes.fromhex(last[2]))

    def finish_game(self, game_id: int, outcome: Mapping[str, Any]) -> None:
        """Store the game's outcome; no turns can be added afterwards."""
        cursor = self._write(
            "UPDATE games SET outcome = ? WHERE id = ? AND outcome IS NULL",
            (encode_json(outcome), game_id),
        )
        if cursor.rowcount != 1:
            raise JournalError(f"game {game_id} does not exist or is already finished")
        self._tails.pop(game_id, None)

    # -- reading -------------------------------------------------------------------------

    def game_ids(self) -> list[int]:
        """Ids of every game in the file, oldest first."""
        try:
            return [r[0] for r in self._db.execute("SELECT id FROM games ORDER BY id")]
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot read the games of {self.path}: {exc}") from None

    def game(self, game_id: int) -> GameInfo:
        """One game's header; a missing game or unreadable header raises :class:`JournalError`."""
        try:
            row = self._db.execute(_SELECT_GAME + " WHERE id = ?", (game_id,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot read game {game_id} of {self.path}: {exc}") from None
        if row is None:
            raise JournalError(f"no game {game_id} in {self.path}")
        game_id, env_id, config, seed, version, created, outcome, count = row
        try:
            config_value = json.loads(config)
            outcome_value = None if outcome is None else json.loads(outcome)
            seed_value = None if seed is None else int(seed)
        except (TypeError, ValueError) as exc:
            raise CorruptTurnError(game_id, 0, f"game header is unreadable: {exc}") from None
        if not isinstance(config_value, dict) or not (
            outcome_value is None or isinstance(outcome_value, dict)
        ):
            raise CorruptTurnError(game_id, 0, "game config/outcome is not a JSON object")
        return GameInfo(
            id=game_id,
            env_id=str(env_id),
            config=config_value,
            seed=seed_value,
            library_version=str(version),
            created=str(created),
            outcome=outcome_value,
            turn_count=int(count),
        )

    def games(self) -> list[GameInfo]:
        """Every game's header, oldest first."""
        return [self.game(game_id) for game_id in self.game_ids()]

    def turns(self, game_id: int) -> Iterator[TurnRecord]:
        """A game's turns in order; raises :class:`CorruptTurnError` at the first bad one."""
        for item in scan_turns(self, game_id):
            if isinstance(item, Problem):
                raise CorruptTurnError(game_id, item.turn, item.reason)
            yield item

    def load_game(self, game_id: int) -> GameRecord:
        """A whole game in memory (raises at the first bad turn)."""
        return GameRecord(self.game(game_id), list(self.turns(game_id)))

    def _raw_turns(self, game_id: int) -> Iterator[tuple[Any, ...]]:
        yield from self._db.execute(
            "SELECT turn, observations, actions, events, state_hash, record_hash "
            "FROM turns WHERE game_id = ? ORDER BY turn",
            (game_id,),
        )

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file (every recorded turn is already committed)."""
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


# -- verification ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """The first turn of a game that cannot be trusted, and why."""

    turn: int
    kind: Literal["unreadable", "missing", "edited", "mismatch", "replay_error", "extra"]
    reason: str


def _decode_row(game_id: int, expected: int, row: tuple[Any, ...]) -> TurnRecord | Problem:
    turn, observations, actions, events, state_hash, record_hash = row
    if turn != expected:
        if isinstance(turn, int) and turn > expected:
            return Problem(expected, "missing", f"turn {expected} is missing (next is {turn})")
        return Problem(expected, "unreadable", f"turn number {turn!r} where {expected} belongs")
    decoded: list[dict[str, Any]] = []
    for name, text in (("observations", observations), ("actions", actions), ("events", events)):
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as exc:
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


def _scan(journal: Journal, game_id: int) -> Iterator[tuple[TurnRecord, bool] | Problem]:
    """Rows in order as (record, intact); stops after the first unreadable or missing one.

    ``intact`` is False when the record-hash chain does not match the stored text, i.e. the row
    (or an earlier one) was changed after it was recorded; callers stop at the first such row.
    """
    expected = 0
    previous = GENESIS_HASH
    rows = journal._raw_turns(game_id)
    while True:
        try:
            row = next(rows, None)
        except sqlite3.DatabaseError as exc:
            yield Problem(expected, "unreadable", f"the row cannot be read ({exc})")
            return
        if row is None:
            return
        item = _decode_row(game_id, expected, row)
        if isinstance(item, Problem):
            yield item
            return
        recomputed = chain_record_hash(previous, item.state_hash, row[1], row[2], row[3]).hex()
        yield item, recomputed == item.record_hash
        previous = bytes.fromhex(recomputed)
        expected += 1


def scan_turns(journal: Journal, game_id: int) -> Iterator[TurnRecord | Problem]:
    """Yield a game's turns in order and stop after yielding the first :class:`Problem`.

    Checks that turns are contiguous from 0, that every row decodes, and that the record-hash
    chain matches the stored text (so an edited row is caught at its own turn).
    """
    for item in _scan(journal, game_id):
        if isinstance(item, Problem):
            yield item
            return
        record, intact = item
        if not intact:
            yield Problem(record.turn, "edited", _EDITED)
            return
        yield record


_EDITED: Final = "the row was changed after it was recorded"


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """What a replayer computed for one turn (the same things the live game recorded)."""

    observations: Mapping[str, Any]
    events: Mapping[str, Any]
    state_digest: bytes
    done: bool  # the game ended at this turn
    outcome: Mapping[str, Any] | None = None  # the outcome the live game stores when done


class Replayer(Protocol):
    """Rebuilds one environment's game from a journal header and steps it."""

    def reset(self, game: GameInfo) -> ReplayStep:
        """Build the game from its config and seed; return turn 0."""
        ...

    def step(self, actions: Mapping[str, Any]) -> ReplayStep:
        """Apply one turn's recorded actions."""
        ...


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Result of verifying one game."""

    game_id: int
    status: Literal["ok", "aborted", "failed", "truncated"]
    turns_verified: int  # rows from turn 0 on that passed every check
    problem: Problem | None  # the first bad turn, when failed

    @property
    def ok(self) -> bool:
        """Every stored turn verifies and none is missing (an aborted game included)."""
        return self.status in {"ok", "aborted"}

    def describe(self) -> str:
        """One line for people."""
        if self.status == "ok":
            return f"game {self.game_id}: ok, {self.turns_verified} turns verified"
        if self.status == "aborted":
            return (
                f"game {self.game_id}: ok, {self.turns_verified} turns verified "
                "(abandoned before its end)"
            )
        if self.status == "truncated":
            return (
                f"game {self.game_id}: TRUNCATED (no outcome); the {self.turns_verified} "
                "stored turns verify"
            )
        assert self.problem is not None
        return (
            f"game {self.game_id}: FAILED at turn {self.problem.turn} "
            f"({self.problem.kind}): {self.problem.reason}"
        )


def _first_difference(stored: dict[str, Any], replayed: Mapping[str, Any]) -> str:
    for key in sorted(set(stored) | set(replayed), key=str):
        if encode_json(stored.get(key)) != encode_json(replayed.get(key)):
            return f"{key!r}: stored {_short(stored.get(key))}, replay {_short(replayed.get(key))}"
    return "the stored text differs in form"


def _short(value: Any, limit: int = 120) -> str:
    text = encode_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def verify_game(
    journal: Journal, game_id: int, replayer: Callable[[], Replayer] | None = None
) -> VerifyReport:
    """Check one game: row integrity always, and a full replay when ``replayer`` is given.

    Every stored turn is compared with the replay: the chained state hash, each agent's
    observation and the events. The report names the first turn that fails. A game without an
    outcome is reported as truncated once its stored turns have been checked.
    """

    def failed(turn: int, kind: Any, reason: str, verified: int) -> VerifyReport:
        return VerifyReport(game_id, "failed", verified, Problem(turn, kind, reason))

    try:
        info = journal.game(game_id)
    except CorruptTurnError as exc:
        return failed(exc.turn, "unreadable", exc.reason, 0)
    live = replayer() if replayer is not None else None
    previous_state = GENESIS_HASH
    verified = 0
    last: ReplayStep | None = None
    for scanned in _scan(journal, game_id):
        if isinstance(scanned, Problem):
            return VerifyReport(game_id, "failed", verified, scanned)
        item, intact = scanned
        if live is None:
            if not intact:
                return failed(item.turn, "edited", _EDITED, verified)
            verified += 1
            continue
        if last is not None and last.done:
            return failed(item.turn, "extra", "a turn was recorded after the game ended", verified)
        try:
            last = live.reset(info) if item.turn == 0 else live.step(item.actions)
        except Exception as exc:  # a verifier reports whatever the rebuilt game raises
            return failed(item.turn, "replay_error", f"{type(exc).__name__}: {exc}", verified)
        previous_state = chain_state_hash(previous_state, last.state_digest)
        if previous_state.hex() != item.state_hash:
            return failed(
                item.turn,
                "mismatch",
                f"state hash differs (stored {item.state_hash[:12]}…, "
                f"replay {previous_state.hex()[:12]}…)",
                verified,
            )
        if encode_json(last.observations) != item.raw_observations:
            detail = _first_difference(item.observations, last.observations)
            return failed(item.turn, "mismatch", f"observation differs: {detail}", verified)
        if encode_json(last.events) != item.raw_events:
            detail = _first_difference(item.events, last.events)
            return failed(item.turn, "mismatch", f"events differ: {detail}", verified)
        if not intact:  # the replay agrees, but the stored text is not what was recorded
            return failed(item.turn, "edited", _EDITED, verified)
        verified += 1
    if info.outcome is None:
        return VerifyReport(game_id, "truncated", verified, None)
    if verified == 0:
        return failed(0, "missing", "the game has an outcome but no turns", 0)
    if info.outcome.get("aborted") is True:
        return VerifyReport(game_id, "aborted", verified, None)
    if live is not None and last is not None:
        if not last.done:
            return failed(
                verified,
                "missing",
                "the game has an outcome but its last turns are missing",
                verified,
            )
        if last.outcome is not None and encode_json(last.outcome) != encode_json(info.outcome):
            detail = _first_difference(info.outcome, last.outcome)
            return failed(verified - 1, "mismatch", f"outcome differs: {detail}", verified)
    return VerifyReport(game_id, "ok", verified, None)
