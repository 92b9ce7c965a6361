"""Reward shaping for training on the batched Maze Escape (``maze_escape_v1.vector_env``).

:class:`EscapeVectorShaping` adds a training signal to each row's reward (a row is one agent of
one game) and changes nothing else: the rules, the observations, the terminations and the
truncations are the vector env's own. For an agent that has not yet visited the exit, each turn
adds

* ``progress`` x (its path distance to the exit before the turn - after it): the moves along
  the maze towards the exit earn, those away from it cost as much (a potential-based term, Ng,
  Harada and Russell 1999, with the potential ``-progress x distance``; over a game it sums to
  ``progress`` x the distance covered, so it cannot pay for wandering);
* ``novelty`` the first time in the game that the agent stands on a cell (its start counts as
  seen): exploring earns, going over old ground does not;
* ``-step_cost`` every turn: the sooner out, the less it pays.

Once an agent has visited the exit it earns no shaping, only the game's own rewards (the team
bonus). The path distances are the true ones of the board, which no agent observes: they shape
the reward only, never the observation, and a trained policy plays without them. The last turn
of a truncated game adds no progress term (its board is replaced by the next game's in the same
step); a game that ends in success pays the progress of its last arrivals in full.

Evaluation and every reported figure use the unshaped env; ``infos["shaping"]`` holds the part
added (rows as the rewards), so the game's own reward is ``reward - infos["shaping"]``.

Example:
    >>> import numpy as np
    >>> from maze_envs import maze_escape_v1
    >>> vec = EscapeVectorShaping(maze_escape_v1.vector_env(num_games=4, width=7, height=7),
    ...                           progress=0.1, novelty=0.05)
    >>> observations, _ = vec.reset(seed=0)
    >>> _, rewards, _, _, infos = vec.step(np.full(vec.num_envs, 4))  # everyone stays
    >>> float(np.abs(infos["shaping"]).max())
    0.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper
from numpy.typing import NDArray

from maze_envs.escape.batch.vector import AutoresetMode, MazeEscapeVectorEnv
from maze_envs.grid import DELTAS

__all__ = ["EscapeVectorShaping", "exit_distances"]

#: The open-edge bits of a batched board byte and their frame bits (``<< 4``).
_FRAME_SHIFT = 4


def exit_distances(board: NDArray[np.uint8], exit_cell: NDArray[np.intp], width: int) -> Any:
    """``(G, C)`` path distances (moves) of every cell to its game's exit, for batched boards
    (``board``: ``(G, C)`` bytes of open edges, their outer-frame bits ``<< 4``, as
    :class:`maze_envs.escape.batch.types.BatchState` holds them). A breadth-first search of all
    games at once, one frontier expansion per distance.

    Example:
        >>> board = np.array([[2 | 128, 8 | 2, 8 | 32 | 2 * 16]], np.uint8)  # a 3x1 corridor
        >>> exit_distances(board, np.array([2]), width=3).tolist()
        [[2, 1, 0]]
    """
    games, cells = board.shape
    inner = board & ~(board >> _FRAME_SHIFT)  # the doorway is open but leads nowhere
    distance = np.full((games, cells), -1, np.int64)
    rows = np.arange(games)
    distance[rows, exit_cell] = 0
    frontier = np.zeros((games, cells), np.bool_)
    frontier[rows, exit_cell] = True
    for step in range(1, cells):
        reached = np.zeros_like(frontier)
        for bit, (dr, dc) in DELTAS.items():
            shift = dr * width + dc  # the neighbour through edge `bit` is cell + shift
            open_edge = (inner & bit) != 0
            if shift > 0:
                reached[:, :-shift] |= open_edge[:, :-shift] & frontier[:, shift:]
            else:
                reached[:, -shift:] |= open_edge[:, -shift:] & frontier[:, :shift]
        frontier = reached & (distance < 0)
        if not frontier.any():
            break
        distance[frontier] = step
    return distance


class EscapeVectorShaping(VectorWrapper):
    """Training-only reward shaping of ``maze_escape_v1.vector_env`` (see the module docstring).

    Arguments:
        env: the batched env (``maze_escape_v1.vector_env``, same-step automatic reset).
        progress: reward per move towards the exit along the maze (the same cost per move away).
        novelty: reward for each cell an agent stands on for the first time in a game.
        step_cost: cost of each turn an agent has not yet visited the exit (default 0).
    """

    def __init__(
        self,
        env: VectorEnv[Any, Any, Any],
        progress: float,
        novelty: float,
        step_cost: float = 0.0,
    ) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not isinstance(base, MazeEscapeVectorEnv) or base.autoreset_mode is not (
            AutoresetMode.SAME_STEP
        ):
            raise ValueError(
                "EscapeVectorShaping needs maze_escape_v1.vector_env with "
                "autoreset_mode=SAME_STEP (the default) below it"
            )
        self.progress, self.novelty = float(progress), float(novelty)
        self.step_cost = float(step_cost)
        self._base = base
        config = base.config
        self._agents, self._width = config.num_agents, config.width
        games, cells = base.num_games, config.width * config.height
        self._game_of_row = np.repeat(np.arange(games), self._agents)
        self._distance = np.zeros((games, cells), np.int64)
        self._seen = np.zeros((games * self._agents, cells), np.bool_)
        self._before = np.zeros(games * self._agents, np.int64)
        self._rewards = np.zeros(games * self._agents, np.float32)
        self._shaping = np.zeros(games * self._agents, np.float32)
        self._all_rows = np.arange(games * self._agents)

    def reset(self, **kwargs: Any) -> Any:
        observations, infos = self.env.reset(**kwargs)
        self._start(np.arange(self._base.num_games))
        return observations, infos

    def _start(self, games: NDArray[np.intp]) -> None:
        """Distances, seen cells and the distance before the first turn of new games."""
        state = self._base.state
        self._distance[games] = exit_distances(
            state.board[games], state.exit_cell[games], self._width
        )
        rows = (games[:, None] * self._agents + np.arange(self._agents)).ravel()
        cells = state.positions[games].reshape(-1)
        self._seen[rows] = False
        self._seen[rows, cells] = True
        self._before[rows] = self._distance[self._game_of_row[rows], cells]

    def step(self, actions: Any) -> Any:
        state = self._base.state
        searching = ~state.visited.reshape(-1)  # before the turn
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        n = self._agents
        ended_games = np.flatnonzero((terminations | truncations).reshape(-1, n)[:, 0])
        cells = state.positions.reshape(-1)  # of the next game where a game ended
        after = self._distance[self._game_of_row, cells]
        new = ~self._seen[self._all_rows, cells]
        shaping = self._shaping
        np.multiply(self.progress, self._before - after, out=shaping, casting="unsafe")
        shaping += self.novelty * new
        shaping -= self.step_cost
        if ended_games.size:
            ended = (ended_games[:, None] * n + np.arange(n)).ravel()
            success = terminations[ended]
            # success: every searching agent stepped onto the exit (distance 0); truncation:
            # the board is already the next game's, so its last turn is not shaped
            last = np.where(success, self.progress * self._before[ended], 0.0)
            shaping[ended] = last - self.step_cost
        shaping *= searching
        self._seen[self._all_rows, cells] = True
        self._before[:] = after
        if ended_games.size:
            self._start(ended_games)
        np.add(rewards, shaping, out=self._rewards)
        infos = {**infos, "shaping": shaping.copy()}
        return observations, self._rewards.copy(), terminations, truncations, infos
