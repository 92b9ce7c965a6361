"""Building a Maze Escape environment from a preset and keyword overrides (the versioned entry
points :mod:`maze_envs.maze_escape_v0` and :mod:`maze_envs.maze_escape_v1` share it)."""

from __future__ import annotations

from typing import Any, TypeVar

from pettingzoo.utils.env import AECEnv

from maze_envs.escape.aec import MazeEscapeAEC, aec_env
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import Generator
from maze_envs.escape.types import Config

EnvT = TypeVar("EnvT", bound=MazeEscapeEnv)


def build_parallel(
    env_class: type[EnvT],
    preset: str | None,
    config: Config | None,
    render_mode: str | None,
    generator: Generator | None,
    journal: Any,
    overrides: dict[str, Any],
) -> EnvT:
    """``env_class`` for ``config``, or for ``preset`` with Config field ``overrides``."""
    if config is not None and (preset is not None or overrides):
        raise ValueError("pass either config or preset/keyword overrides, not both")
    if config is not None and not isinstance(config, Config):
        raise ValueError(
            f"config must be a maze_envs.escape.types.Config, got {type(config).__name__}"
        )
    resolved = config if config is not None else Config.from_preset(preset, **overrides)
    return env_class(resolved, render_mode=render_mode, generator=generator, journal=journal)


def build_raw_aec(parallel: MazeEscapeEnv) -> AECEnv[str, Any, Any]:
    """The AEC conversion without PettingZoo's order-enforcing wrapper."""
    return MazeEscapeAEC(parallel)


def build_aec(parallel: MazeEscapeEnv) -> AECEnv[str, Any, Any]:
    """The AEC environment (order-enforcing wrapper included)."""
    return aec_env(parallel)
