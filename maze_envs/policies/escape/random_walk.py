"""The random walk: the weakest sensible Maze Escape baseline."""

from __future__ import annotations

from maze_envs.escape.types import Action, Observation
from maze_envs.policies.escape.base import EscapeBaseline


class RandomWalk(EscapeBaseline):
    """Each turn a uniformly random open edge of the current cell; never into a known wall.

    Knows: the four edges of its cell (walls are seen, so it never bumps) and the doorway once
    it has tried it. Does: picks one of the remaining open edges with its seeded generator; stays
    on the exit once it has reached it. Memory: only its position and the edges it has seen.
    """

    def choose(self, observation: Observation) -> Action:
        if self.reached_exit:
            return Action(move="STAY")
        options = self.open_moves(observation)
        if not options:
            return Action(move="STAY")
        return Action(move=options[int(self.rng.integers(len(options)))])
