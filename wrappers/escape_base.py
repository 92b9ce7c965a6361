"""The base class of the Maze Escape wrappers: per-agent observation and action transforms.

Every Maze Escape wrapper of this package
(:class:`~wrappers.escape_numeric.EscapeNumericObservation`,
:class:`~wrappers.move_only.MoveOnlyActions`, :class:`~wrappers.masks.EscapeActionMasks`) is a
PettingZoo :class:`~pettingzoo.utils.wrappers.BaseParallelWrapper` that changes observations
and/or actions *one agent at a time*, through two methods:

* ``observation(agent, obs, raw)``: this layer's view of ``agent``'s observation, given the
  observation of the layer below (``obs``) and the untouched observation of the environment
  (``raw``, a Maze Escape observation dict);
* ``action(agent, action)``: the action the layer below expects, given this layer's action.

Rewards, terminations, truncations and infos pass through unchanged. Each layer keeps the
environment's latest observations in ``raw_observations`` (the layers above read them from
it), so a layer can rely on the real fields even when it sits above another encoding. Because
the transforms are per agent, :class:`~wrappers.single_agent.SingleAgentEscape` can apply them to
its learning agent only while its teammates read and act on the raw environment.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.escape_base import EscapeWrapper, escape_layers
    >>> env = EscapeWrapper(maze_escape_v1.parallel_env(width=6, height=6))
    >>> observations, infos = env.reset(seed=1)
    >>> observations["A"] is env.raw_observations["A"]  # the base class changes nothing
    True
    >>> [type(layer).__name__ for layer in escape_layers(env)[0]]
    ['EscapeWrapper']
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo.utils.env import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from maze_envs.escape.env import MazeEscapeEnv

__all__ = ["EscapeWrapper", "escape_base_env", "escape_layers", "require_v1"]

StepResult = tuple[
    dict[str, Any],
    dict[str, float],
    dict[str, bool],
    dict[str, bool],
    dict[str, dict[str, Any]],
]


def escape_base_env(env: Any) -> MazeEscapeEnv:
    """The Maze Escape ``ParallelEnv`` under ``env``'s wrappers (``ValueError`` otherwise)."""
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, MazeEscapeEnv):
        raise ValueError(
            f"expected a Maze Escape parallel env (maze_escape_v1.parallel_env(...)), possibly "
            f"wrapped, got {type(env).__name__} (unwrapped: {type(base).__name__}); AEC envs and "
            "other environments are not supported"
        )
    return base


def require_v1(env: Any, wrapper: str) -> MazeEscapeEnv:
    """The base env of ``env``, which must be Maze Escape version 1."""
    base = escape_base_env(env)
    if base.version != 1:
        raise ValueError(
            f"{wrapper} needs maze_escape_v1 (one observation space for every agent); got "
            f"{base.metadata['name']}, whose per-agent spaces differ (its teammate fields are "
            "keyed by the other agents): build the env with maze_escape_v1.parallel_env(...)"
        )
    return base


def escape_layers(env: Any) -> tuple[list[EscapeWrapper], MazeEscapeEnv]:
    """The maze-envs Escape wrapper layers of ``env``, outermost first, and the base env.

    ``ValueError`` when another kind of wrapper sits between them (its transforms could not be
    applied agent by agent).
    """
    layers: list[EscapeWrapper] = []
    current = env
    while isinstance(current, EscapeWrapper):
        layers.append(current)
        current = current.env
    if not isinstance(current, MazeEscapeEnv):
        raise ValueError(
            f"expected the Maze Escape env wrapped only by maze-envs Escape wrappers "
            f"(EscapeNumericObservation, MoveOnlyActions, EscapeActionMasks); found "
            f"{type(current).__name__} under them"
        )
    return layers, current


class EscapeWrapper(BaseParallelWrapper[str, Any, Any]):
    """A Maze Escape ``ParallelEnv`` wrapper built from per-agent transforms (identity here)."""

    def __init__(self, env: ParallelEnv[str, Any, Any]) -> None:
        super().__init__(env)
        self.base_env = escape_base_env(env)
        self.config = self.base_env.config
        #: The environment's latest observations, untouched (for the layers above).
        self.raw_observations: dict[str, Any] = {}
        self._passes_actions = type(self).action is EscapeWrapper.action

    # --- the transforms subclasses write ------------------------------------------------------
    def observation(self, agent: str, obs: Any, raw: Any) -> Any:
        """This layer's observation of ``agent`` (``obs``: the layer below's; ``raw``: the env's
        own observation)."""
        return obs

    def action(self, agent: str, action: Any) -> Any:
        """The action of ``agent`` for the layer below."""
        return action

    # --- the ParallelEnv API ------------------------------------------------------------------
    @property
    def agents(self) -> list[str]:
        """The agents still in the game (the env's list; read without ``__getattr__``)."""
        return self.base_env.agents

    def _raw_of(self, observations: dict[str, Any]) -> dict[str, Any]:
        inner = self.env
        return inner.raw_observations if isinstance(inner, EscapeWrapper) else observations

    def observations(self, observations: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
        """This layer's observations of every agent (by default ``observation`` per agent; a
        layer may encode all agents at once here, as long as the result is the same)."""
        observation = self.observation
        return {a: observation(a, o, raw[a]) for a, o in observations.items()}

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        raw = self.raw_observations = self._raw_of(observations)
        return self.observations(observations, raw), infos

    def step(self, actions: dict[str, Any]) -> StepResult:
        if self._passes_actions:  # this layer keeps actions as they are: no per-agent calls
            inner = actions
        else:
            action = self.action
            inner = {a: action(a, act) for a, act in actions.items()}
        observations, rewards, terminations, truncations, infos = self.env.step(inner)
        raw = self.raw_observations = self._raw_of(observations)
        return self.observations(observations, raw), rewards, terminations, truncations, infos

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.env.action_space(agent)
