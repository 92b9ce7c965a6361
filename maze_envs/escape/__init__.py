"""Maze Escape: a cooperative multi-agent maze (PettingZoo ``ParallelEnv``).

Use :mod:`maze_envs.maze_escape_v1` (or ``maze_escape_v0``) for the versioned entry points. The
package is split by idea, each floor importing only those below it:

* ``vocab`` (moves, edge kinds, results: IntEnums and their names), ``config`` (the Config, its
  presets, agent names, env versions);
* ``actions`` (the action-space check and the plain-data normal form of actions), ``jsonform``
  (the JSON form of observations and actions);
* ``types`` (the engine state and the typed models; re-exports the names above);
* ``generator`` (instances), ``notebook`` and ``radio`` (their rules), ``engine`` (the turn
  rules), ``observe`` (what an agent sees), ``spaces`` (Gymnasium spaces), ``convert`` (models
  and the journal's stored form);
* ``env`` (the environment, both versions), ``aec`` (its AEC form), ``factory`` (building from
  presets), ``viewer`` (spectator pictures), ``replay`` (rebuilding journaled games).
"""

from __future__ import annotations

from maze_envs.escape.env import MazeEscapeEnv, MazeEscapeV1Env
from maze_envs.escape.generator import FixedGenerator, Layout, PerfectMazeGenerator
from maze_envs.escape.types import (
    PRESETS,
    Action,
    AppendEdit,
    Config,
    EdgeKind,
    Move,
    MoveResult,
    NotebookResult,
    Observation,
    RadioResult,
    SpliceEdit,
)

__all__ = [
    "PRESETS",
    "Action",
    "AppendEdit",
    "Config",
    "EdgeKind",
    "FixedGenerator",
    "Layout",
    "MazeEscapeEnv",
    "MazeEscapeV1Env",
    "Move",
    "MoveResult",
    "NotebookResult",
    "Observation",
    "PerfectMazeGenerator",
    "RadioResult",
    "SpliceEdit",
]
