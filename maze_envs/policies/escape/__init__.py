"""Classical Maze Escape baselines: they play from the typed observations only (the oracle
excepted, which is privileged).

* :class:`RandomWalk` -- a random open edge each turn.
* :class:`WallFollower` -- the left-hand or right-hand rule.
* :class:`TremauxExplorer` -- depth-first search on its own map (coordinates or dead reckoning).
* :class:`CooperativeExplorer` -- a team member that splits the search, radios the route from a
  landmark and helps teammates out.
* :class:`EscapeOracle` -- the shortest path from the full map (privileged).
"""

from __future__ import annotations

from maze_envs.policies.escape.cooperative import CooperativeExplorer
from maze_envs.policies.escape.explorer import TremauxExplorer
from maze_envs.policies.escape.oracle import EscapeOracle
from maze_envs.policies.escape.random_walk import RandomWalk
from maze_envs.policies.escape.wall_follower import WallFollower

__all__ = ["CooperativeExplorer", "EscapeOracle", "RandomWalk", "TremauxExplorer", "WallFollower"]
