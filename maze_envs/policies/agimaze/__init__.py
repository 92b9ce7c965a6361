"""Classical AGI Maze baselines.

* :class:`AgiMazeRandom` -- uniform over the labyrinth's actions (the calibration reference).
* :class:`AgiMazeExplorer` -- maps walls and items, learns rivers and pits, collects, leaves.
* :class:`AgiMazeOracle` -- the exact shortest plan (privileged).
"""

from __future__ import annotations

from maze_envs.policies.agimaze.explorer import AgiMazeExplorer
from maze_envs.policies.agimaze.oracle import AgiMazeOracle
from maze_envs.policies.agimaze.uniform import AgiMazeRandom

__all__ = ["AgiMazeExplorer", "AgiMazeOracle", "AgiMazeRandom"]
