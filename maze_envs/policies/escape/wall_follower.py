"""Wall followers: keep one hand on the wall and walk."""

from __future__ import annotations

from typing import Literal

from maze_envs.escape.types import Action, Direction, Observation
from maze_envs.policies.escape.base import EscapeBaseline
from maze_envs.policies.escape.geometry import BACK, turn_left, turn_right
from maze_envs.policies.interface import EscapeEpisode

Hand = Literal["left", "right"]


class WallFollower(EscapeBaseline):
    """Follows the wall on one side: the left-hand (or right-hand) rule.

    Knows: the edges of its cell and its heading (the direction of its last move; north before
    the first). Does: each turn turns towards its hand if that edge is open, else goes straight,
    else turns away from its hand, else goes back. In a perfect maze (a tree) this walks round
    the whole tree, so it reaches the exit within ``2 * (cells - 1)`` moves whatever its start;
    it needs no memory of the maze and never bumps. It stays on the exit once there.

    Args:
        hand: ``"left"`` or ``"right"``.
    """

    def __init__(self, hand: Hand = "left") -> None:
        super().__init__()
        if hand not in ("left", "right"):
            raise ValueError(f"hand must be 'left' or 'right', got {hand!r}")
        self.hand: Hand = hand
        self.heading: Direction = "N"

    def reset(
        self, agent: str, seed: int | None = None, episode: EscapeEpisode | None = None
    ) -> None:
        super().reset(agent, seed, episode)
        self.heading = "N"

    def after_observe(self, observation: Observation, tried: Direction | None, moved: bool) -> None:
        if tried is not None and moved:
            self.heading = tried

    def choose(self, observation: Observation) -> Action:
        if self.reached_exit:
            return Action(move="STAY")
        toward, away = (turn_left, turn_right) if self.hand == "left" else (turn_right, turn_left)
        h = self.heading
        open_moves = set(self.open_moves(observation))
        for direction in (toward(h), h, away(h), BACK[h]):
            if direction in open_moves:
                return Action(move=direction)
        return Action(move="STAY")
