"""Deprecated: the labyrinth set's adapter is :class:`maze_envs.bench.envs.AgiMazeSetAdapter`
and its scores :func:`maze_envs.bench.metrics.agimaze_set_scores` (the set is a row of the
table of environments, issue 26)."""

from __future__ import annotations

import warnings

from maze_envs.bench.envs import AgiMazeSetAdapter
from maze_envs.bench.metrics import agimaze_set_scores

warnings.warn(
    "maze_envs.bench.setgames is deprecated: import AgiMazeSetAdapter from "
    "maze_envs.bench.envs and agimaze_set_scores from maze_envs.bench.metrics",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["AgiMazeSetAdapter", "agimaze_set_scores"]
