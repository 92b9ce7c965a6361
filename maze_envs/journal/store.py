"""The :class:`Journal`: opening a journal file, appending games and turns, reading them back."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from maze_envs.journal._writer_process import ERROR_LENGTH, HEADER
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
# After about this many bytes of rows the writer copies the WAL into the database file (a
# checkpoint), so that the WAL starts over from its beginning instead of growing.
CHECKPOINT_ROW_BYTES = 16 * 2**20

# A turn row as bound to INSERT_TURN: game id, turn, three JSON texts, two hashes.
_Row = tuple[int, int, bytes, bytes, bytes, str, str]
_WRITER_SCRIPT = Path(__file__).with_name("_writer_process.py")


class _Writer:
    """Hands turn rows to the journal's writer process (:mod:`._writer_process`), one at a time.

    The caller encodes a row and chains its hashes, then :meth:`submit` sends it and returns
    while that process commits it. At most one row is ever pending: :meth:`submit` first waits
    for the previous row's reply. A failed row's error is raised by the next :meth:`submit`,
    :meth:`flush` or :meth:`close`.
    """

    def __init__(self, path: Path, synchronous: str) -> None:
        self._path = path
        self._synchronous = synchronous
        self._process: subprocess.Popen[bytes] | None = None
        self._pending: tuple[int, int] | None = None  # (game id, turn) sent, not yet confirmed
        self.failed_game: int | None = None  # the game whose row failed, if one did
        self.committed: dict[int, int] = {}  # game id -> its last turn confirmed committed

    def _start(self) -> subprocess.Popen[bytes]:
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-I",  # standard library only: no site packages, no environment variables
                str(_WRITER_SCRIPT),
                str(self._path),
                self._synchronous,
                str(CHECKPOINT_ROW_BYTES),
                INSERT_TURN,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        return self._process

    def submit(self, row: _Row) -> None:
        """Send ``row`` once the previous row is committed; return without waiting for it."""
        self.flush()
        process = self._process if self._process is not None else self._start()
        assert process.stdin is not None
        game_id, turn, observations, actions, events, state_hash, record_hash = row
        state, record = state_hash.encode(), record_hash.encode()
        frame = b"".join(
            (
                HEADER.pack(
                    game_id,
                    turn,
                    len(observations),
                    len(actions),
                    len(events),
                    len(state),
                    len(record),
                ),
                observations,
                actions,
                events,
                state,
                record,
            )
        )
        try:
            process.stdin.write(frame)
            process.stdin.flush()
        except OSError:
            raise self._ended() from None
        except BaseException:  # interrupted mid-frame: the process cannot tell where rows start
            self._stop(kill=True)
            raise
        self._pending = (game_id, turn)

    def flush(self) -> None:
        """Wait until the pending row is committed; raise its error if it failed."""
        if self._pending is None:
            return
        game_id, turn = self._pending
        assert self._process is not None and self._process.stdout is not None
        replies = self._process.stdout
        reply = replies.read(1)
        self._pending = None
        if reply == b"+":
            self.committed[game_id] = turn
            return
        self.failed_game = game_id
        if reply != b"-":
            raise self._ended()
        (length,) = ERROR_LENGTH.unpack(replies.read(ERROR_LENGTH.size))
        message = replies.read(length).decode(errors="replace")
        raise JournalError(f"cannot write to journal {self._path}: {message}")

    def _ended(self) -> JournalError:
        assert self._process is not None
        code = self._process.wait()
        self._process = None
        return JournalError(
            f"cannot write to journal {self._path}: its writer process ended (exit status "
            f"{code}); the turns it confirmed are committed"
        )

    def close(self) -> None:
        """Wait for the pending row, then let the process exit; raise a failed row's error."""
        try:
            self.flush()
        finally:
            self._stop(kill=False)

    def _stop(self, *, kill: bool) -> None:
        process, self._process = self._process, None
        self._pending = None
        if process is None:
            return
        assert process.stdin is not None and process.stdout is not None
        if kill:
            process.kill()
        with contextlib.suppress(OSError):
            process.stdin.close()  # end of input: the process exits
        process.wait()
        process.stdout.close()


