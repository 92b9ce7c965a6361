"""Maze Escape, version 1: the PettingZoo entry points (registered as ``maze_envs/MazeEscape-v1``).

The rules of version 0, with one observation space for every agent: per-teammate fields
(``radio``, ``teammate_notebooks``, ``distances[1:]``, ``colocated_with``) are keyed by *all*
agent names in name order, the agent itself included, and its own entry is blank
(``radio[self] == ""``, ``teammate_notebooks[self] == {"shown": 0, "text": ""}``,
``distances == [exit, to A, to B, ...]`` with 0 for itself, ``colocated_with[self] == 0``).
Vectorising libraries (SuperSuit) need exactly that. Games are journaled under their own env id
and replay as version 1.

``parallel_env`` builds the :class:`~maze_envs.escape.env.MazeEscapeV1Env` ``ParallelEnv``;
``env`` is its AEC form (each action is checked as it arrives, plus PettingZoo's order-enforcing
wrapper) and ``raw_env`` the AEC form without that wrapper. Keyword arguments are Config fields,
applied on top of ``preset``; ``config`` may be given instead as a whole.

``vector_env(num_games=N, ...)`` builds N games as one Gymnasium ``VectorEnv`` for
reinforcement learning (:mod:`maze_envs.escape.batch`): a row per agent of every game, the
numeric observations of ``EscapeNumericObservation(flatten=True)``, the same rules.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> env = maze_escape_v1.parallel_env(preset="full", width=8, height=8)
    >>> env.metadata["name"], env.env_id
    ('maze_escape_v1', 'maze_envs/MazeEscape-v1')
    >>> sorted(env.observation_space("A")["radio"].spaces)
    ['A', 'B', 'C']
    >>> all(env.observation_space(a) == env.observation_space("A") for a in env.possible_agents)
    True
"""

from __future__ import annotations

import inspect
from typing import Any

from pettingzoo.utils.env import AECEnv

import maze_envs.escape.env as _reference
from maze_envs.escape.batch.vector import MazeEscapeVectorEnv, batch_config
from maze_envs.escape.env import MazeEscapeV1Env
from maze_envs.escape.factory import build_aec, build_parallel, build_raw_aec
from maze_envs.escape.generator import Generator
from maze_envs.escape.types import PRESETS, Config

metadata = MazeEscapeV1Env.metadata

__all__ = [
    "PRESETS",
    "Config",
    "MazeEscapeV1Env",
    "MazeEscapeVectorEnv",
    "env",
    "metadata",
    "parallel_env",
    "raw_env",
    "vector_env",
]


def parallel_env(
    preset: str | None = None,
    *,
    config: Config | None = None,
    render_mode: str | None = None,
    generator: Generator | None = None,
    journal: Any = None,
    **overrides: Any,
) -> MazeEscapeV1Env:
    """The parallel environment; ``overrides`` are Config fields (validated)."""
    return build_parallel(
        MazeEscapeV1Env, preset, config, render_mode, generator, journal, overrides
    )


def raw_env(**kwargs: Any) -> AECEnv[str, Any, Any]:
    """The AEC conversion without PettingZoo's order-enforcing wrapper."""
    return build_raw_aec(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv[str, Any, Any]:
    """The AEC environment (agents act one after another; the turn resolves after the last)."""
    return build_aec(parallel_env(**kwargs))


def vector_env(
    num_games: int,
    preset: str | None = None,
    *,
    config: Config | None = None,
    autoreset_mode: Any = "SameStep",
    copy: bool = False,
    **overrides: Any,
) -> MazeEscapeVectorEnv:
    """``num_games`` games as one Gymnasium ``VectorEnv`` (``num_envs = num_games *
    num_agents`` rows, see :mod:`maze_envs.escape.batch.vector`); ``overrides`` are Config
    fields (validated; free-text options raise ``ValueError`` naming them)."""
    resolved = batch_config(preset, config, overrides)
    return MazeEscapeVectorEnv(num_games, resolved, autoreset_mode=autoreset_mode, copy=copy)


# help(maze_escape_v1) shows the environment reference (Description, Action Space, ...) too.
__doc__ = f"{__doc__}\n{inspect.cleandoc(_reference.MazeEscapeV1Env.__doc__ or '')}"
