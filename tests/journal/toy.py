"""A tiny deterministic toy game and its replayer, to test the journal on its own."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from maze_envs.journal import GameInfo, Journal, ReplayStep


class ToyGame:
    """Agents on a line; each turn every agent adds its action to its position. Ends at turn 5."""

    LENGTH = 5

    def __init__(self, seed: int) -> None:
        self.positions = {"A": seed % 7, "B": seed % 3}
        self.turn = 0

    def digest(self) -> bytes:
        return json.dumps([self.turn, self.positions], sort_keys=True).encode()

    def observations(self) -> dict[str, Any]:
        return {
            a: {"pos": np.int64(p), "seen": np.array([p, self.turn])}
            for a, p in self.positions.items()
        }

    def step(self, actions: Mapping[str, Any]) -> dict[str, Any]:
        events: dict[str, Any] = {}
        for agent, move in actions.items():
            if isinstance(move, int) and move in (-1, 0, 1):
                self.positions[agent] += move
                events[agent] = "moved"
            else:
                events[agent] = "rejected"
        self.turn += 1
        return events

    @property
    def done(self) -> bool:
        return self.turn >= self.LENGTH

    def outcome(self) -> dict[str, Any]:
        return {"final": dict(self.positions), "turns": self.turn}


class ToyReplayer:
    def reset(self, game: GameInfo) -> ReplayStep:
        assert game.seed is not None
        self.game = ToyGame(game.seed)
        return ReplayStep(self.game.observations(), {}, self.game.digest(), False)

    def step(self, actions: Mapping[str, Any]) -> ReplayStep:
        events = self.game.step(actions)
        done = self.game.done
        outcome = self.game.outcome() if done else None
        return ReplayStep(self.game.observations(), events, self.game.digest(), done, outcome)


MOVES: list[dict[str, Any]] = [{"A": 1, "B": -1}, {"A": 1, "B": 0}, {"A": "jump", "B": 1}] + [
    {"A": 0, "B": 1}
] * 2


def play(
    journal: Journal,
    seed: int,
    moves: list[dict[str, Any]],
    finish: bool = True,
    decisions: list[dict[str, Any]] | None = None,
) -> int:
    """Record a toy game; ``decisions[k]`` (if given) goes with turn ``k + 1``."""
    game = ToyGame(seed)
    game_id = journal.start_game(env_id="toy-v0", config={"n": 2}, seed=seed, library_version="t")
    journal.record_turn(
        game_id,
        0,
        observations=game.observations(),
        actions={},
        events={},
        state_digest=game.digest(),
    )
    for turn, actions in enumerate(moves, start=1):
        events = game.step(actions)
        journal.record_turn(
            game_id,
            turn,
            observations=game.observations(),
            actions=actions,
            events=events,
            state_digest=game.digest(),
            decisions=None if decisions is None else decisions[turn - 1],
        )
        if game.done:
            break
    if finish:
        journal.finish_game(game_id, game.outcome())
    return game_id


def cell(path: Path, sql: str, *params: Any) -> Any:
    """One value read behind the journal's back."""
    db = sqlite3.connect(path)
    try:
        return db.execute(sql, params).fetchone()[0]
    finally:
        db.close()
