"""The generic half of replay: row integrity and driving an environment's replayer.

:func:`scan_turns` walks a game's rows and reports the first unreadable, missing or edited one
(a changed blob included); :func:`verify_game` also drives an environment's :class:`Replayer`
through the recorded actions and reports the first turn that disagrees with the journal, and
checks that the game's outcome claims exactly the turns the file holds and that no turn it says
was played (``turns_played``, written when the journal failed) is missing.

Which replayer belongs to which environment is not known here (the journal never imports an
environment): :mod:`maze_envs.verify` maps env ids to replayers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from maze_envs.journal.blobs import blob_key, references
from maze_envs.journal.format import (
    GENESIS_HASH,
    HASH_SIZES,
    CorruptTurnError,
    JournalError,
    chain_state_hash,
    decode_json,
    encode_json,
    encode_json_bytes,
    genesis,
)
from maze_envs.journal.rows import EDITED, GameInfo, Problem, ProblemKind, TurnRecord, scan_rows
from maze_envs.journal.store import Journal

Status = Literal["ok", "aborted", "failed", "unfinished"]


class _BlobCheck:
    """Checks the blob references of a game's decisions (each key read once)."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._seen: dict[str, Problem | None] = {}

    def __call__(self, record: TurnRecord) -> Problem | None:
        for key in references(record.decisions):
            if key not in self._seen:
                self._seen[key] = self._check(key)
            problem = self._seen[key]
            if problem is not None:
                return Problem(record.turn, problem.kind, problem.reason)
        return None

    def _check(self, key: str) -> Problem | None:
        try:
            content = self._journal.blob_content(key)
        except JournalError as exc:
            return Problem(0, "unreadable", f"blob {key[:12]}… cannot be read ({exc})")
        if content is None:
            return Problem(0, "missing", f"blob {key[:12]}… referenced by the decisions is absent")
        if not isinstance(content, str) or blob_key(content) != key:
            return Problem(
                0, "edited", f"blob {key[:12]}… was changed after it was recorded (not its hash)"
            )
        return None


def _scan(
    journal: Journal, game_id: int, values: bool = True
) -> Iterator[tuple[TurnRecord, bool] | Problem]:
    decoder = journal.row_decoder(values=values)
    return scan_rows(journal.raw_turns(game_id), sqlite3.DatabaseError, decoder)


def scan_turns(journal: Journal, game_id: int) -> Iterator[TurnRecord | Problem]:
    """Yield a game's turns in order and stop after yielding the first :class:`Problem`.

    Checks that turns are contiguous from 0, that every row decodes, that the record-hash
    chain matches the stored text (so an edited row is caught at its own turn) and that every
    blob its decisions reference is present and unchanged.
    """
    blobs = _BlobCheck(journal)
    for item in _scan(journal, game_id):
        if isinstance(item, Problem):
            yield item
            return
        record, intact = item
        if not intact:
            yield Problem(record.turn, "edited", EDITED)
            return
        problem = blobs(record)
        if problem is not None:
            yield problem
            return
        yield record


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
    """Result of verifying one game.

    ``status``: ``"ok"`` (every turn verifies and the game ended as its outcome says),
    ``"aborted"`` (every stored turn verifies; the game was abandoned before its end),
    ``"unfinished"`` (every stored turn verifies, but the game has no outcome: its process died
    or it is still being played), ``"failed"`` (``problem`` names the first bad turn).
    ``replayed`` is False when only the stored rows were checked (no replayer).
    """

    game_id: int
    status: Status
    turns_verified: int  # rows from turn 0 on that passed every check
    problem: Problem | None  # the first bad turn, when failed
    replayed: bool = True

    @property
    def ok(self) -> bool:
        """Every stored turn verifies and none is missing (an aborted game included)."""
        return self.status in {"ok", "aborted"}

    def describe(self) -> str:
        """One line for people."""
        rows_only = "" if self.replayed else " (stored rows only: no replayer for this env)"
        if self.status == "ok":
            return f"game {self.game_id}: ok, {self.turns_verified} turns verified{rows_only}"
        if self.status == "aborted":
            return (
                f"game {self.game_id}: ok, {self.turns_verified} turns verified "
                f"(abandoned before its end){rows_only}"
            )
        if self.status == "unfinished":
            return (
                f"game {self.game_id}: unfinished (no outcome); the {self.turns_verified} "
                f"stored turns verify{rows_only}"
            )
        assert self.problem is not None
        return (
            f"game {self.game_id}: FAILED at turn {self.problem.turn} "
            f"({self.problem.kind}): {self.problem.reason}"
        )


def _first_difference(stored: Mapping[str, Any], replayed: Mapping[str, Any]) -> str:
    for key in sorted(set(stored) | set(replayed), key=str):
        if encode_json(stored.get(key)) != encode_json(replayed.get(key)):
            return f"{key!r}: stored {_short(stored.get(key))}, replay {_short(replayed.get(key))}"
    return "the stored text differs in form"


