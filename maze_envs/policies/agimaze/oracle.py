"""The AGI Maze oracle: the exact shortest plan over position and inventory (privileged)."""

from __future__ import annotations

from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.planner import solve
from maze_envs.agimaze.set_env import START_ACTION
from maze_envs.agimaze.types import Labyrinth
from maze_envs.policies.interface import AgiMazeEpisode, PolicyBase


class AgiMazeOracle(PolicyBase[AgiMazeEpisode, AgiMazeObservation, str]):
    """Plays a shortest winning plan of the labyrinth (privileged: it sees the whole labyrinth).

    Knows: the labyrinth (``episode.ground_truth``), which the runner gives only to privileged
    policies. Does: at reset runs the exact breadth-first planner over player states (position,
    inventory, taken packs, blown walls; :func:`maze_envs.agimaze.planner.solve`) and plays its
    plan, so it wins in the optimal number of steps and, since every shipped budget is at least
    the optimal length, scores RHAE70 = 1.0 wherever ``0.7 * max_steps`` covers the optimum
    (every shipped pack). In a labyrinth set it answers ``start`` while the set waits.

    Raises ``ValueError`` at reset without the ground truth, or when the labyrinth cannot be won.
    """

    privileged = True

    def __init__(self) -> None:
        self.plan: list[str] = []
        self._step = 0

    def reset(self, agent: str, seed: int | None, episode: AgiMazeEpisode) -> None:
        super().reset(agent, seed, episode)
        lab = episode.ground_truth
        if lab is None and set(episode.action_names) <= {START_ACTION}:
            self.plan, self._step = [], 0  # a labyrinth set waiting for start: nothing to plan
            return
        if not isinstance(lab, Labyrinth):
            raise ValueError(
                "the AGI Maze oracle is privileged: reset it with an episode that has the "
                "labyrinth as ground_truth (agimaze_episode(env, info, privileged=True))"
            )
        plan = solve(lab)
        if plan is None:
            raise ValueError(f"labyrinth {episode.name or '<unnamed>'} cannot be won")
        self.plan = plan
        self._step = 0

    def act(self, observation: AgiMazeObservation) -> str:
        if observation.waiting:
            return START_ACTION
        if self._step >= len(self.plan):
            raise RuntimeError(
                f"the oracle's plan of {len(self.plan)} steps is used up but the game goes on: "
                "the ground truth does not describe this labyrinth"
            )
        action = self.plan[self._step]
        self._step += 1
        return action
