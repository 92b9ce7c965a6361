"""The :class:`Journal`: opening a journal file, appending games and turns, reading them back."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from maze_envs.journal.format import (
    APPLICATION_ID,
    GENESIS_HASH,
    INSERT_TURN,
    SCHEMA,
    SCHEMA_VERSION,
    SELECT_GAME,
    SELECT_TURNS,
    CorruptTurnError,
    GameInfo,
    GameRecord,
    JournalError,
    Problem,
    TurnRecord,
    chain_record_hash,
    chain_state_hash,
    decode_json,
    encode_json,
    encode_json_bytes,
    encode_received,
)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# Each commit appends the pages it changed to the WAL (the turn row, the index entry); small pages
# make that fewer bytes.
PAGE_SIZE = 2048
# After about this many bytes of rows the WAL is copied into the database file (a checkpoint).
CHECKPOINT_ROW_BYTES = 16 * 2**20
# ... and the writer copies the last part itself once this little is left.
CATCH_UP_ROW_BYTES = 256 * 2**10


class _Checkpointer:
    """Runs WAL checkpoints for one journal on a background thread with its own connection.

    A checkpoint copies the WAL into the database file and, when durable, waits for the disk
    twice; done inline it would stall one turn in a few hundred for tens of milliseconds. The
    writer keeps committing every turn meanwhile (WAL lets a checkpoint and a writer run at the
    same time); durability is the same, since every turn is committed to the WAL either way.
    """

    def __init__(self, path: Path, synchronous: str) -> None:
        self._path = path
        self._synchronous = synchronous
        self._wake = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def request(self) -> None:
        """Start a checkpoint in the background (the caller checked :attr:`idle`)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"journal-checkpoint {self._path.name}", daemon=True
            )
            self._thread.start()
        self.idle.clear()
        self._wake.set()

    def _run(self) -> None:
        db = sqlite3.connect(self._path, isolation_level=None, timeout=30.0)
        try:
            db.execute(f"PRAGMA synchronous={self._synchronous}")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                # On failure the writer checkpoints inline once the WAL grows too long.
                with contextlib.suppress(sqlite3.Error):
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                self.idle.set()
        finally:
            db.close()
            self.idle.set()

    def close(self) -> None:
        if self._thread is not None:
            self._stopping = True
            self._wake.set()
            self._thread.join()
            self._thread = None