def _short(value: Any, limit: int = 120) -> str:
    text = encode_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _claimed_turns(outcome: Mapping[str, Any], key: str = "turns") -> int | None:
    turns = outcome.get(key)
    return turns if isinstance(turns, int) and not isinstance(turns, bool) else None


def _unstored(outcome: Mapping[str, Any], last_stored: int) -> Problem | None:
    """The turns an outcome says were played (``turns_played``) but the file does not hold."""
    played = _claimed_turns(outcome, "turns_played")
    if played is None or played <= last_stored:
        return None
    first = last_stored + 1
    span = f"turn {first} was" if played == first else f"turns {first}-{played} were"
    error = outcome.get("journal_error")
    why = f"; the journal failed: {error}" if isinstance(error, str) and error else ""
    return Problem(first, "missing", f"{span} played but never stored{why}")


def verify_game(
    journal: Journal, game_id: int, replayer: Callable[[], Replayer] | None = None
) -> VerifyReport:
    """Check one game: row integrity always, and a full replay when ``replayer`` is given.

    Every stored turn is compared with the replay: the chained state hash, each agent's
    observation and the events, byte for byte as stored. The outcome's ``turns`` (the game's
    last turn, when the outcome has one) must be exactly the last stored turn, so a game whose
    turns stop before its outcome says fails at the first missing turn, and so does a game whose
    outcome's ``turns_played`` (the last turn the environment returned to its caller, written
    when the journal failed) is past the last stored turn: an abandoned game verifies only when
    nothing it returned is missing. The report names the first turn that fails. A game without
    an outcome is reported unfinished once its stored turns are checked.
    """
    replayed = replayer is not None

    def report(status: Status, verified: int, problem: Problem | None = None) -> VerifyReport:
        return VerifyReport(game_id, status, verified, problem, replayed)

    def failed(turn: int, kind: ProblemKind, reason: str, verified: int) -> VerifyReport:
        return report("failed", verified, Problem(turn, kind, reason))

    try:
        info = journal.game(game_id)
    except CorruptTurnError as exc:
        return failed(exc.turn, "unreadable", exc.reason, 0)
    except JournalError as exc:  # e.g. a damaged file whose header pages cannot be read
        return failed(0, "unreadable", f"the game header cannot be read ({exc})", 0)
    try:
        live = replayer() if replayer is not None else None
    except Exception as exc:  # e.g. the environment's module cannot be imported here
        return failed(0, "replay_error", f"{type(exc).__name__}: {exc}", 0)
    blobs = _BlobCheck(journal)
    previous_state = GENESIS_HASH
    verified = 0
    last: ReplayStep | None = None
    # (the replay is compared with the stored texts: their values are parsed on a mismatch only)
    for scanned in _scan(journal, game_id, values=False):
        if isinstance(scanned, Problem):
            return report("failed", verified, scanned)
        item, intact = scanned
        if live is not None:
            if last is not None and last.done:
                return failed(
                    item.turn, "extra", "a turn was recorded after the game ended", verified
                )
            if item.turn == 0:  # the state chain is as long as the game's stored hashes
                size = len(item.record_hash) // 2
                previous_state = genesis(size) if size in HASH_SIZES else GENESIS_HASH
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
            if encode_json_bytes(last.observations) != item.raw_observations.encode():
                detail = _first_difference(decode_json(item.raw_observations), last.observations)
                return failed(item.turn, "mismatch", f"observation differs: {detail}", verified)
            if encode_json_bytes(last.events) != item.raw_events.encode():
                detail = _first_difference(decode_json(item.raw_events), last.events)
                return failed(item.turn, "mismatch", f"events differ: {detail}", verified)
        if not intact:  # (with a replay: it agrees, but the text is not what was recorded)
            return failed(item.turn, "edited", EDITED, verified)
        blob_problem = blobs(item)
        if blob_problem is not None:
            return report("failed", verified, blob_problem)
        verified += 1
    if info.outcome is None:
        return report("unfinished", verified)
    unstored = _unstored(info.outcome, verified - 1)
    if unstored is not None:  # returned to the caller, lost by the journal: never ok
        return report("failed", verified, unstored)
    claimed = _claimed_turns(info.outcome)
    if verified == 0:
        if claimed == -1 and info.outcome.get("aborted") is True:
            return report("aborted", 0)  # stopped before turn 0 was returned: nothing lost
        return failed(0, "missing", "the game has an outcome but no turns", 0)
    if claimed is not None and claimed > verified - 1:
        return failed(
            verified,
            "missing",
            f"the outcome says the game reached turn {claimed}, but the journal holds turns "
            f"0 to {verified - 1} only: turn {verified} is the first missing",
            verified,
        )
    if claimed is not None and claimed < verified - 1:
        return failed(
            claimed + 1,
            "extra",
            f"turn {claimed + 1} is stored although the outcome says the game ended at turn "
            f"{claimed}",
            claimed + 1,
        )
    if info.outcome.get("aborted") is True:
        return report("aborted", verified)
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
    return report("ok", verified)
