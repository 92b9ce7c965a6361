"""Simple built-in movers for Maze Escape: they use only the observation and their own memory.

* :class:`RandomWalker` steps through a random open edge of its cell each turn.
* :class:`DepthFirstExplorer` explores the maze depth first by dead reckoning: it keeps its own
  position relative to where it started, the cells it has seen, and the way back, so in a perfect
  maze it reaches the exit within ``2 * (cells - 1)`` moves.

Both stop on the exit after their first visit (which is all the objective asks of an agent) and
announce it once on the radio, so teammates' observations show it.

Example:
    >>> from maze_envs.policies import DepthFirstExplorer
    >>> explorer = DepthFirstExplorer()
    >>> explorer.reset("A", seed=0)
"""

from __future__ import annotations

from typing import Final

import numpy as np

from maze_envs.escape.types import Action, Direction, Observation

_DIRECTIONS: Final[tuple[Direction, ...]] = ("N", "E", "S", "W")
#: (dx, dy) of each move, x growing east and y growing north.
_STEP: Final[dict[Direction, tuple[int, int]]] = {
    "N": (0, 1),
    "E": (1, 0),
    "S": (0, -1),
    "W": (-1, 0),
}
_BACK: Final[dict[Direction, Direction]] = {"N": "S", "S": "N", "E": "W", "W": "E"}
EXIT_MESSAGE: Final = "I have reached the exit."


def _open_directions(observation: Observation) -> list[Direction]:
    return [d for d in _DIRECTIONS if observation.edges[d] == "open"]


class _ExitAware:
    """Shared behaviour: stay on the exit after reaching it and say so once on the radio."""

    agent = ""
    _reached_exit = False
    _announced = False

    def _at_exit(self, observation: Observation) -> Action | None:
        if observation.on_exit:
            self._reached_exit = True
        if not self._reached_exit:
            return None
        if not self._announced:
            self._announced = True
            return Action(move="STAY", radio=EXIT_MESSAGE)
        return Action(move="STAY")


class RandomWalker(_ExitAware):
    """Each turn, a uniformly random open edge of the current cell (never a known wall)."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def reset(self, agent: str, seed: int | None) -> None:
        self.agent = agent
        self._rng = np.random.default_rng(seed)
        self._reached_exit = self._announced = False

    def act(self, observation: Observation) -> Action:
        done = self._at_exit(observation)
        if done is not None:
            return done
        options = _open_directions(observation)
        if not options:
            return Action(move="STAY")
        return Action(move=options[int(self._rng.integers(len(options)))])


class DepthFirstExplorer(_ExitAware):
    """Depth-first search of the maze by dead reckoning, with ties broken at random.

    Memory: its position ``(x, y)`` relative to its start, the set of cells it has stood on, and
    the stack of moves that led from the start to here. A move is only counted once the next
    observation confirms it (``last_action.move == "moved"``), so a refused move never corrupts
    the position.
    """

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)
        self._position = (0, 0)
        self._visited: set[tuple[int, int]] = set()
        self._path: list[Direction] = []
        self._pending: tuple[Direction, bool] | None = None  # (move, is it a backtrack)

    def reset(self, agent: str, seed: int | None) -> None:
        self.agent = agent
        self._rng = np.random.default_rng(seed)
        self._position = (0, 0)
        self._visited = {(0, 0)}
        self._path = []
        self._pending = None
        self._reached_exit = self._announced = False

    def _neighbour(self, direction: Direction) -> tuple[int, int]:
        dx, dy = _STEP[direction]
        return (self._position[0] + dx, self._position[1] + dy)

    def _confirm_last_move(self, observation: Observation) -> None:
        if self._pending is None:
            return
        direction, backtrack = self._pending
        self._pending = None
        if observation.last_action.move != "moved":
            if not backtrack:  # that way is closed after all: never try it again
                self._visited.add(self._neighbour(direction))
            return
        self._position = self._neighbour(direction)
        self._visited.add(self._position)
        if backtrack:
            self._path.pop()
        else:
            self._path.append(direction)

    def act(self, observation: Observation) -> Action:
        self._confirm_last_move(observation)
        done = self._at_exit(observation)
        if done is not None:
            return done
        fresh = [
            d for d in _open_directions(observation) if self._neighbour(d) not in self._visited
        ]
        if fresh:
            direction = fresh[int(self._rng.integers(len(fresh)))]
            self._pending = (direction, False)
            return Action(move=direction)
        if self._path:
            direction = _BACK[self._path[-1]]
            self._pending = (direction, True)
            return Action(move=direction)
        return Action(move="STAY")  # explored everything reachable
