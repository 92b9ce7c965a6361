"""The generic half of replay: row integrity and driving an environment's replayer.

:func:`scan_turns` walks a game's rows and reports the first unreadable, missing or edited one;
:func:`verify_game` drives any environment's :class:`Replayer` through the recorded actions and
reports the first turn that disagrees with the journal.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from maze_envs.journal.format import (
    EDITED,
    GENESIS_HASH,
    CorruptTurnError,
    GameInfo,
    Problem,
    TurnRecord,
    chain_state_hash,
    encode_json,
    encode_json_bytes,
    scan_rows,
)
from maze_envs.journal.store import Journal


def _scan(journal: Journal, game_id: int) -> Iterator[tuple[TurnRecord, bool] | Problem]:
    return scan_rows(journal.raw_turns(game_id), sqlite3.DatabaseError)


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
            yield Problem(record.turn, "edited", EDITED)
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


def _first_difference(stored: Mapping[str, Any], replayed: Mapping[str, Any]) -> str:
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
    observation and the events, byte for byte as stored. The report names the first turn that
    fails. A game without an outcome is reported as truncated once its stored turns are checked.
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
                return failed(item.turn, "edited", EDITED, verified)
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
        if encode_json_bytes(last.observations) != item.raw_observations.encode():
            detail = _first_difference(item.observations, last.observations)
            return failed(item.turn, "mismatch", f"observation differs: {detail}", verified)
        if encode_json_bytes(last.events) != item.raw_events.encode():
            detail = _first_difference(item.events, last.events)
            return failed(item.turn, "mismatch", f"events differ: {detail}", verified)
        if not intact:  # the replay agrees, but the stored text is not what was recorded
            return failed(item.turn, "edited", EDITED, verified)
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
