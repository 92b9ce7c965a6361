"""The :class:`Journal`: opening a journal file, appending games and turns, reading them back."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import weakref
from collections.abc import Collection, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import maze_envs.journal.batch as batching
from maze_envs.journal.batch import TurnBatch, check_durability, write_at_exit
from maze_envs.journal.blobs import blob_key, encode_decisions, resolve_blobs
from maze_envs.journal.body import BodyPacker
from maze_envs.journal.connect import (
    BUSY_TIMEOUT,
    integrity_problems,
    open_readonly,
    open_writable,
)
from maze_envs.journal.decode import TurnDecoder
from maze_envs.journal.delta import DeltaWriter, Hint
from maze_envs.journal.format import (
    HASH_SIZES,
    SCHEMA_VERSION,
    SELECT_HEADER,
    TURNS,
    CorruptTurnError,
    JournalError,
    chain_body_hash,
    chain_state_hash,
    encode_json,
    encode_received,
    genesis,
    of_game,
    select_game,
    select_turns,
)
from maze_envs.journal.gamerows import StoredGame, insert_game, read_tail, stored_game
from maze_envs.journal.legacy import LegacyRowDecoder
from maze_envs.journal.rows import (
    EDITED,
    GameInfo,
    GameRecord,
    RowDecoder,
    TurnRecord,
    completed_run_keys,
    game_info,
    scan_rows,
)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# After about this many bytes of rows the journal copies the WAL into the database file (a
# checkpoint), so that the WAL starts over from its beginning instead of growing.
CHECKPOINT_ROW_BYTES = 16 * 2**20


class Journal:
    """A SQLite journal of games (see :mod:`maze_envs.journal` for the format).

    ``Journal(path)`` creates the file when it does not exist (an existing empty file becomes a
    journal too); ``create=False`` refuses to, and refuses an empty file, leaving it untouched.
    ``readonly=True`` opens an existing journal strictly for reading: nothing is ever written,
    so it works on a read-only file and in a read-only directory (see
    :mod:`maze_envs.journal.connect`); the writing methods then raise :class:`JournalError`.
    New files are of schema version 5 (:attr:`schema_version`); files of versions 3 and 4
    open read-only and read and verify as before (their games are not extended).

    ``durability`` says when turns are committed, always in the caller's thread (docs/journal.md):
    ``"batch"`` (the default, group commit, :mod:`.batch`) commits pending rows 64 at a time or
    0.2 s after the last commit, and before any other write or read through this journal; a
    failed commit raises :class:`JournalError` from the call that made it, naming the turns
    lost. ``"turn"`` commits every turn before :meth:`record_turn` returns. Both store
    byte-identical rows; :meth:`committed_turn` is what the file holds.

    ``durable=True`` (``PRAGMA synchronous=NORMAL``) also keeps the file intact through an
    operating-system crash or power loss, at the price of flushing to disk at each WAL
    checkpoint (the journal copies the WAL into the file every ~16 MiB of rows);
    ``durable=False`` (``synchronous=OFF``) skips those flushes, for runs that can be repeated.

    ``busy_timeout``: seconds a write waits while another connection holds the file's write
    lock (30 by default); past it the write fails with :class:`JournalError`.

    ``changes`` (default True): store each turn's observations and events as what changed since
    the game's previous turn, compressed in the game's stream (:mod:`.delta`, :mod:`.body`).
    ``changes=False`` stores every turn whole, each readable on its own (for comparison: the
    file is several times larger); both read back identically.

    ``hash_size``: the bytes of each stored hash of the games this journal starts: 32 (SHA-256,
    the default) or 16 (its first 128 bits, half a turn's hash bytes; what ``maze-envs bench``
    writes; docs/journal.md, "Hash sizes"). A game keeps the size it started with; games of
    both sizes read and verify alike.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        durable: bool = True,
        readonly: bool = False,
        durability: str = "batch",
        busy_timeout: float = BUSY_TIMEOUT,
        changes: bool = True,
        hash_size: int = HASH_SIZES[0],
    ) -> None:
        self.path = Path(path)
        #: The "previous hash" of the first turn of the games this journal starts.
        self._genesis = genesis(hash_size)
        self.durable = durable
        self.readonly = readonly
        #: ``"batch"`` (group commit) or ``"turn"`` (each turn committed by ``record_turn``).
        self.durability = check_durability(durability)
        #: Whether turns are stored as what changed (else whole).
        self.changes = changes
        #: The file's schema version (:data:`~.format.READABLE_VERSIONS`).
        self.schema_version = SCHEMA_VERSION
        if readonly:
            self._db, self.schema_version = open_readonly(self.path, busy_timeout)
        else:
            self._db = open_writable(
                self.path, create=create, durable=durable, timeout=busy_timeout
            )
        # game id -> (last turn, last state hash, last record hash), for appending turns
        self._tails: dict[int, tuple[int, bytes, bytes]] = {}
        self._stored_blobs: set[str] = set()  # blob keys known to be in the file
        self._written = 0  # bytes of rows since the last checkpoint
        self._batch = TurnBatch()  # rows recorded but not committed yet
        self._committed: dict[int, int] = {}  # game id -> last turn committed to the file
        self._lost: dict[int, str] = {}  # game id -> which of its turns a failed commit lost
        # game id -> the writers of its observations and events and its stream (what the last
        # turn was)
        self._changes: dict[int, tuple[DeltaWriter, DeltaWriter, BodyPacker]] = {}
        self._last_commit = time.monotonic()
        self._at_exit = weakref.finalize(self, write_at_exit, self._db, self._batch)

    @classmethod
    def open_readonly(cls, path: str | os.PathLike[str]) -> Journal:
        """``Journal(path, readonly=True)``."""
        return cls(path, readonly=True)

    # -- writing -------------------------------------------------------------------------

    def _writable(self) -> sqlite3.Connection:
        if self.readonly:
            raise JournalError(f"journal {self.path} is open read-only")
        return self._db

    def _execute(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """One statement in its own transaction; SQLite failures become :class:`JournalError`.

        Pending turns are written first, so the file's order is the order of the calls.
        """
        self.flush()
        try:
            return self._writable().execute(sql, params)
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
        meta: Mapping[str, Any] | None = None,
    ) -> int:
        """Add a game and return its id.

        ``generator`` describes an injected instance generator, for games whose ``config`` alone
        does not say how to rebuild them (see the environment's replayer); ``meta`` is what a
        runner attaches to the game (run key for resuming, policy specs, harness settings).
        """
        stored_seed: int | str | None = seed
        if seed is not None and not _INT64_MIN <= seed <= _INT64_MAX:
            stored_seed = str(seed)  # SQLite integers are 64-bit; keep big seeds exactly
        created = datetime.now(UTC).isoformat(timespec="seconds")
        cursor = self._execute(
            "INSERT INTO games (env_id, config, generator, seed, library_version, created, meta) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                env_id,
                encode_json(config),
                None if generator is None else encode_json(generator),
                stored_seed,
                library_version,
                created,
                None if meta is None else encode_json(meta),
            ),
        )
        game_id = cursor.lastrowid
        assert game_id is not None
        if game_id * TURNS >= 2**63:  # (a turn's key: game_id * TURNS + turn)
            self._execute("DELETE FROM games WHERE id = ?", (game_id,))
            raise JournalError(f"journal {self.path} holds as many games as it can")
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
        decisions: Mapping[str, Any] | None = None,
        changed: Hint | None = None,
    ) -> str:
        """Store one turn and return its chained state hash (committed as ``durability`` says).

        ``observations`` and ``events`` are stored as what changed since the game's previous
        turn, read back as :func:`~.format.encode_json` writes them; ``actions`` as received
        (they must be JSON data: :func:`~.format.encode_received`); ``decisions``
        (``{agent: record}``, the policies' per-decision records, may hold
        :class:`~maze_envs.journal.Blob` text) as described in :mod:`maze_envs.journal.blobs`.
        ``changed`` is the environment's hint of what changed in the observations
        (``{agent: keys}``, :mod:`.delta`); without it every observation is walked whole.
        Turns of a game are numbered from 0 without gaps. A failure raises
        :class:`JournalError` and stores nothing of the turn; with ``durability="batch"`` a
        failed commit of the pending batch raises here too, naming the turns lost.
        """
        db = self._writable()
        tail = self._tails.get(game_id)
        if tail is None:
            tail = self._load_tail(game_id)
        expected = tail[0] + 1
        if turn != expected:
            lost = self._lost.get(game_id, "")
            raise JournalError(
                f"game {game_id}: turn {turn} recorded out of order; the next turn is {expected}"
                + (f" ({lost})" if lost else "")
            )
        if self._lost:
            self._lost.pop(game_id, None)
        if turn >= TURNS:
            raise JournalError(f"game {game_id}: a game holds at most {TURNS} turns")
        actions_json = encode_received(actions)
        writers = self._changes.get(game_id)
        if writers is None:  # a game's first turn here: it starts a stream, stored whole
            writers = (DeltaWriter(), DeltaWriter(), BodyPacker(whole=not self.changes))
            if self.changes:
                self._changes[game_id] = writers
        try:
            observations_item = writers[0].encode(observations, changed, actions)
            events_item = writers[1].encode(events)
            decisions_json, texts = encode_decisions(decisions)
        except (TypeError, ValueError) as exc:  # an environment's or a policy's bug
            self._changes.pop(game_id, None)  # the next turn starts a new stream
            raise JournalError(f"cannot record turn {turn} of game {game_id}: {exc}") from None
        body = writers[2].pack((actions_json, observations_item, events_item, decisions_json))
        state_hash = chain_state_hash(tail[1], state_digest)
        record_hash = chain_body_hash(tail[2], state_hash, body)
        row = (game_id, turn, body, state_hash, record_hash)
        new_blobs = [(k, t) for k, t in texts.items() if k not in self._stored_blobs]
        self._batch.add(row, new_blobs)
        self._tails[game_id] = (turn, state_hash, record_hash)
        self._written += len(body) + 100
        if (
            self.durability == "turn"
            or len(self._batch) >= batching.BATCH_ROWS
            or time.monotonic() - self._last_commit >= batching.BATCH_SECONDS
        ):
            self._write_batch(db)
        return state_hash.hex()

    def flush(self) -> None:
        """Commit every pending turn now (nothing to do with ``durability="turn"``).

        A failure raises :class:`JournalError` naming the turns lost; nothing of them is stored.
        """
        if len(self._batch):
            self._write_batch(self._writable())

    def _write_batch(self, db: sqlite3.Connection) -> None:
        batch = self._batch
        what, last_turns, blob_keys = batch.describe(), batch.last_turns(), list(batch.blob_keys)
        try:
            batch.write(db)  # empties the batch, whatever happens
        except sqlite3.Error as exc:
            message = f"cannot write {what} to journal {self.path}: {exc}"
            for game_id in last_turns:
                self._tails.pop(game_id, None)  # reload the chain's tail from the file next time
                self._changes.pop(game_id, None)  # and store its next turn whole
                self._lost[game_id] = message
            raise JournalError(message) from exc
        finally:
            self._last_commit = time.monotonic()
        self._committed.update(last_turns)
        self._stored_blobs.update(blob_keys)
        if self._written >= CHECKPOINT_ROW_BYTES:
            self._checkpoint()

    def _checkpoint(self) -> None:
        # Copy the WAL into the file now and then, so that it starts over instead of growing.
        # A checkpoint that cannot finish (a reader holds old pages) loses nothing: the rows are
        # committed in the WAL, and the next one retries.
        self._written = 0
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

    def committed_turn(self, game_id: int) -> int | None:
        """The last turn of ``game_id`` in the file, as this journal knows it (None: none yet).

        That is the last turn this journal committed, or, for a game it continues, the last one
        the file held; recorded turns still pending in the batch do not count.
        """
        return self._committed.get(game_id)

    def pending_turns(self) -> int:
        """How many recorded turns (of any game) are not committed yet."""
        return len(self._batch)

    def _load_tail(self, game_id: int) -> tuple[int, bytes, bytes]:
        try:
            tail = read_tail(self._db, self.path, game_id, self._genesis)
            if tail[0] >= 0:
                self._committed[game_id] = tail[0]
            return tail
        except sqlite3.Error as exc:
            raise JournalError(f"cannot read game {game_id} of {self.path}: {exc}") from None

    def last_stored_turn(self, game_id: int) -> int | None:
        """The highest turn number stored for ``game_id`` (None: no turn)."""
        sql = f"SELECT MAX(turn) FROM turns WHERE {of_game(self.schema_version)}"
        value = self._read(sql, (game_id,))[0][0]
        return None if value is None else int(value)

    def finish_game(self, game_id: int, outcome: Mapping[str, Any]) -> None:
        """Store the game's outcome; no turns can be added afterwards.

        An outcome's ``turns`` (when it has one) is the game's last turn: it may not claim a turn
        the file does not hold (:class:`JournalError`, nothing stored).
        """
        claimed = outcome.get("turns")
        if isinstance(claimed, int) and not isinstance(claimed, bool):
            last = self.last_stored_turn(game_id)
            if claimed > (-1 if last is None else last):
                raise JournalError(
                    f"game {game_id}: the outcome claims {claimed} turns but the journal holds "
                    f"{'no turn' if last is None else f'turns up to {last}'}"
                )
        cursor = self._execute(
            "UPDATE games SET outcome = ? WHERE id = ? AND outcome IS NULL",
            (encode_json(outcome), game_id),
        )
        if cursor.rowcount != 1:
            raise JournalError(f"game {game_id} does not exist or is already finished")
        self._tails.pop(game_id, None)
        self._committed.pop(game_id, None)
        self._changes.pop(game_id, None)

    def copy_game(self, source: Journal, game_id: int) -> int:
        """Copy game ``game_id`` of ``source`` into this journal, verbatim; return its new id.

        The header, every turn row (hashes included, so the copy verifies exactly like the
        original) and the blobs its decisions reference are copied in one transaction: a copy
        is whole or absent (:meth:`stored_game`, then :meth:`add_stored_game`).
        """
        self._writable()
        return self.add_stored_game(source.stored_game(game_id))

    def stored_game(self, game_id: int) -> StoredGame:
        """Game ``game_id``'s rows as this file stores them (:class:`~.gamerows.StoredGame`): what
        :meth:`add_stored_game` stores in another journal of the same schema version."""
        self.flush()
        try:
            return stored_game(self._db, self.path, game_id, self.schema_version)
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot read game {game_id} of {self.path}: {exc}") from None

    def add_stored_game(self, game: StoredGame) -> int:
        """Store a game's rows read from another journal (:meth:`stored_game`), verbatim, as a new
        game of this one, in one transaction (whole or absent); return its id.

        The rows are not decoded, so they must come from a file of this file's schema version
        (:class:`JournalError` otherwise); the game verifies exactly as it did where it was
        recorded.
        """
        self.flush()
        db = self._writable()
        if game.schema_version != self.schema_version:
            raise JournalError(
                f"cannot copy game {game.game_id} of {game.source} (schema version "
                f"{game.schema_version}) into {self.path} (version {self.schema_version}): "
                "rows are copied verbatim, so both files must be of the same version"
            )
        new_id = insert_game(db, self.path, game)
        self._stored_blobs.update(key for key, _ in game.blobs)
        return new_id

    # -- reading -------------------------------------------------------------------------

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self.flush()  # a reader of this journal sees every turn recorded
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot read {self.path}: {exc}") from None

    def game_ids(self) -> list[int]:
        """Ids of every game in the file, oldest first."""
        return [r[0] for r in self._read("SELECT id FROM games ORDER BY id")]

    def game(self, game_id: int) -> GameInfo:
        """One game's header; a missing game or unreadable header raises :class:`JournalError`.

        ``turn_count`` is -1 when the turns cannot be counted (a damaged file whose index pages
        are lost; :func:`~maze_envs.journal.verify_game` then names the first unreadable turn).
        """
        try:
            rows = self._read(select_game(self.schema_version) + " WHERE id = ?", (game_id,))
        except JournalError:
            rows = [(*row, -1) for row in self._read(SELECT_HEADER, (game_id,))]
        if not rows:
            raise JournalError(f"no game {game_id} in {self.path}")
        return game_info(rows[0])

    def games(self) -> list[GameInfo]:
        """Every game's header, oldest first."""
        return [
            game_info(row) for row in self._read(select_game(self.schema_version) + " ORDER BY id")
        ]

    def turns(
        self,
        game_id: int,
        *,
        observations: bool | Collection[str] = True,
        events: Collection[str] | None = None,
        shared: bool = False,
    ) -> Iterator[TurnRecord]:
        """A game's turns in order, every observation and event whole (as recorded), whatever
        the file's version; raises :class:`CorruptTurnError` at the first bad one.

        ``observations=False`` leaves each record's observations empty (``{}``) and skips
        rebuilding them, for readers that need only actions, events and decisions; a collection
        of keys (``{"notebook", "teammate_notebooks"}``) keeps only those keys of each agent's
        observation, rebuilt without their JSON text (``raw_observations`` and ``raw_events``
        are then ``""``): several times faster for a reader that needs a few of them; with it,
        ``events`` (a collection of keys) keeps only those keys of each agent's events (a
        version 5 file; older files give every key). With a collection of keys,
        ``shared=True`` (a version 5 file) makes only what changed from turn to turn: an
        agent's observation and events dicts that did not change are the very objects of the
        turn before (read-only; what the analysis of thousands of games reads).
        """
        decoder = self.row_decoder(observations=observations, events=events, shared=shared)
        for item in scan_rows(self.raw_turns(game_id), sqlite3.DatabaseError, decoder):
            if not isinstance(item, tuple):
                raise CorruptTurnError(game_id, item.turn, item.reason)
            record, intact = item
            if not intact:
                raise CorruptTurnError(game_id, record.turn, EDITED)
            yield record

    def load_game(self, game_id: int) -> GameRecord:
        """A whole game in memory (raises at the first bad turn)."""
        return GameRecord(self.game(game_id), list(self.turns(game_id)))

    def row_decoder(
        self,
        *,
        observations: bool | Collection[str] = True,
        events: Collection[str] | None = None,
        shared: bool = False,
        values: bool = True,
    ) -> RowDecoder:
        """A decoder of one game's stored rows of this file (see :class:`~.rows.RowDecoder`;
        ``values=False``: version 5 records hold the observations' and events' texts only)."""
        if self.schema_version >= 5:
            return TurnDecoder(
                observations=observations, events=events, shared=shared, values=values
            )
        return LegacyRowDecoder(self.schema_version, observations=observations)

    def raw_turns(self, game_id: int) -> Iterator[tuple[Any, ...]]:
        """A game's stored rows as they are (:data:`~.format.TURN_COLUMNS` of the file's
        version): in version 5 ``(turn, body, state_hash, record_hash)``, the body compressed
        (:mod:`.body`); in versions 3 and 4 the four JSON texts and the two hashes as hex.

        A damaged file raises ``sqlite3.DatabaseError`` from the row it cannot read
        (:func:`~maze_envs.journal.rows.scan_rows` reports it as a problem).
        """
        self.flush()
        yield from self._db.execute(select_turns(self.schema_version), (game_id,))

    def blob_content(self, key: str) -> str | None:
        """The stored text of blob ``key`` as it is (not checked), or None when absent."""
        rows = self._read("SELECT content FROM blobs WHERE key = ?", (key,))
        return None if not rows else rows[0][0]

    def blob(self, key: str) -> str:
        """The text of blob ``key``; :class:`JournalError` when it is absent or was changed."""
        content = self.blob_content(key)
        if content is None:
            raise JournalError(f"no blob {key} in {self.path}")
        if not isinstance(content, str) or blob_key(content) != key:
            raise JournalError(f"blob {key} in {self.path} was changed after it was recorded")
        return content

    def resolve(self, value: Any) -> Any:
        """``value`` (e.g. a turn's ``decisions``) with every ``{"$blob": key}`` expanded."""
        return resolve_blobs(value, self.blob)

    def completed_keys(self, field: str = "run_key") -> set[Any]:
        """The ``meta[field]`` values of every game with an outcome that is not aborted.

        What a resumable runner skips on a rerun. Values that are not JSON scalars are left out.
        """
        rows = self._read(
            "SELECT meta, outcome FROM games WHERE meta IS NOT NULL AND outcome IS NOT NULL"
        )
        return completed_run_keys(rows, field)

    def check_integrity(self) -> None:
        """Raise :class:`JournalError` when the file is damaged (SQLite's ``quick_check``).

        What a run that continues a journal (``maze-envs bench --resume``) calls first, so a
        damaged file is refused with a message instead of failing midway. It reads the whole
        file (about a second per 200 MB).
        """
        self.flush()
        problems = integrity_problems(self._db)
        if problems:
            raise JournalError(
                f"journal {self.path} is damaged (SQLite's quick_check: {problems}); "
                f"`maze-envs verify {self.path}` shows which games are intact"
            )

    # -- lifetime ------------------------------------------------------------------------

    def settle(self) -> None:
        """Commit every pending turn (:meth:`flush`): what a runner calls before reading."""
        self.flush()

    def close(self) -> None:
        """Commit pending turns, then close the file (the last connection to close copies the
        WAL into it). A failed commit raises :class:`JournalError` once the file is closed."""
        self._at_exit.detach()
        try:
            self.flush()
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
