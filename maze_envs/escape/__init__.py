"""Maze Escape: a cooperative multi-agent maze (PettingZoo ``ParallelEnv``).

Use :mod:`maze_envs.maze_escape_v1` (or ``maze_escape_v0``) for the versioned entry points. The
package is split by idea, each floor importing only those below it:

* ``vocab`` (moves, edge kinds, results: IntEnums and their names), ``config`` (the Config, its
  presets, agent names, env versions), ``actions`` (the action-space check and the plain-data
  normal form of actions);
* ``types`` (data only: the engine state and the typed models; re-exports the names above);
* ``features`` (the optional observation features, each declared once with every form: space,
  computation, typed and JSON form, text, numeric encoding, viewer panel; its docstring has the
  three-step recipe for adding one), ``jsonform`` (the JSON form of observations and actions,
  which the typed models' conversion methods call);
* ``generator`` (instances), ``notebook`` and ``radio`` (their rules), ``engine`` (the turn
  rules), ``observe`` (what an agent sees), ``spaces`` (Gymnasium spaces), ``convert`` (models
  and the journal's stored form);
* ``env`` (the environment, both versions), ``aec`` (its AEC form), ``factory`` (building from
  presets), ``viewer`` (spectator pictures), ``replay`` (rebuilding journaled games).

Adding an optional observation feature takes three steps; every form (the space, the
observations, the typed model and JSON form, the text a model reads, the numeric observation,
the viewer) follows from them, and ``tests/escape/test_feature_conformance.py`` names any form
that lacks the feature:

1. a switch: a field of :class:`Config` marked ``json_schema_extra=FEATURE_SWITCH``, off by
   default (``config.py``);
2. its typed field(s) on :class:`Observation`, ``None`` while the feature is off (``types.py``);
3. its declaration: a :class:`~maze_envs.escape.features.base.Feature` subclass (switch, keys,
   spaces, computation, typed fields and back, legend and text lines, numeric fields, viewer
   rows) in a module of :mod:`maze_envs.escape.features`, added to ``FEATURES``, with its
   sentences added to the wording file ``maze_envs/text/data/escape-<version>.json``.
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
