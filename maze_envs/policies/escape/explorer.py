"""The depth-first (Trémaux) explorer."""

from __future__ import annotations

from maze_envs.escape.types import Action, Direction, Observation
from maze_envs.policies.escape.base import EscapeBaseline
from maze_envs.policies.escape.geometry import BACK, step
from maze_envs.policies.escape.knowledge import ExitLocator
from maze_envs.policies.interface import EscapeEpisode


class TremauxExplorer(EscapeBaseline):
    """Depth-first search of the maze (Trémaux's rule), on its own map.

    Knows: its position (the game's coordinates when they are switched on, otherwise dead
    reckoning from its start, counting a move only when the next observation says ``moved``),
    every cell it has stood on with its four edges, and the way back (a stack of its moves).
    With the distance sensor on (and ``heuristic=True``) it also narrows down where the exit is
    from the straight-line readings (:class:`~maze_envs.policies.escape.knowledge.ExitLocator`).

    Does: from each cell, steps into an unvisited neighbour through an open edge (the one
    nearest the exit's likely position when the sensor helps, otherwise one picked with its
    seeded generator); when there is none, steps back the way it came. It never enters a visited
    cell except to backtrack, so in a perfect maze it visits every cell and reaches the exit within
    ``2 * (cells - 1)`` moves, never bumping a wall. It stays on the exit once there.

    Args:
        heuristic: use the distance sensor to order unvisited neighbours (when the game has it).
    """

    def __init__(self, heuristic: bool = True) -> None:
        super().__init__()
        self.heuristic = heuristic
        self.stack: list[Direction] = []
        self.locator: ExitLocator | None = None
        self._pending_back = False

    def reset(
        self, agent: str, seed: int | None = None, episode: EscapeEpisode | None = None
    ) -> None:
        super().reset(agent, seed, episode)
        self.stack = []
        self._pending_back = False
        self.locator = (
            ExitLocator(self.config.width, self.config.height)
            if self.heuristic and self.config.distance_sensor
            else None
        )

    def after_observe(self, observation: Observation, tried: Direction | None, moved: bool) -> None:
        if tried is not None and moved:
            if self._pending_back:
                self.stack.pop()
            else:
                self.stack.append(tried)
        self._pending_back = False
        if self.locator is not None and observation.distance_to_exit is not None:
            self.locator.observe(self.position, observation.distance_to_exit)

    def preference(self, direction: Direction) -> tuple[float, float]:
        """Sort key of an unvisited neighbour: smaller is tried first."""
        guess = (
            self.locator.expected_distance(step(self.position, direction))
            if self.locator is not None
            else 0.0
        )
        return (guess, float(self.rng.random()))

    def explore(self, observation: Observation) -> Action:
        """One depth-first step (also used by the cooperative explorer)."""
        here = self.position
        fresh = [d for d in self.open_moves(observation) if step(here, d) not in self.map.visited]
        if fresh:
            return Action(move=min(fresh, key=self.preference))
        if self.stack:
            self._pending_back = True
            return Action(move=BACK[self.stack[-1]])
        return Action(move="STAY")  # explored everything reachable

    def choose(self, observation: Observation) -> Action:
        if self.reached_exit:
            return Action(move="STAY")
        return self.explore(observation)


__all__ = ["TremauxExplorer"]
