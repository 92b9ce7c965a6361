"""One Maze Escape agent as a Gymnasium environment, its teammates driven by policies
(:class:`SingleAgentEscape`; its reference is the class docstring).

Example:
    >>> from wrappers.move_only import MoveOnlyActions
    >>> from wrappers.single_agent import SingleAgentEscape
    >>> env = SingleAgentEscape(preset="full", width=6, height=6, max_turns=40,
    ...                         teammates="explorer", wrappers=[MoveOnlyActions])
    >>> env.action_space
    Discrete(5)
    >>> observation, info = env.reset(seed=1)
    >>> observation["turn"], env.action_masks().tolist()
    (0, [True, False, False, False, True])
    >>> observation, reward, terminated, truncated, info = env.step(0)
    >>> observation["turn"], info["events"]["move"]
    (1, 'moved')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from numpy.typing import NDArray

from maze_envs import maze_escape_v1
from maze_envs.escape.types import Observation
from maze_envs.policies import as_decision, escape_episode, is_privileged, make_policy
from maze_envs.policies.episodes import escape_env_id
from maze_envs.policies.seeds import escape_salt, policy_seeds
from wrappers.escape_base import escape_layers
from wrappers.masks import EscapeActionMasks, open_moves

__all__ = ["SingleAgentEscape"]

TeammateSpec = str | Mapping[str, Any]


class SingleAgentEscape(gymnasium.Env[Any, Any]):
    """One Maze Escape agent as a Gymnasium env; the teammates play by the given policies.

    ## Description

    Plays one agent (``agent="A"``) of a Maze Escape game as a ``gymnasium.Env``; every other
    agent is played by a policy of the policy interface (:mod:`maze_envs.policies`): reset each
    game with :func:`~maze_envs.policies.escape_episode` (privileged policies get the ground
    truth) and asked for an action each turn with its typed
    :class:`~maze_envs.escape.types.Observation`. Teammates always see and act on the raw game
    (their notebooks and radio work), whatever wrappers change the learning agent's view.

    ## Action Space

    The agent's action space of the (wrapped) parallel env. ``action_masks()`` gives the 5-move
    mask (N, E, S, W, STAY open) for sb3-contrib's ``MaskablePPO``: from
    :class:`~wrappers.masks.EscapeActionMasks` when it is in the stack, otherwise computed from
    the agent's cell the same way.

    ## Observation Space

    The agent's observation space of the (wrapped) parallel env.

    ## Rewards

    The agent's reward; ``info`` is the agent's info plus ``team_rewards`` (every agent's reward).

    ## Starting State

    ``reset(seed=s)`` plays the game of seed ``s`` (as the parallel env would) and seeds the
    teammates from ``s`` exactly as the benchmark runner does
    (:func:`maze_envs.policies.seeds.policy_seeds`, salted by the env id and maze size), so the
    same seed gives the same teammates here and in ``maze-envs bench``; later resets without a
    seed continue deterministically (from the game seed the env draws).

    ## Episode End

    ``terminated`` when the game ends in team success, ``truncated`` at the turn limit.

    ## Arguments

    * ``teammates``: a policy spec string (one fresh policy per teammate, e.g. ``"explorer"``), or
      a mapping teammate name -> policy object or spec string, one entry per teammate.
    * ``env``: a Maze Escape parallel env (v0 or v1), bare or wrapped by the maze-envs Escape
      wrappers (:class:`~wrappers.escape_numeric.EscapeNumericObservation`,
      :class:`~wrappers.move_only.MoveOnlyActions`, :class:`~wrappers.masks.EscapeActionMasks`);
      or leave it out and give ``maze_escape_v1.parallel_env`` keyword arguments (``preset``,
      ``width``, ...) plus ``wrappers``, callables applied to that env in order.
    * ``agent``: the agent learnt; ``render_mode``: that of the parallel env.
    """

    def __init__(
        self,
        env: Any = None,
        *,
        agent: str = "A",
        teammates: TeammateSpec = "explorer",
        wrappers: Sequence[Callable[[Any], Any]] = (),
        render_mode: str | None = None,
        **env_kwargs: Any,
    ) -> None:
        if env is None:
            env = maze_escape_v1.parallel_env(render_mode=render_mode, **env_kwargs)
        elif env_kwargs or render_mode is not None:
            raise ValueError(
                "pass either env or maze_escape_v1.parallel_env arguments "
                f"({sorted(env_kwargs)}{', render_mode' if render_mode else ''}), not both"
            )
        for wrap in wrappers:
            env = wrap(env)
        self.parallel_env = env
        self._layers, self.base_env = escape_layers(env)
        self.agent = agent
        agents = list(self.base_env.possible_agents)
        if agent not in agents:
            raise ValueError(f"unknown agent {agent!r}; this game's agents are {agents}")
        self.teammates = [a for a in agents if a != agent]
        self.policies = self._make_policies(teammates)
        self.config = self.base_env.config
        self.observation_space = env.observation_space(agent)
        self.action_space = env.action_space(agent)
        self.metadata = {
            "render_modes": list(self.base_env.metadata["render_modes"]),
            "render_fps": self.base_env.metadata.get("render_fps", 4),
        }
        self.render_mode = self.base_env.render_mode
        self._masks = next((x for x in self._layers if isinstance(x, EscapeActionMasks)), None)
        self._raw: dict[str, Any] = {}
        self._started = False

    def _make_policies(self, teammates: TeammateSpec) -> dict[str, Any]:
        if isinstance(teammates, str):
            return {name: make_policy(teammates) for name in self.teammates}
        if not isinstance(teammates, Mapping) or set(teammates) != set(self.teammates):
            got = sorted(teammates) if isinstance(teammates, Mapping) else type(teammates)
            raise ValueError(
                f"teammates must be a policy spec string or a mapping with one policy for each "
                f"of {self.teammates} (agent {self.agent!r} is the learner), got {got}"
            )
        policies = {}
        for name in self.teammates:
            member = teammates[name]
            policies[name] = make_policy(member) if isinstance(member, str) else member
            if not callable(getattr(policies[name], "act", None)):
                raise ValueError(
                    f"teammate {name!r}: {type(member).__name__} is not a policy (it needs "
                    "reset() and act(), see maze_envs.policies.interface)"
                )
        return policies

    # --- the Gymnasium API ----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None and not self._started:  # a first game without a seed: from entropy
            seed = int(self.np_random.integers(2**63))
        raw, infos = self.base_env.reset(seed=seed, options=options)
        self._started = True
        seeds = self.teammate_seeds()
        for name, policy in self.policies.items():
            episode = escape_episode(self.base_env, name, privileged=is_privileged(policy))
            policy.reset(name, seeds[name], episode)
        return self._observe(raw), infos[self.agent]

    def teammate_seeds(self) -> dict[str, int]:
        """The policy seed of each teammate in the current game (as the runner would give them)."""
        base, config = self.base_env, self.config
        if base.game_seed is None:
            raise RuntimeError("call reset() before teammate_seeds()")
        salt = escape_salt(escape_env_id(base), config.width, config.height)
        seeds = policy_seeds(base.game_seed, base.possible_agents, salt)
        return {name: seeds[name] for name in self.teammates}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        raw, config = self._raw, self.config
        actions = {}
        for name, policy in self.policies.items():
            typed = Observation.from_space(raw[name], config, name)
            actions[name] = as_decision(policy.act(typed)).action
        for layer in self._layers:  # outermost first, as a parallel step would
            action = layer.action(self.agent, action)
        actions[self.agent] = action
        raw, rewards, terminations, truncations, infos = self.base_env.step(actions)
        info = {**infos[self.agent], "team_rewards": rewards}
        return (
            self._observe(raw),
            float(rewards[self.agent]),
            bool(terminations[self.agent]),
            bool(truncations[self.agent]),
            info,
        )

    def _observe(self, raw: dict[str, Any]) -> Any:
        """The learner's observation through the wrapper layers (innermost first)."""
        self._raw = raw
        obs = raw[self.agent]
        for layer in reversed(self._layers):
            layer.raw_observations = raw
            obs = layer.observation(self.agent, obs, raw[self.agent])
        return obs

    def action_masks(self) -> NDArray[np.bool_]:
        """The learner's moves known to be open: N, E, S, W, STAY (STAY always True)."""
        if not self._raw:
            raise RuntimeError("call reset() before action_masks()")
        if self._masks is not None:
            return self._masks.action_mask(self.agent)
        return open_moves(self._raw[self.agent]["edges"]).astype(bool)

    @property
    def raw_observations(self) -> dict[str, Any]:
        """Every agent's latest observation as the env gave it (teammates' included)."""
        return self._raw

    def render(self) -> Any:
        return self.base_env.render()

    def close(self) -> None:
        for policy in self.policies.values():
            close = getattr(policy, "close", None)
            if callable(close):
                close()
        self.parallel_env.close()
