"""Each row's previous move beside its observation, for the batched Maze Escape.

:class:`EscapePreviousMove` appends to every row's observation of ``maze_escape_v1.vector_env``
the one-hot of the move that row chose last turn (N, E, S, W, STAY; all zeros on a game's first
turn). An agent's observation says what became of its last move (``last_action.move``: moved,
bumped...) but not which way it went; a policy that remembers its own last move knows its
heading, which turns the maze's local view into a direction to keep or to turn from (the wall
followers' whole memory). It is the policy's memory of its own action, not information about the
game: :class:`maze_envs.policies.learned.LearnedEscapePolicy` keeps the same one-hot when its
network was trained with it (``previous_move`` in its trained settings).

With same-step automatic resets, the rows of a game that ended get zeros (their observation is
the next game's first) and ``infos["final_obs"]`` the last move appended to the final
observation.

Example:
    >>> import numpy as np
    >>> from maze_envs import maze_escape_v1
    >>> vec = EscapePreviousMove(maze_escape_v1.vector_env(num_games=2, width=6, height=6))
    >>> observations, _ = vec.reset(seed=0)
    >>> observations.shape, observations[:, -5:].sum()
    ((6, 69), np.float32(0.0))
    >>> observations, *_ = vec.step(np.array([0, 1, 2, 3, 4, 4]))
    >>> observations[1, -5:].tolist()
    [0.0, 1.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from maze_envs.escape.vocab import MOVES

__all__ = ["MOVE_NAMES", "EscapePreviousMove"]

#: The names of the appended entries, in order.
MOVE_NAMES: Final = tuple(f"previous_move={m}" for m in MOVES)


class EscapePreviousMove(VectorWrapper):
    """The batched env's observations with each row's previous move (module docstring)."""

    def __init__(self, env: VectorEnv[Any, Any, Any]) -> None:
        super().__init__(env)
        if getattr(env.unwrapped, "autoreset_mode", None) is not AutoresetMode.SAME_STEP:
            raise ValueError(
                "EscapePreviousMove needs maze_escape_v1.vector_env with "
                "autoreset_mode=SAME_STEP (the default) below it"
            )
        below = env.single_observation_space
        if not isinstance(below, spaces.Box) or len(below.shape) != 1:
            raise ValueError(f"EscapePreviousMove needs flat Box observations, got {below}")
        moves = len(MOVES)
        low = np.concatenate([below.low, np.zeros(moves, np.float32)])
        high = np.concatenate([below.high, np.ones(moves, np.float32)])
        self.single_observation_space = spaces.Box(low, high, dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._previous = np.zeros((self.num_envs, moves), np.float32)
        self._rows = np.arange(self.num_envs)

    def reset(self, **kwargs: Any) -> Any:
        observations, infos = self.env.reset(**kwargs)
        self._previous[:] = 0.0
        return np.concatenate([observations, self._previous], axis=1), infos

    def step(self, actions: Any) -> Any:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        array = np.asarray(actions)
        moves = array[:, 0] if array.ndim == 2 else array  # (move, symbol) pairs: the move
        self._previous[:] = 0.0
        self._previous[self._rows, moves] = 1.0
        ended = terminations | truncations
        if "final_obs" in infos:
            infos = dict(infos)
            infos["final_obs"] = np.concatenate([infos["final_obs"], self._previous], axis=1)
        self._previous[ended] = 0.0
        out = np.concatenate([observations, self._previous], axis=1)
        return out, rewards, terminations, truncations, infos
