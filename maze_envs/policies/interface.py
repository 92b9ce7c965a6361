"""The policy interface: what decides an agent's action from its observation.

A policy controls one agent. It is reset once per game with the agent's name and a seed (its only
source of randomness), then asked for one action per turn. It may keep its own memory between
turns; what it knows about the maze comes only from the observations it is shown.

Policies speak the typed models of :mod:`maze_envs.escape.types` (``Observation`` in, ``Action``
out), so classical solvers and language-model policies are interchangeable; converting to and from
the environment's Gymnasium spaces is the runner's job.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from maze_envs.escape.types import Action, Observation


@runtime_checkable
class Policy(Protocol):
    """Chooses one agent's actions, turn by turn."""

    def reset(self, agent: str, seed: int | None) -> None:
        """Start a new game as ``agent``; all randomness must come from ``seed``."""
        ...

    def act(self, observation: Observation) -> Action:
        """The action for this turn."""
        ...