class Journal:
    """A SQLite journal of games (see :mod:`maze_envs.journal` for the format).

    ``Journal(path)`` creates the file when it does not exist; ``create=False`` refuses to.

    Turns are committed by a writer process (:mod:`._writer_process`, standard library only),
    started with the first recorded turn and ended by :meth:`close`; a process, not a thread,
    so that the commit runs on another core without competing for the GIL. :meth:`record_turn`
    encodes and hashes a turn, waits until the previous turn is committed, sends the new one and
    returns while it is committed (its own transaction). So at most one turn is uncommitted at
    any time, and a killed game loses at most that turn (when only the game's process is
    killed, the writer still commits the turn it holds, then exits). Everything else
    (:meth:`start_game`, :meth:`finish_game`, reads, :meth:`settle`, :meth:`close`) first waits
    for it. A failed commit raises :class:`JournalError` from the next call, never silently;
    the game's chain then continues from the last turn stored in the file, so the next turn
    recorded must follow that one.

    ``durable=True`` (``PRAGMA synchronous=NORMAL``) also keeps the file intact through an
    operating-system crash or power loss, at the price of flushing to disk at each WAL
    checkpoint (the writer copies the WAL into the file every ~16 MiB of rows);
    ``durable=False`` (``synchronous=OFF``) skips those flushes, for runs that can be repeated.
    (``synchronous=FULL``, a disk flush at every commit, would only add that the last turns
    survive a power loss; it costs several times a turn, so it is not offered.)
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
        self._writer = _Writer(self.path, "NORMAL" if durable else "OFF")

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
        db.execute("PRAGMA wal_autocheckpoint=0")  # the writer process checkpoints

    # -- writing -------------------------------------------------------------------------

    def _flush(self) -> None:
        """Wait for the turn being committed; raise its error, once, if it failed."""
        try:
            self._writer.flush()
        finally:
            failed = self._writer.failed_game
            if failed is not None:  # its chain tail is unknown: reload it from the file
                self._writer.failed_game = None
                self._tails.pop(failed, None)

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """One statement in its own transaction; SQLite failures become :class:`JournalError`."""
        self._flush()
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
        """Store one turn and return its chained state hash in hex.

        ``observations`` and ``events`` are stored with :func:`encode_json`; ``actions`` exactly
        as received (an entry JSON cannot hold is stored as its ``repr``).

        The row is encoded and hashed here, then committed (its own transaction) by the
        journal's writer process while the caller goes on. This call first waits until the
        previous turn is committed, so at most one turn is ever uncommitted, and raises the
        :class:`JournalError` of that turn if its commit failed.
        """
        tail = self._tails.get(game_id)
        if tail is None:
            self._flush()
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
        row = (game_id, turn, observations_json, actions_json, events_json, state_hex)
        self._flush()  # the previous turn's commit, overlapped with this turn's encoding
        self._writer.submit((*row, record_hash.hex()))
        self._tails[game_id] = (turn, state_hash, record_hash)
        return state_hex

    def committed_turn(self, game_id: int) -> int | None:
        """The last turn of ``game_id`` known to be committed (None: none yet), without waiting.

        The turn recorded last may be committed already without being counted yet: it is
        confirmed when the next call waits for it (every turn before it is confirmed).
        """
        return self._writer.committed.get(game_id)

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
        self._flush()
        try:
            return [r[0] for r in self._db.execute("SELECT id FROM games ORDER BY id")]
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot read the games of {self.path}: {exc}") from None

    def game(self, game_id: int) -> GameInfo:
        """One game's header; a missing game or unreadable header raises :class:`JournalError`."""
        self._flush()
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
        self._flush()
        yield from self._db.execute(SELECT_TURNS, (game_id,))

    # -- lifetime ------------------------------------------------------------------------

    def settle(self) -> None:
        """Wait until every recorded turn is committed (raises a failed commit's error)."""
        self._flush()

    def close(self) -> None:
        """Commit the last recorded turn and close the file (raises a failed commit's error)."""
        try:
            self._writer.close()
        finally:
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
