"""Maze Escape: a cooperative multi-agent maze (PettingZoo ``ParallelEnv``).

Use :mod:`maze_envs.maze_escape_v0` for the versioned entry points. The package is split by idea:
``types`` (config, presets, state, typed models), ``generator`` (instances), ``engine`` (rules),
``notebook`` and ``radio`` (their rules), ``observe`` (what an agent sees), ``spaces`` (Gymnasium
spaces and conversions), ``env`` (the environment) and ``viewer`` (spectator pictures).
"""

from __future__ import annotations

from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator, Layout, PerfectMazeGenerator
from maze_envs.escape.types import PRESETS, Action, AppendEdit, Config, Observation, SpliceEdit

__all__ = [
    "PRESETS",
    "Action",
    "AppendEdit",
    "Config",
    "FixedGenerator",
    "Layout",
    "MazeEscapeEnv",
    "Observation",
    "PerfectMazeGenerator",
    "SpliceEdit",
]
