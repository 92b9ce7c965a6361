"""The AGI Maze random baseline: the calibration reference."""

from __future__ import annotations

import numpy as np

from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.set_env import START_ACTION
from maze_envs.policies.interface import AgiMazeEpisode, PolicyBase


class AgiMazeRandom(PolicyBase[AgiMazeEpisode, AgiMazeObservation, str]):
    """Each step one of the labyrinth's actions, uniformly at random (the calibration agent).

    Knows: only the action names. Does: draws an index with ``rng.integers(len(actions))`` from
    its seeded generator every step, exactly as the uniform random agent of
    ``benchmarks/agimaze_calibration.py`` (and the real benchmark's random agent) does, so its
    success rates are the ones the TRAINING packs are calibrated on. In a labyrinth set it
    answers ``start`` while the set waits (``start`` is never among the random choices).
    """

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.actions: tuple[str, ...] = ()

    def reset(self, agent: str, seed: int | None, episode: AgiMazeEpisode) -> None:
        super().reset(agent, seed, episode)
        self.rng = np.random.default_rng(seed)
        self.actions = tuple(a for a in episode.action_names if a != START_ACTION)

    def act(self, observation: AgiMazeObservation) -> str:
        if observation.waiting:
            return START_ACTION
        if not self.actions:
            raise RuntimeError("AgiMazeRandom.act before reset (no action names)")
        return self.actions[int(self.rng.integers(len(self.actions)))]
