"""maze-envs: maze environments for research on agents.

* Maze Escape (``maze_envs.maze_escape_v1``, and ``maze_envs.maze_escape_v0`` for the older
  observation layout): a cooperative multi-agent maze, a PettingZoo ``ParallelEnv`` (and its AEC
  form), registered as ``maze_envs/MazeEscape-v1`` and ``maze_envs/MazeEscape-v0``.
* AGI Maze (``maze_envs/AgiMaze-v0``, ``maze_envs/AgiMazeSet-v0``): Gymnasium environments for the
  AGI Maze labyrinth benchmark.

Importing the package registers every environment with Gymnasium and PettingZoo (by entry-point
strings: nothing of the environments is imported until one is made). The versioned entry-point
modules are attributes of the package, imported on first use::

    >>> import maze_envs
    >>> maze_envs.maze_escape_v1.parallel_env(width=6, height=6).metadata["name"]
    'maze_escape_v1'
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType

from maze_envs._registration import register_environments

try:
    __version__ = version("maze-envs")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

register_environments()

#: Entry-point modules reachable as ``maze_envs.<name>`` without importing them first.
_LAZY_MODULES = ("maze_escape_v0", "maze_escape_v1")

__all__ = ["__version__", "maze_escape_v0", "maze_escape_v1", "register_environments"]


def __getattr__(name: str) -> ModuleType:
    # Only called for names not found normally: import the entry-point module on first use.
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_MODULES})
