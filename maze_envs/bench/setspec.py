"""Deprecated: the labyrinth-set setups live in :mod:`maze_envs.bench.agimaze_spec` beside the
single-labyrinth ones (the set is a row of the table of environments, issue 26)."""

from __future__ import annotations

import warnings

from maze_envs.bench.agimaze_spec import (
    AGIMAZE_SET_ENV_ID,
    AgiMazeSetCase,
    AgiMazeSetSetup,
    default_tutorials,
)

warnings.warn(
    "maze_envs.bench.setspec is deprecated: import from maze_envs.bench.agimaze_spec "
    "(or maze_envs.bench.spec)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["AGIMAZE_SET_ENV_ID", "AgiMazeSetCase", "AgiMazeSetSetup", "default_tutorials"]
