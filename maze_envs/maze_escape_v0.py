"""Maze Escape, version 0: the PettingZoo entry points.

``parallel_env`` builds the :class:`~maze_envs.escape.env.MazeEscapeEnv` ``ParallelEnv``;
``env`` is its AEC form (``parallel_to_aec``, which adds PettingZoo's order-enforcing wrapper) and
``raw_env`` the AEC form without that wrapper. Keyword arguments are Config fields, applied on top
of ``preset``; ``config`` may be given instead as a whole.

Example:
    >>> from maze_envs import maze_escape_v0
    >>> env = maze_escape_v0.parallel_env(preset="sparse", width=12, height=12, max_turns=80)
    >>> env.config.width, env.metadata["name"]
    (12, 'maze_escape_v0')
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper
from pettingzoo.utils.env import AECEnv

from maze_envs.escape.env import MazeEscapeEnv
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
    if config is not None and (preset is not None or overrides):
        raise ValueError("pass either config or preset/keyword overrides, not both")
    resolved = config if config is not None else Config.from_preset(preset, **overrides)
    return MazeEscapeEnv(resolved, render_mode=render_mode, generator=generator, journal=journal)


def raw_env(**kwargs: Any) -> AECEnv:
    """The AEC conversion without PettingZoo's order-enforcing wrapper."""
    return parallel_to_aec_wrapper(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment (agents act one after another; the turn resolves after the last)."""
    return parallel_to_aec(parallel_env(**kwargs))
