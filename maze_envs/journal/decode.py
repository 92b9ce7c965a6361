"""Decoding a game's stored turn rows of schema version 5 into :class:`~.rows.TurnRecord` values.

A row is ``(turn, body, state_hash, record_hash)``; the body is read in the game's stream
(:mod:`.body`) into its four parts, and the observations and events are rebuilt from what
changed (:mod:`.delta_reader`). The rows of one game go through one decoder, in order, from
turn 0.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, cast

import orjson

from maze_envs.journal.body import BodyUnpacker
from maze_envs.journal.delta_reader import DeltaReader, SkippedKeyError
from maze_envs.journal.delta_values import SharedValuesReader
from maze_envs.journal.format import GENESIS_HASH, HASH_SIZES, chain_body_hash, genesis
from maze_envs.journal.rows import Problem, TurnRecord, check_observation_keys, load_object


class TurnDecoder:
    """Decodes one game's stored rows of schema version 5, in order (a
    :class:`~.rows.RowDecoder`).

    ``observations=False`` leaves every record's observations empty (``{}``) and skips
    rebuilding them; a collection of keys keeps only those keys of each agent's observation,
    rebuilt as values without their JSON text (``raw_observations`` and ``raw_events`` are then
    ``""``): the changes stored under other keys are never applied, and ``events`` (a collection
    of keys) likewise for each agent's events. With a collection of keys, ``shared=True`` makes
    only what changed: an agent's observation and events dicts, and their
    values, are the very objects of the turn before when they did not change (read them, never
    change them).

    ``values=False`` (with every key) leaves the records' observations and events empty
    (``{}``) and gives their full texts only (``raw_observations``, ``raw_events``): what
    ``verify`` compares byte for byte, without parsing them again.
    """

    def __init__(
        self,
        *,
        observations: bool | Collection[str] = True,
        events: Collection[str] | None = None,
        shared: bool = False,
        values: bool = True,
    ) -> None:
        self._values = values
        self._with_observations = observations is not False
        self._keys = check_observation_keys(observations)
        self._shared = shared and self._keys is not None
        self._body = BodyUnpacker()
        event_keys = None if events is None else check_observation_keys(events)
        if event_keys is not None and self._keys is None:
            raise TypeError("events= keeps a few event keys with observations= a few keys only")
        self._observations: DeltaReader | SharedValuesReader = DeltaReader(keep=self._keys)
        self._events: DeltaReader | SharedValuesReader = DeltaReader(keep=event_keys)
        if self._shared:
            self._observations = SharedValuesReader(keep=self._keys)
            self._events = SharedValuesReader(keep=event_keys)
        # With a few keys kept: this game's stored observations so far, to read them again
        # without skipping anything if a kept text turns out to be a reference to a skipped one.
        self._stored: list[tuple[bool, bytes, Any]] | None = [] if self._keys is not None else None

    def chain(self, previous: bytes, row: tuple[Any, ...]) -> bytes:
        """The record hash of the row's stored bytes after ``previous``."""
        _, body, state_hash, _ = row
        return chain_body_hash(previous, _bytes(state_hash), _bytes(body))

    def genesis(self, row: tuple[Any, ...]) -> bytes:
        """The "previous hash" of a game whose first row is ``row``: as long as its stored
        record hash (32 or 16 bytes; 32 for anything else, which then breaks the chain)."""
        size = len(row[3]) if type(row[3]) is bytes else 0
        return genesis(size) if size in HASH_SIZES else GENESIS_HASH

    def intact(self, recomputed: bytes, row: tuple[Any, ...]) -> bool:
        """Whether the stored record hash is ``recomputed``."""
        return bool(row[3] == recomputed)

    def __call__(self, expected: int, row: tuple[Any, ...]) -> TurnRecord | Problem:
        """The row decoded, or why it cannot be."""
        turn, body, state_hash, record_hash = row
        if turn != expected:
            if isinstance(turn, int) and turn > expected:
                return Problem(expected, "missing", f"turn {expected} is missing (next is {turn})")
            return Problem(expected, "unreadable", f"turn number {turn!r} where {expected} belongs")
        if type(state_hash) is not bytes:  # (a wrong one is the replay's to find)
            return Problem(turn, "unreadable", "the state hash is not stored as bytes")
        try:
            starts, (actions, observations, events, decisions) = self._body.unpack(body)
        except ValueError as exc:
            return Problem(turn, "unreadable", f"the stored turn cannot be read ({exc})")
        if starts:
            self._observations.reset()
            self._events.reset()
        decoded: list[dict[str, Any]] = []
        for name, text in (("actions", actions), ("decisions", decisions)):
            problem = load_object(turn, name, text, decoded)
            if problem is not None:
                return problem
        seen: dict[str, Any] = {}
        raw_observations = raw_events = ""
        if self._keys is not None:
            try:
                events_reader = self._events
                if isinstance(events_reader, SharedValuesReader):
                    event_values = events_reader.read(events, decoded[0])
                else:
                    event_values = events_reader.values(events, actions=decoded[0])
            except ValueError as exc:
                return Problem(turn, "unreadable", f"events cannot be rebuilt ({exc})")
            try:
                seen = self._kept(starts, observations, decoded[0])
            except ValueError as exc:
                return Problem(turn, "unreadable", f"observations cannot be rebuilt ({exc})")
        else:  # every key: the readers are DeltaReaders (shared values need a few keys)
            full_events = cast(DeltaReader, self._events)
            full_observations = cast(DeltaReader, self._observations)
            try:
                raw_events = full_events.text(events, decoded[0]).decode()
            except ValueError as exc:
                return Problem(turn, "unreadable", f"events cannot be rebuilt ({exc})")
            event_values = orjson.loads(raw_events) if self._values else {}
            if self._with_observations:
                try:
                    raw_observations = full_observations.text(observations, decoded[0]).decode()
                except ValueError as exc:
                    return Problem(turn, "unreadable", f"observations cannot be rebuilt ({exc})")
                if self._values:
                    seen = orjson.loads(raw_observations)
        return TurnRecord(
            turn=turn,
            observations=seen,
            actions=decoded[0],
            events=event_values,
            state_hash=state_hash.hex(),
            record_hash=record_hash.hex() if type(record_hash) is bytes else str(record_hash),
            raw_observations=raw_observations,
            raw_events=raw_events,
            decisions=decoded[1],
        )

    def _kept(self, starts: bool, stored: bytes, actions: Any) -> dict[str, Any]:
        """The kept keys of this turn's observations."""
        keys, rows, reader = self._keys, self._stored, self._observations
        if rows is not None:
            rows.append((starts, stored, actions))
        try:
            if isinstance(reader, SharedValuesReader):
                return reader.read(stored, actions)
            return reader.values(stored, keys, actions)
        except SkippedKeyError:
            if rows is None:
                raise
            # read the game again from its first turn, every key, then keep the few
            self._stored, full = None, DeltaReader()
            for earlier_starts, earlier, earlier_actions in rows[:-1]:
                if earlier_starts:
                    full.reset()
                full.read(earlier, earlier_actions)
            if starts:
                full.reset()
            self._observations = full
            return full.values(stored, keys, actions)


def _bytes(value: Any) -> bytes:
    """A stored value as bytes for hashing (a damaged row may hold another type)."""
    if type(value) is bytes:
        return value
    return str(value).encode()


__all__ = ["TurnDecoder"]
