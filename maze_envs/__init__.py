"""maze-envs: maze environments for research on agents.

* Maze Escape (``maze_envs.maze_escape_v0``): a cooperative multi-agent maze, a PettingZoo
  ``ParallelEnv`` (and its AEC conversion), registered as ``maze_envs/MazeEscape-v0``.
* AGI Maze (``maze_envs/AgiMaze-v0``, ``maze_envs/AgiMazeSet-v0``): Gymnasium environments for the
  AGI Maze labyrinth benchmark.

Importing the package registers every environment with Gymnasium and PettingZoo.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from maze_envs._registration import register_environments

try:
    __version__ = version("maze-envs")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

register_environments()

__all__ = ["__version__", "register_environments"]
