"""Plain game loops for the policy tests: env -> typed observation -> policy -> action.

The real runner is ``maze_envs.bench``; these loops are as small as possible, so that a test
failure points at a policy and never at a harness.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.types import Action, Observation
from maze_envs.policies import (
    PLAYER,
    agimaze_episode,
    as_decision,
    escape_episode,
    is_privileged,
)

#: Maze Escape versions whose entry module exists in this checkout.
ESCAPE_VERSIONS: tuple[int, ...] = tuple(
    v for v in (0, 1) if importlib.util.find_spec(f"maze_envs.maze_escape_v{v}") is not None
)


@dataclass
class EscapeGame:
    """What a test wants to know about one played Maze Escape game."""

    env: Any
    outcome: dict[str, Any]
    policies: dict[str, Any]
    #: per turn: the typed observation and the action of every agent still playing
    turns: list[dict[str, tuple[Observation, Action]]] = field(default_factory=list)
    #: per turn: the events of every agent (as in ``infos``)
    events: list[dict[str, dict[str, Any]]] = field(default_factory=list)


def escape_env(version: int = 0, **config: Any) -> Any:
    module = importlib.import_module(f"maze_envs.maze_escape_v{version}")
    return module.parallel_env(**config)


def play_escape(
    make: Callable[[str], Any] | Sequence[Any],
    seed: int,
    *,
    version: int = 0,
    watch: Callable[[str, Any, Observation], None] | None = None,
    **config: Any,
) -> EscapeGame:
    """One game: ``make(agent)`` builds each agent's policy (or give the policies in order)."""
    env = escape_env(version, **config)
    raw, _ = env.reset(seed=seed)
    agents = list(env.possible_agents)
    policies = (
        {a: make(a) for a in agents} if callable(make) else dict(zip(agents, make, strict=True))
    )
    for number, (agent, policy) in enumerate(policies.items()):
        episode = escape_episode(env, agent, privileged=is_privileged(policy))
        policy.reset(agent, 1000 * seed + number, episode)
    game = EscapeGame(env, {}, policies)
    while env.agents:
        typed = {a: observation_to_model(raw[a], env.config, a) for a in env.agents}
        turn = {}
        for agent in env.agents:
            action = as_decision(policies[agent].act(typed[agent])).action
            turn[agent] = (typed[agent], action)
            if watch is not None:
                watch(agent, policies[agent], typed[agent])
        game.turns.append(turn)
        raw, _, _, _, infos = env.step({a: act for a, (_, act) in turn.items()})
        game.events.append({a: info["events"] for a, info in infos.items()})
    game.outcome = env.outcome()
    env.close()
    return game


@dataclass
class AgiMazeGame:
    info: dict[str, Any]
    actions: list[str]
    observations: list[AgiMazeObservation]
    env: Any


def play_agimaze(path: str, policy: Any, seed: int = 0, **env_options: Any) -> AgiMazeGame:
    """One AGI Maze episode of the bundle ``path`` played by ``policy``."""
    env = gym.make("maze_envs/AgiMaze-v0", path=path, **env_options)
    obs, info = env.reset(seed=seed)
    policy.reset(PLAYER, seed, agimaze_episode(env, info, privileged=is_privileged(policy)))
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    actions, seen = [], [typed]
    while True:
        action = as_decision(policy.act(typed)).action
        actions.append(action)
        obs, _, terminated, truncated, info = env.unwrapped.step_name(action)
        typed = AgiMazeObservation.from_env(obs, info, last_action=action, env=env)
        seen.append(typed)
        if terminated or truncated:
            return AgiMazeGame(info, actions, seen, env)


def play_agimaze_set(policy: Any, seed: int = 0, **env_options: Any) -> dict[str, Any]:
    """A whole labyrinth set; the policy is reset with each labyrinth's episode after ``start``."""
    env = gym.make("maze_envs/AgiMazeSet-v0", **env_options)
    obs, info = env.reset(seed=seed)
    privileged = is_privileged(policy)
    policy.reset(PLAYER, seed, agimaze_episode(env, info))
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    while True:
        action = as_decision(policy.act(typed)).action
        was_waiting = typed.waiting
        obs, _, terminated, truncated, info = env.unwrapped.step_name(action)
        typed = AgiMazeObservation.from_env(obs, info, last_action=action, env=env)
        if was_waiting and not typed.waiting:  # a labyrinth began: its own episode
            policy.reset(PLAYER, seed, agimaze_episode(env, info, privileged=privileged))
            typed = typed.model_copy(update={"last_action": None})
        if terminated or truncated:
            return info
