"""Verifying a game before drawing it: the page shows the verdict and stops at a bad turn."""

from __future__ import annotations

from maze_envs.journal import GameInfo, Journal, VerifyReport, verify_game
from maze_envs.verify import replayer_for


def verify(journal: Journal, game_id: int, info: GameInfo) -> VerifyReport:
    """Replay and check one game with its environment's replayer (rows only if it has none)."""
    return verify_game(journal, game_id, replayer_for(info.env_id))
