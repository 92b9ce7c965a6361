"""Maze Escape, version 0: the PettingZoo entry points.

``parallel_env`` builds the :class:`~maze_envs.escape.env.MazeEscapeEnv` ``ParallelEnv``;
``env`` is its AEC form (each action is checked as it arrives, plus PettingZoo's order-enforcing
wrapper) and ``raw_env`` the AEC form without that wrapper. Keyword arguments are Config fields,
applied on top of ``preset``; ``config`` may be given instead as a whole. Version 0 keys the
per-teammate observation fields by the *other* agents, so each agent's observation space
differs; new code should use :mod:`maze_envs.maze_escape_v1` (same rules, one space for all).

Example:
    >>> from maze_envs import maze_escape_v0
    >>> env = maze_escape_v0.parallel_env(preset="sparse", width=12, height=12, max_turns=80)
    >>> env.config.width, env.metadata["name"]
    (12, 'maze_escape_v0')
    >>> sorted(env.observation_space("A")["radio"].spaces)
    ['B', 'C']
"""

from __future__ import annotations

import inspect
from typing import Any

from pettingzoo.utils.env import AECEnv

import maze_envs.escape.env as _reference
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.factory import build_aec, build_parallel, build_raw_aec
from maze_envs.escape.generator import Generator
from maze_envs.escape.types import PRESETS, Config

metadata = MazeEscapeEnv.metadata

__all__ = ["PRESETS", "Config", "MazeEscapeEnv", "env", "metadata", "parallel_env", "raw_env"]


def parallel_env(
    preset: str | None = None,
    *,
    config: Config | None = None,
    render_mode: str | None = None,
    generator: Generator | None = None,
    journal: Any = None,
    **overrides: Any,
) -> MazeEscapeEnv:
    """The parallel environment; ``overrides`` are Config fields (validated)."""
    return build_parallel(MazeEscapeEnv, preset, config, render_mode, generator, journal, overrides)


def raw_env(**kwargs: Any) -> AECEnv[str, Any, Any]:
    """The AEC conversion without PettingZoo's order-enforcing wrapper."""
    return build_raw_aec(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv[str, Any, Any]:
    """The AEC environment (agents act one after another; the turn resolves after the last)."""
    return build_aec(parallel_env(**kwargs))


# help(maze_escape_v0) shows the environment reference (Description, Action Space, ...) too.
__doc__ = f"{__doc__}\n{inspect.cleandoc(_reference.MazeEscapeEnv.__doc__ or '')}"
