"""A stand-in for a journal that keeps what an environment recorded last, for replayers.

An environment's replayer rebuilds the environment with ``journal=CaptureJournal()``: the
environment records through its :class:`~maze_envs.journal.recorder.Recorder` exactly as in the
live game, and the replayer compares that payload with the journal's, so no second copy of an
environment's recording format is ever written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from maze_envs.journal.verify import ReplayStep


class CaptureJournal:
    """Keeps the last turn and the outcome an environment recorded (a ``RecordingTarget``)."""

    def __init__(self) -> None:
        self.observations: Mapping[str, Any] = {}
        self.events: Mapping[str, Any] = {}
        self.digest = b""
        self.outcome: Mapping[str, Any] | None = None
        self._games = 0

    def start_game(self, **_: Any) -> int:
        self._games += 1
        self.outcome = None
        return self._games

    def record_turn(self, game_id: int, turn: int, **parts: Any) -> str:
        """Keep the turn's observations, events and state digest (``parts``: the keywords of
        :meth:`~maze_envs.journal.Journal.record_turn`)."""
        self.observations, self.events = parts["observations"], parts["events"]
        self.digest = parts["state_digest"]
        return ""

    def finish_game(self, game_id: int, outcome: Mapping[str, Any]) -> None:
        self.outcome = outcome

    def committed_turn(self, game_id: int) -> int | None:
        return None  # never asked: a capture cannot fail

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def step(self, done: bool) -> ReplayStep:
        """The :class:`ReplayStep` of the turn recorded last (``done``: the game ended there)."""
        return ReplayStep(
            observations=self.observations,
            events=self.events,
            state_digest=self.digest,
            done=done,
            outcome=self.outcome if done else None,
        )
