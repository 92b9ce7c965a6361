"""Old names of two Maze Escape baselines, kept importable for code written before the registry.

``RandomWalker`` is :class:`~maze_envs.policies.escape.RandomWalk` and ``DepthFirstExplorer`` is
:class:`~maze_envs.policies.escape.TremauxExplorer`; new code uses those names or
``maze_envs.policies.make_policy("random" | "explorer")``. ``reset(agent, seed)`` without an
episode still works (the default rules are assumed).
"""

from __future__ import annotations

from maze_envs.policies.escape import RandomWalk as RandomWalker
from maze_envs.policies.escape import TremauxExplorer as DepthFirstExplorer

__all__ = ["DepthFirstExplorer", "RandomWalker"]
