"""The game journal: one SQLite file format for every environment in the library.

A journal holds many games. Each game is a row of ``games`` (environment id, configuration,
the description of an injected instance generator if any, seed, library version, creation time
and, once finished, the outcome) and one row of ``turns`` per turn: every agent's observation
exactly as delivered, every action exactly as received, the turn's events, and two chained
hashes. Turn 0 is the reset state (no actions); turn ``k`` holds the actions that led to state
``k``, the events of that step and the observations of state ``k``.

Values are stored as compact JSON (:func:`encode_json`): numpy arrays become lists of numbers,
so an environment can rebuild its exact observation from the stored text and its spaces.

``state_hash``
    ``sha256(previous state_hash + state_digest)`` where ``state_digest`` is the environment's
    canonical digest of its full state, and the previous hash of turn 0 is 32 zero bytes. Same
    seed and actions give the same chain, so a replay checks determinism turn by turn.
``record_hash``
    ``sha256(previous record_hash + state_hash + observations + actions + events)`` over the
    stored text, so an edited row is found even when it does not change what a replay computes.

Every turn is committed on its own (WAL mode), by a writer process that commits one turn while
the game computes the next; at most one turn is ever uncommitted, so a process killed mid-game
loses at most that turn and leaves a readable file. The file is marked with
``PRAGMA application_id`` and its format version with ``PRAGMA user_version``.

An outcome with ``"aborted": true`` marks a game abandoned before its end (for instance reset
mid-game): its turns verify, but no end is expected.

Modules: :mod:`.format` (tables, encoding, hash chains, row types), :mod:`.store` (the
:class:`Journal`), :mod:`._writer_process` (the writer process), :mod:`.verify`
(:func:`scan_turns`, :func:`verify_game`, the :class:`Replayer` protocol).

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

from maze_envs.journal.format import (
    APPLICATION_ID,
    GENESIS_HASH,
    SCHEMA_VERSION,
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
)
from maze_envs.journal.store import Journal
from maze_envs.journal.verify import Replayer, ReplayStep, VerifyReport, scan_turns, verify_game

__all__ = [
    "APPLICATION_ID",
    "GENESIS_HASH",
    "SCHEMA_VERSION",
    "CorruptTurnError",
    "GameInfo",
    "GameRecord",
    "Journal",
    "JournalError",
    "Problem",
    "ReplayStep",
    "Replayer",
    "TurnRecord",
    "VerifyReport",
    "chain_record_hash",
    "chain_state_hash",
    "decode_json",
    "encode_json",
    "encode_json_bytes",
    "scan_turns",
    "verify_game",
]
