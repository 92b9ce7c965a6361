"""Reading the schema versions this library reads but no longer writes: 3 (every turn stored
whole, as JSON text) and 4 (observations and events stored as what changed, :mod:`.changes`,
rebuilt by :mod:`.rebuild`). Files of these versions are opened read-only."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from maze_envs.journal.format import GENESIS_HASH, chain_record_hash
from maze_envs.journal.legacy.rebuild import ChangeReader, SkippedKeyError
from maze_envs.journal.rows import (
    Problem,
    TurnRecord,
    check_observation_keys,
    load_object,
)

_JSON_COLUMNS: Final = ("observations", "actions", "events", "decisions")


class LegacyRowDecoder:
    """Decodes one game's stored ``turns`` rows, in order, into :class:`TurnRecord` values.

    ``version``: the file's schema version (4 stores what changed, rebuilt here turn after turn,
    so the rows of one game go through one decoder from turn 0). ``observations=False`` leaves
    every record's observations empty (``{}``) and skips rebuilding them; a collection of keys
    keeps only those keys of each agent's observation (for readers that need a few of them,
    such as the analysis), rebuilt as values without their JSON text. Records read with a
    collection of keys leave ``raw_observations`` and ``raw_events`` empty (``""``).
    """

    def __init__(self, version: int, *, observations: bool | Collection[str] = True) -> None:
        self._changes = version >= 4
        self._with_observations = observations is not False
        self._keys = check_observation_keys(observations)
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
            problem = load_object(turn, name, text, decoded)
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
            problem = load_object(turn, name, text, decoded)
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
                problem = load_object(turn, name, text, decoded)
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

    def chain(self, previous: bytes, row: tuple[Any, ...]) -> bytes:
        """The record hash over the row's stored text (versions 3 and 4)."""
        return chain_record_hash(previous, row[5], row[1], row[2], row[3], row[4])

    def genesis(self, row: tuple[Any, ...]) -> bytes:
        """32 zero bytes: versions 3 and 4 store SHA-256 hashes whole."""
        return GENESIS_HASH

    def intact(self, recomputed: bytes, row: tuple[Any, ...]) -> bool:
        """Whether the stored hash is the recomputed one's (lowercase) hex."""
        return bool(recomputed.hex() == row[6])


__all__ = ["LegacyRowDecoder"]
