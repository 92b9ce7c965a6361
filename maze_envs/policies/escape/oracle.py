"""The Maze Escape oracle: the fastest possible play, from the full map (privileged)."""

from __future__ import annotations

from collections import deque

from maze_envs.escape.types import Action, Direction, Observation
from maze_envs.policies.escape.geometry import DIRECTIONS, agent_index
from maze_envs.policies.interface import EscapeEpisode, EscapeGroundTruth, PolicyBase

#: (row delta, column delta) of each move on the board (row 0 is the northern row).
_ROW_COL: dict[Direction, tuple[int, int]] = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}


def shortest_moves(truth: EscapeGroundTruth, start: int) -> list[Direction]:
    """A shortest list of moves from the flat cell ``start`` to the exit (breadth-first)."""
    width, height = truth.width, truth.height
    parent: dict[int, tuple[int, Direction] | None] = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == truth.exit_cell:
            moves: list[Direction] = []
            while (link := parent[cell]) is not None:
                cell, move = link
                moves.append(move)
            return moves[::-1]
        row, col = divmod(cell, width)
        for k, direction in enumerate(DIRECTIONS):
            if truth.walls[cell] & (1 << k):
                continue
            dr, dc = _ROW_COL[direction]
            r, c = row + dr, col + dc
            if 0 <= r < height and 0 <= c < width and (nxt := r * width + c) not in parent:
                parent[nxt] = (cell, direction)
                queue.append(nxt)
    raise ValueError(f"the exit cannot be reached from cell {start}: not a connected maze")


class EscapeOracle(PolicyBase[EscapeEpisode, Observation, Action]):
    """Walks a shortest path from its start to the exit, then stays (privileged).

    Knows: the whole board from ``episode.ground_truth`` (walls, exit, its start), which the runner
    gives only to privileged policies. Does: at reset computes a breadth-first shortest path and
    follows it one move per turn, so it reaches the exit at turn ``shortest_path_to_exit[agent]``
    and a team of oracles finishes at exactly ``fastest_possible_finish``. It ignores its
    observations except to check that every move succeeded (a refused move means the ground truth
    is not this game's, which raises ``RuntimeError``).
    """

    privileged = True

    def __init__(self) -> None:
        self.plan: list[Direction] = []
        self._step = 0

    def reset(self, agent: str, seed: int | None, episode: EscapeEpisode) -> None:
        super().reset(agent, seed, episode)
        truth = getattr(episode, "ground_truth", None)
        if truth is None:
            raise ValueError(
                "the Maze Escape oracle is privileged: reset it with an episode that has "
                "ground_truth (maze_envs.policies.escape_episode(env, agent, privileged=True))"
            )
        start = truth.starts[agent_index(agent, episode.agents)]
        self.plan = shortest_moves(truth, start)
        self._step = 0

    def act(self, observation: Observation) -> Action:
        if self._step and observation.last_action.move not in ("moved", "stayed"):
            raise RuntimeError(
                f"oracle move {self._step} was refused ({observation.last_action.move}): "
                "the ground truth does not describe this game"
            )
        if self._step >= len(self.plan):
            self._step += 1
            return Action(move="STAY")
        move = self.plan[self._step]
        self._step += 1
        return Action(move=move)