class Journal:
    """A SQLite journal of games (see :mod:`maze_envs.journal` for the format).

    ``Journal(path)`` creates the file when it does not exist; ``create=False`` refuses to.

    Every turn is its own committed transaction either way, so a killed process loses at most the
    turn in progress. ``durable=True`` (``PRAGMA synchronous=NORMAL``) also keeps the file intact
    through an operating-system crash or power loss, at the price of flushing to disk at each
    WAL checkpoint; ``durable=False`` (``synchronous=OFF``) skips those flushes, for runs that
    can be repeated. (``synchronous=FULL``, a disk flush at every commit, would only add that the
    last turns survive a power loss; it costs several times a turn, so it is not offered.)

    Checkpoints (copying the WAL into the file) run on a background thread with its own
    connection, started with the first recorded turn; :meth:`settle` waits for one to finish and
    :meth:`close` stops the thread.
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
        self._checkpointer = _Checkpointer(self.path, "NORMAL" if durable else "OFF")
        self._row_bytes = 0  # bytes of rows written since the WAL was last caught up
        self._passes = 0  # background checkpoint passes since then
        self._pass_start = 0  # _row_bytes when the latest pass started

    def _prepare(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app_id == 0 and not tables:
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before the first write fixes it
            db.execute("PRAGMA journal_mode=WAL")  # only possible outside a transaction
            db.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have created the journal since the check above.
                if db.execute("SELECT 1 FROM sqlite_master").fetchone() is None:
                    for statement in SCHEMA.split(";"):
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
        db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints: see _after_commit

    # -- writing -------------------------------------------------------------------------

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """One statement in its own transaction; SQLite failures become :class:`JournalError`."""
        try:
            return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise JournalError(f"cannot write to journal {self.path}: {exc}") from exc

    def start_game(
        self,
        *,
        env_id: str,
        config: Mapping[str, Any],
        seed: int | None,
        library_version: str,
        generator: Mapping[str, Any] | None = None,
    ) -> int:
        """Add a game and return its id.

        ``generator`` describes an injected instance generator, for games whose ``config`` alone
        does not say how to rebuild them (see the environment's replayer).
        """
        stored_seed: int | str | None = seed
        if seed is not None and not _INT64_MIN <= seed <= _INT64_MAX:
            stored_seed = str(seed)  # SQLite integers are 64-bit; keep big seeds exactly
        created = datetime.now(UTC).isoformat(timespec="seconds")
        cursor = self._write(
            "INSERT INTO games (env_id, config, generator, seed, library_version, created) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                env_id,
                encode_json(config),
                None if generator is None else encode_json(generator),
                stored_seed,
                library_version,
                created,
            ),
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
        """Store one turn (committed at once) and return its chained state hash in hex.

        ``observations`` and ``events`` are stored with :func:`encode_json`; ``actions`` exactly
        as received (an entry JSON cannot hold is stored as its ``repr``).
        """
        tail = self._tails.get(game_id)
        if tail is None:
            tail = self._load_tail(game_id)
        expected = tail[0] + 1
        if turn != expected:
            raise JournalError(
                f"game {game_id}: turn {turn} recorded out of order; the next turn is {expected}"
            )
        observations_json = encode_json_bytes(observations)
        actions_json = encode_received(actions)
        events_json = encode_json_bytes(events)
        state_hash = chain_state_hash(tail[1], state_digest)
        state_hex = state_hash.hex()
        record_hash = chain_record_hash(
            tail[2], state_hex, observations_json, actions_json, events_json
        )
        self._write(
            INSERT_TURN,
            (
                game_id,
                turn,
                observations_json,
                actions_json,
                events_json,
                state_hex,
                record_hash.hex(),
            ),
        )
        self._tails[game_id] = (turn, state_hash, record_hash)
        self._after_commit(len(observations_json) + len(actions_json) + len(events_json))
        return state_hex

    def _after_commit(self, row_bytes: int) -> None:
        """Keep the WAL short: checkpoint in the background, then catch up the rest inline.

        A background checkpoint copies what the WAL held when it started; turns written
        meanwhile are copied by another background pass, until what is left is small enough
        for the writer to copy itself at once (quick), so that the WAL starts over from its
        beginning at the next commit instead of growing.
        """
        self._row_bytes += row_bytes
        if self._passes == 0:
            if self._row_bytes >= CHECKPOINT_ROW_BYTES:
                self._start_pass()
            return
        if not self._checkpointer.idle.is_set():
            if self._row_bytes < 4 * CHECKPOINT_ROW_BYTES:
                return
            self._checkpointer.idle.wait()  # a stuck checkpoint: never let the WAL run away
        tail = self._row_bytes - self._pass_start
        if tail > CATCH_UP_ROW_BYTES and self._passes < 8:
            self._start_pass()
            return
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            raise JournalError(f"cannot checkpoint journal {self.path}: {exc}") from exc
        self._passes = 0
        self._row_bytes = 0

    def _start_pass(self) -> None:
        self._passes += 1
        self._pass_start = self._row_bytes
        self._checkpointer.request()

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
            row = self._db.execute(SELECT_GAME + " WHERE id = ?", (game_id,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot read game {game_id} of {self.path}: {exc}") from None
        if row is None:
            raise JournalError(f"no game {game_id} in {self.path}")
        game_id, env_id, config, generator, seed, version, created, outcome, count = row
        try:
            config_value = decode_json(config)
            generator_value = None if generator is None else decode_json(generator)
            outcome_value = None if outcome is None else decode_json(outcome)
            seed_value = None if seed is None else int(seed)
        except (TypeError, ValueError) as exc:
            raise CorruptTurnError(game_id, 0, f"game header is unreadable: {exc}") from None
        if not all(
            value is None or isinstance(value, dict)
            for value in (config_value, generator_value, outcome_value)
        ) or not isinstance(config_value, dict):
            raise CorruptTurnError(game_id, 0, "game config/generator/outcome is not a JSON object")
        return GameInfo(
            id=game_id,
            env_id=str(env_id),
            config=config_value,
            seed=seed_value,
            library_version=str(version),
            created=str(created),
            outcome=outcome_value,
            turn_count=int(count),
            generator=generator_value,
        )

    def games(self) -> list[GameInfo]:
        """Every game's header, oldest first."""
        return [self.game(game_id) for game_id in self.game_ids()]

    def turns(self, game_id: int) -> Iterator[TurnRecord]:
        """A game's turns in order; raises :class:`CorruptTurnError` at the first bad one."""
        from maze_envs.journal.verify import scan_turns

        for item in scan_turns(self, game_id):
            if isinstance(item, Problem):
                raise CorruptTurnError(game_id, item.turn, item.reason)
            yield item

    def load_game(self, game_id: int) -> GameRecord:
        """A whole game in memory (raises at the first bad turn)."""
        return GameRecord(self.game(game_id), list(self.turns(game_id)))

    def raw_turns(self, game_id: int) -> Iterator[tuple[Any, ...]]:
        """A game's stored rows as they are (turn, observations, actions, events, hashes)."""
        yield from self._db.execute(SELECT_TURNS, (game_id,))

    # -- lifetime ------------------------------------------------------------------------

    def settle(self) -> None:
        """Wait until no background checkpoint is running (benchmarks time this too)."""
        self._checkpointer.idle.wait()

    def close(self) -> None:
        """Close the file (every recorded turn is already committed)."""
        self._checkpointer.close()
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
