"""Policies: the interface every agent controller implements, and built-in movers."""

from __future__ import annotations

from maze_envs.policies.interface import Policy
from maze_envs.policies.movers import DepthFirstExplorer, RandomWalker

__all__ = ["DepthFirstExplorer", "Policy", "RandomWalker"]
