"""Policies: the interface every agent controller implements, the classical baselines of both
environments, the episode builders and the registry of policies by name.

* :mod:`~maze_envs.policies.interface` -- ``Policy`` / ``AsyncPolicy``, ``Decision``, ``Usage``,
  the episode information ``EscapeEpisode`` / ``AgiMazeEpisode``.
* :mod:`~maze_envs.policies.episodes` -- :func:`escape_episode` and :func:`agimaze_episode`
  build that information from an environment after ``reset``.
* :mod:`~maze_envs.policies.escape` and :mod:`~maze_envs.policies.agimaze` -- the baselines.
* :mod:`~maze_envs.policies.registry` -- :func:`make_policy`, :func:`make_team`,
  :func:`available_policies`, plug-ins through the entry-point group ``maze_envs.policies``.
"""

from __future__ import annotations

from maze_envs.policies.agimaze import AgiMazeExplorer, AgiMazeOracle, AgiMazeRandom
from maze_envs.policies.episodes import (
    PLAYER,
    agimaze_episode,
    escape_episode,
    escape_ground_truth,
)
from maze_envs.policies.escape import (
    CooperativeExplorer,
    EscapeOracle,
    RandomWalk,
    TremauxExplorer,
    WallFollower,
)
from maze_envs.policies.interface import (
    AgiMazeEpisode,
    AsyncPolicy,
    AsyncPolicyBase,
    Decision,
    EscapeEpisode,
    EscapeGroundTruth,
    Policy,
    PolicyBase,
    Usage,
    as_async,
    as_decision,
    is_async,
    is_privileged,
)
from maze_envs.policies.registry import (
    ENV_KINDS,
    EnvKind,
    PolicySpec,
    PolicySpecError,
    TeamSpec,
    available_policies,
    make_policy,
    make_team,
)

__all__ = [
    "ENV_KINDS",
    "PLAYER",
    "AgiMazeEpisode",
    "AgiMazeExplorer",
    "AgiMazeOracle",
    "AgiMazeRandom",
    "AsyncPolicy",
    "AsyncPolicyBase",
    "CooperativeExplorer",
    "Decision",
    "EnvKind",
    "EscapeEpisode",
    "EscapeGroundTruth",
    "EscapeOracle",
    "Policy",
    "PolicyBase",
    "PolicySpec",
    "PolicySpecError",
    "RandomWalk",
    "TeamSpec",
    "TremauxExplorer",
    "Usage",
    "WallFollower",
    "agimaze_episode",
    "as_async",
    "as_decision",
    "available_policies",
    "escape_episode",
    "escape_ground_truth",
    "is_async",
    "is_privileged",
    "make_policy",
    "make_team",
]
