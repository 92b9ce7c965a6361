"""The journal's rows as Python values, and the walk over a game's stored turns.

:func:`scan_rows` is the one place that decides whether stored turn rows can be trusted
(contiguous from 0, decodable, record-hash chain intact); both reading
(:meth:`maze_envs.journal.Journal.turns`) and verification (:mod:`maze_envs.journal.verify`)
use it. A :class:`RowDecoder` turns a game's stored rows, in order, into :class:`TurnRecord`
values with every observation and event whole: :class:`~.decode.TurnDecoder` for version 5,
:class:`~.legacy.LegacyRowDecoder` for the versions 3 and 4 this library reads but no longer
writes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import orjson

from maze_envs.journal.format import GENESIS_HASH, CorruptTurnError, decode_json

ProblemKind = Literal["unreadable", "missing", "edited", "mismatch", "replay_error", "extra"]


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
    meta: dict[str, Any] | None = None  # what the runner attached (run key, policies, ...)

    @property
    def finished(self) -> bool:
        """The game has an outcome (it ended, or was abandoned and marked aborted)."""
        return self.outcome is not None

    @property
    def aborted(self) -> bool:
        """The game was abandoned before its end (its outcome says ``"aborted": true``)."""
        return self.outcome is not None and self.outcome.get("aborted") is True


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One stored turn, decoded.

    ``decisions`` holds the per-decision records as stored: large text put in a
    :class:`~maze_envs.journal.Blob` appears as ``{"$blob": key}``
    (:meth:`maze_envs.journal.Journal.resolve` expands it).
    """

    turn: int
    observations: dict[str, Any]  # {} when the reader asked for no observations
    actions: dict[str, Any]
    events: dict[str, Any]
    state_hash: str
    record_hash: str
    raw_observations: str  # the whole JSON text as recorded (version 3 stored it so)
    raw_events: str
    decisions: dict[str, Any]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A whole game: its header and every turn."""

    info: GameInfo
    turns: list[TurnRecord]


@dataclass(frozen=True, slots=True)
class Problem:
    """The first turn of a game that cannot be trusted, and why."""

    turn: int
    kind: ProblemKind
    reason: str


EDITED: Final = "the row was changed after it was recorded"


class RowDecoder(Protocol):
    """Decodes one game's stored ``turns`` rows (as :meth:`~.store.Journal.raw_turns` gives
    them), in order, into :class:`TurnRecord` values."""

    def __call__(self, expected: int, row: tuple[Any, ...]) -> TurnRecord | Problem:
        """The row decoded, or why it cannot be (``expected``: the turn it must be)."""
        ...

    def chain(self, previous: bytes, row: tuple[Any, ...]) -> bytes:
        """The record hash the row's stored bytes chain to after ``previous``."""
        ...

    def genesis(self, row: tuple[Any, ...]) -> bytes:
        """The "previous hash" of the game whose first row is ``row`` (its hashes' length)."""
        ...

    def intact(self, recomputed: bytes, row: tuple[Any, ...]) -> bool:
        """Whether the row's stored record hash is ``recomputed`` (:meth:`chain`'s)."""
        ...


def check_observation_keys(observations: bool | Collection[str]) -> tuple[str, ...] | None:
    """The observation keys a reader keeps (None: every key or, with False, none); a clear
    ``TypeError`` for anything else."""
    if isinstance(observations, bool):
        return None
    if isinstance(observations, str) or not all(isinstance(key, str) for key in observations):
        raise TypeError(
            "observations must be True, False or a collection of observation keys, "
            f"not {observations!r}"
        )
    return tuple(observations)


def load_object(
    turn: int, name: str, text: str | bytes, out: list[dict[str, Any]]
) -> Problem | None:
    """Parse one JSON column into ``out``, or why it cannot be."""
    try:
        value = orjson.loads(text)
    except ValueError as exc:
        return Problem(turn, "unreadable", f"{name} are not valid JSON ({exc})")
    if not isinstance(value, dict):
        return Problem(turn, "unreadable", f"{name} are not a JSON object")
    out.append(value)
    return None


def scan_rows(
    rows: Iterator[tuple[Any, ...]],
    read_error: type[Exception],
    decode_row: RowDecoder,
) -> Iterator[tuple[TurnRecord, bool] | Problem]:
    """Rows in order as (record, intact); stops after the first unreadable or missing one.

    ``intact`` is False when the record-hash chain does not match the stored bytes, i.e. the
    row (or an earlier one) was changed after it was recorded; callers stop at the first such
    row. ``read_error`` is the exception that fetching a row raises when the file is damaged;
    ``decode_row`` decodes the rows (the file's version's :class:`RowDecoder`).
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
        if expected == 0:
            previous = decode_row.genesis(row)
        recomputed = decode_row.chain(previous, row)
        yield item, decode_row.intact(recomputed, row)
        previous = recomputed
        expected += 1


def game_info(row: tuple[Any, ...]) -> GameInfo:
    """A ``games`` row (as :data:`~.format.SELECT_GAME` gives it) decoded."""
    game_id, env_id, config, generator, seed, version, created, outcome, meta, count = row
    try:
        values = [None if text is None else decode_json(text) for text in (generator, outcome)]
        config_value = decode_json(config)
        meta_value = None if meta is None else decode_json(meta)
        seed_value = None if seed is None else int(seed)
    except (TypeError, ValueError) as exc:
        raise CorruptTurnError(game_id, 0, f"game header is unreadable: {exc}") from None
    generator_value, outcome_value = values
    if not isinstance(config_value, dict) or not all(
        value is None or isinstance(value, dict)
        for value in (generator_value, outcome_value, meta_value)
    ):
        raise CorruptTurnError(
            game_id, 0, "game config/generator/outcome/meta is not a JSON object"
        )
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
        meta=meta_value,
    )


_SCALARS: Final = (str, int, float, bool)


def completed_run_keys(rows: list[tuple[Any, Any]], field: str) -> set[Any]:
    """The ``meta[field]`` scalar values of ``(meta, outcome)`` header texts whose outcome is not
    aborted (see :meth:`maze_envs.journal.Journal.completed_keys`)."""
    keys: set[Any] = set()
    for meta_text, outcome_text in rows:
        try:
            meta, outcome = decode_json(meta_text), decode_json(outcome_text)
        except ValueError:
            continue  # an unreadable header is not a completed game
        if not (isinstance(meta, dict) and isinstance(outcome, dict)):
            continue
        if outcome.get("aborted") is True:
            continue
        value = meta.get(field)
        if isinstance(value, _SCALARS):
            keys.add(value)
    return keys
