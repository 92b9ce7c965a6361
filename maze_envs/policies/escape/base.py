"""What every classical Maze Escape baseline shares: reset, position and map upkeep, the exit.

A baseline plays one agent from its typed observations only (unless it is privileged). Each turn
:class:`EscapeBaseline` first reads the observation: the position (coordinates or dead
reckoning), the cell's edges, its landmark, whether the last move was refused. Then the subclass
chooses. Once the agent has stood on the exit its objective is met; by default it stays there
(:class:`~maze_envs.policies.escape.cooperative.CooperativeExplorer` goes back to help).

``reset``'s ``episode`` may be omitted: the baselines then assume the default
:class:`~maze_envs.escape.types.Config` limits (radio size and cooldown, maze size bounds).
"""

from __future__ import annotations

import numpy as np

from maze_envs.escape.types import Action, Config, Direction, Observation
from maze_envs.escape.vocab import REFUSED_RESULTS
from maze_envs.policies.escape.geometry import DIRECTIONS, agent_index
from maze_envs.policies.escape.knowledge import AgentMap, Tracker
from maze_envs.policies.interface import EscapeEpisode, PolicyBase

#: Move results that mean "the agent did not leave its cell although it tried".
REFUSED = REFUSED_RESULTS


class EscapeBaseline(PolicyBase[EscapeEpisode, Observation, Action]):
    """Base class of the Maze Escape baselines (see the module docstring)."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.tracker = Tracker()
        self.map = AgentMap()
        self.config = Config()
        self.agents: tuple[str, ...] = ()
        self.index = 0
        self.reached_exit = False

    def reset(
        self, agent: str, seed: int | None = None, episode: EscapeEpisode | None = None
    ) -> None:
        self.agent, self.seed, self.episode = agent, seed, episode
        self.rng = np.random.default_rng(seed)
        self.tracker.reset()
        self.map = AgentMap()
        self.config = episode.config if episode is not None else Config()
        self.agents = episode.agents if episode is not None else self.config.agents
        self.index = agent_index(agent, self.agents)
        self.reached_exit = False

    @property
    def position(self) -> tuple[int, int]:
        return self.tracker.position

    def act(self, observation: Observation) -> Action:
        tried, moved = self.tracker.update(observation)
        self.map.observe(self.position, observation)
        # after observe: the doorway reads "open" in the edges, yet does not lead anywhere
        if tried is not None and not moved and observation.last_action.move in REFUSED:
            self.map.mark_closed(self.position, tried)
        self.after_observe(observation, tried, moved)
        if observation.on_exit:
            self.reached_exit = True
        action = self.choose(observation)
        self.tracker.expect(None if action.move == "STAY" else action.move)
        return action

    def after_observe(self, observation: Observation, tried: Direction | None, moved: bool) -> None:
        """Hook: update the subclass's own memory after the common bookkeeping."""
        return None

    def choose(self, observation: Observation) -> Action:
        """This turn's action (the common bookkeeping is done)."""
        raise NotImplementedError

    def open_moves(self, observation: Observation) -> list[Direction]:
        """Open edges of the current cell that are not known to be closed (the doorway)."""
        here = self.position
        return [
            d for d in DIRECTIONS if observation.edges[d] == "open" and self.map.passable(here, d)
        ]
