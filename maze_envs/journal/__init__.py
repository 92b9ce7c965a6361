"""The game journal: one SQLite file format for every environment in the library.

A journal holds many games, of any environments. Each game is a row of ``games`` (environment
id, configuration, the description of an injected instance generator if any, seed, library
version, creation time, ``meta``: what a runner attached, and, once finished, the outcome) and
one row of ``turns`` per turn: every agent's observation exactly as delivered, every action as
received, the turn's events, the policies' per-decision records (``decisions``,
``{agent: record}``) and two chained hashes. Turn 0 is the reset state (no actions); turn ``k``
holds the actions that led to state ``k``, the events of that step and the observations of state
``k``. Large text repeated across decisions (prompts) is stored once in ``blobs``
(:class:`Blob`, :mod:`.blobs`).

Values are JSON (:func:`encode_json`): numpy arrays become lists of numbers, so an environment
can rebuild its exact observation from the text and its spaces. Schema version 5 stores a turn as
one ``body`` (:mod:`.body`): its actions, its observations and events as what changed since the
game's previous turn (:mod:`.delta`: merges, text edits, references, a hint from the environment
of what changed) and its decisions, compressed in the game's deflate stream, with two 32-byte
hashes. Reading (:meth:`Journal.turns`) gives back every turn's full JSON text, byte for byte
what version 3 stored, or a few keys' values (:mod:`.decode`); versions 3 and 4 are read and
verified as before (read-only, :mod:`.legacy`).

``state_hash``
    ``sha256(previous state_hash + state_digest)`` where ``state_digest`` is the environment's
    canonical digest of its full state, and the previous hash of turn 0 is 32 zero bytes. Same
    seed and actions give the same chain, so a replay checks determinism turn by turn.
``record_hash``
    ``sha256(previous record_hash + state_hash + body)`` over the stored bytes (versions 3 and
    4: over the stored texts, NUL-separated), so an edited row is found even when it does not
    change what a replay computes. The stored bytes of turn ``k`` and the rows before it
    determine turn ``k``'s observations exactly, so the chain covers every observation.

A game of 16-byte hashes (``Journal(path, hash_size=16)``, what ``maze-envs bench`` writes)
keeps the first 16 bytes of each link, from 16 zero bytes (docs/journal.md, "Hash sizes").

Turns are committed (WAL mode) in the recording thread, by default in groups
(``Journal(path, durability="batch")``: 64 turns or 0.2 s of play per commit, and always at a
game's end or abort, :meth:`Journal.flush` and close; :mod:`.batch`), or each before
:meth:`Journal.record_turn` returns (``durability="turn"``); both store identical rows. A
process killed mid-game leaves a readable file holding every turn committed (with group commit,
all but at most the last batch); the game verifies as unfinished. A failed write raises
:class:`JournalError` from the call that made it, and an environment's :class:`Recorder` then
stores the game as aborted with the turns the file holds (``turns``) and the last turn the
environment returned (``turns_played``; :mod:`.recorder`). ``maze-envs verify`` fails a game whose
stored turns stop before its outcome's ``turns`` or ``turns_played``, naming the turns lost. The
file is marked with ``PRAGMA application_id`` and its format version (5) with ``PRAGMA
user_version``; version 3 and 4 files are read and verified (read-only), version 2 files refused.

An outcome with ``"aborted": true`` marks a game abandoned before its end (for instance reset
mid-game): its turns verify, but no end is expected.

Modules: :mod:`.format` (tables, encoding, hash chains), :mod:`.delta` (storing what changed),
:mod:`.body` (a turn's compressed body), :mod:`.delta_reader` and :mod:`.delta_values` (reading
what changed back, as JSON text or as a few keys' values), :mod:`.decode` (a stored row back to
a :class:`TurnRecord`), :mod:`.legacy` (versions 3 and 4), :mod:`.rows` (row types and the walk
over stored turns), :mod:`.blobs` (:class:`Blob`), :mod:`.connect` (opening, read-only or for
writing), :mod:`.batch` (group commit), :mod:`.gamerows` (a game's chain tail; a game's stored
rows, :class:`StoredGame`, copied between files), :mod:`.store` (the :class:`Journal`),
:mod:`.recorder` (the :class:`Recorder` every environment records through), :mod:`.verify`
(:func:`scan_turns`, :func:`verify_game`, the :class:`Replayer` protocol), :mod:`.capture` (what
replayers record into). Reading games for the viewer and the analysis (Maze Escape tracks, AGI
Maze steps) is a floor of its own above the environments, :mod:`maze_envs.reading`, which
nothing else here imports.

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> with Journal(path) as journal:
    ...     game = journal.start_game(env_id="toy", config={}, seed=1, library_version="0",
    ...                               meta={"run_key": "toy/1"})
    ...     _ = journal.record_turn(game, 0, observations={"A": 0}, actions={}, events={},
    ...                             state_digest=b"start")
    ...     _ = journal.record_turn(game, 1, observations={"A": 1}, actions={"A": 1},
    ...                             events={}, state_digest=b"moved",
    ...                             decisions={"A": {"prompt": Blob("long prompt")}})
    ...     journal.finish_game(game, {"success": True, "turns": 1})
    >>> with Journal(path, readonly=True) as journal:
    ...     turns = list(journal.turns(game))
    ...     [t.observations for t in turns], journal.resolve(turns[1].decisions)
    ...     journal.completed_keys()
    ([{'A': 0}, {'A': 1}], {'A': {'prompt': 'long prompt'}})
    {'toy/1'}
"""

from __future__ import annotations

from maze_envs.journal.blobs import Blob
from maze_envs.journal.format import (
    APPLICATION_ID,
    GENESIS_HASH,
    SCHEMA_VERSION,
    CorruptTurnError,
    JournalError,
    chain_record_hash,
    chain_state_hash,
    decode_json,
    encode_json,
    encode_json_bytes,
)
from maze_envs.journal.gamerows import StoredGame
from maze_envs.journal.recorder import Recorder
from maze_envs.journal.rows import GameInfo, GameRecord, Problem, TurnRecord
from maze_envs.journal.store import Journal
from maze_envs.journal.verify import Replayer, ReplayStep, VerifyReport, scan_turns, verify_game

__all__ = [
    "APPLICATION_ID",
    "GENESIS_HASH",
    "SCHEMA_VERSION",
    "Blob",
    "CorruptTurnError",
    "GameInfo",
    "GameRecord",
    "Journal",
    "JournalError",
    "Problem",
    "Recorder",
    "ReplayStep",
    "Replayer",
    "StoredGame",
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
