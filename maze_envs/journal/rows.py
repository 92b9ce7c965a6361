"""The journal's rows as Python values, and the walk over a game's stored turns.

:func:`scan_rows` is the one place that decides whether stored turn rows can be trusted
(contiguous from 0, decodable, record-hash chain intact); both reading
(:meth:`maze_envs.journal.Journal.turns`) and verification (:mod:`maze_envs.journal.verify`)
use it. A :class:`RowDecoder` turns a game's stored rows, in order, into :class:`TurnRecord`
values with every observation and event whole: as stored in version 3, rebuilt from what
changed (:mod:`.changes`) in version 4.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from maze_envs.journal.format import (
    GENESIS_HASH,
    SCHEMA_VERSION,
    CorruptTurnError,
    chain_record_hash,
    decode_json,
)
from maze_envs.journal.rebuild import ChangeReader, SkippedKeyError

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
_JSON_COLUMNS: Final = ("observations", "actions", "events", "decisions")


class RowDecoder:
    """Decodes one game's stored ``turns`` rows, in order, into :class:`TurnRecord` values.

    ``version``: the file's schema version (4 stores what changed, rebuilt here turn after turn,
    so the rows of one game go through one decoder from turn 0). ``observations=False`` leaves
    every record's observations empty (``{}``) and skips rebuilding them; a collection of keys
    keeps only those keys of each agent's observation (for readers that need a few of them,
    such as the analysis), rebuilt as values without their JSON text. Records read with a
    collection of keys leave ``raw_observations`` and ``raw_events`` empty (``""``).
    """

    def __init__(
        self, version: int = SCHEMA_VERSION, *, observations: bool | Collection[str] = True
    ) -> None:
        self._changes = version >= 4
        self._with_observations = observations is not False
        self._keys: tuple[str, ...] | None = None
        if not isinstance(observations, bool):
            if isinstance(observations, str) or not all(
                isinstance(key, str) for key in observations
            ):
                raise TypeError(
                    "observations must be True, False or a collection of observation keys, "
                    f"not {observations!r}"
                )
            self._keys = tuple(observations)
        self._observations = ChangeReader(keep=self._keys)
        self._events = ChangeReader()
        # With a few keys kept: this game's stored observations so far, to read them again
        # without skipping anything if a kept text turns out to be a reference to a skipped one.
        self._stored: list[tuple[str, bytes]] | None = [] if self._keys is not None else None

    def __call__(self, expected: int, row: tuple[Any, ...]) -> TurnRecord | Problem:
        """The row (as :data:`~.format.SELECT_TURNS` gives it) decoded, or why it cannot be."""
        turn, observations, actions, events, decisions, state_hash, record_hash = row
        if turn != expected:
            if isinstance(turn, int) and turn > expected:
                return Problem(expected, "missing", f"turn {expected} is missing (next is {turn})")
            return Problem(expected, "unreadable", f"turn number {turn!r} where {expected} belongs")
        texts = (observations, actions, events, decisions)
        for name, text in zip(_JSON_COLUMNS, texts, strict=True):
            if not isinstance(text, str):
                return Problem(turn, "unreadable", f"{name} are not text")
        if not (isinstance(state_hash, str) and isinstance(record_hash, str)):
            return Problem(turn, "unreadable", "hashes are not text")
        if self._keys is not None:
            return self._values(row)
        if self._changes:
            stored_actions = actions.encode()
            try:
                events = self._events.decode(events, stored_actions).decode()
            except ValueError as exc:
                return Problem(turn, "unreadable", f"events cannot be rebuilt ({exc})")
            if self._with_observations:
                try:
                    observations = self._observations.decode(observations, stored_actions).decode()
                except ValueError as exc:
                    return Problem(turn, "unreadable", f"observations cannot be rebuilt ({exc})")
        if not self._with_observations:
            observations = "{}"
        decoded: list[dict[str, Any]] = []
        for name, text in zip(
            _JSON_COLUMNS, (observations, actions, events, decisions), strict=True
        ):
            problem = _load(turn, name, text, decoded)
            if problem is not None:
                return problem
        return TurnRecord(
            turn=turn,
            observations=decoded[0],
            actions=decoded[1],
            events=decoded[2],
            state_hash=state_hash,
            record_hash=record_hash,
            raw_observations=observations if self._with_observations else "",
            raw_events=events,
            decisions=decoded[3],
        )

    def _values(self, row: tuple[Any, ...]) -> TurnRecord | Problem:
        """A row read with a collection of observation keys: values, no JSON text."""
        turn, observations, actions, events, decisions, state_hash, record_hash = row
        keys = self._keys or ()
        decoded: list[dict[str, Any]] = []
        for name, text in (("actions", actions), ("decisions", decisions)):
            problem = _load(turn, name, text, decoded)
            if problem is not None:
                return problem
        if self._changes:
            stored_actions = actions.encode()
            try:
                events_value = self._events.values(events, stored_actions)
            except ValueError as exc:
                return Problem(turn, "unreadable", f"events cannot be rebuilt ({exc})")
            try:
                seen = self._kept_values(observations, stored_actions)
            except ValueError as exc:
                return Problem(turn, "unreadable", f"observations cannot be rebuilt ({exc})")
        else:
            for name, text in (("events", events), ("observations", observations)):
                problem = _load(turn, name, text, decoded)
                if problem is not None:
                    return problem
            events_value, whole = decoded[2], decoded[3]
            seen = {
                agent: (
                    {key: value[key] for key in keys if key in value}
                    if isinstance(value, dict)
                    else value
                )
                for agent, value in whole.items()
            }
        return TurnRecord(
            turn=turn,
            observations=seen,
            actions=decoded[0],
            events=events_value,
            state_hash=state_hash,
            record_hash=record_hash,
            raw_observations="",
            raw_events="",
            decisions=decoded[1],
        )

    def _kept_values(self, stored: str, actions: bytes) -> dict[str, Any]:
        """The kept keys of this turn's observations (a version 4 file)."""
        keys, rows = self._keys, self._stored
        if rows is None:  # reading everything since a reference to a skipped key
            return self._observations.values(stored, actions, keys)
        rows.append((stored, actions))
        try:
            return self._observations.values(stored, actions)
        except SkippedKeyError:
            self._stored, reader = None, ChangeReader()
            for earlier, earlier_actions in rows[:-1]:
                reader.decode(earlier, earlier_actions)
            self._observations = reader
            return reader.values(stored, actions, keys)


def _load(turn: int, name: str, text: str, out: list[dict[str, Any]]) -> Problem | None:
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
    decode: RowDecoder | None = None,
) -> Iterator[tuple[TurnRecord, bool] | Problem]:
    """Rows in order as (record, intact); stops after the first unreadable or missing one.

    ``intact`` is False when the record-hash chain does not match the stored text, i.e. the row
    (or an earlier one) was changed after it was recorded; callers stop at the first such row.
    ``read_error`` is the exception that fetching a row raises when the file is damaged;
    ``decode`` decodes the rows (a version 4 :class:`RowDecoder` by default).
    """
    decode_row = RowDecoder() if decode is None else decode
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
        recomputed = chain_record_hash(previous, item.state_hash, row[1], row[2], row[3], row[4])
        yield item, recomputed.hex() == item.record_hash
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
