"""Registration of every environment with Gymnasium and PettingZoo (idempotent)."""

from __future__ import annotations

import gymnasium
import pettingzoo

#: Gymnasium ids -> entry points.
GYMNASIUM_ENVS: dict[str, str] = {
    "maze_envs/AgiMaze-v0": "maze_envs.agimaze.env:AgiMazeEnv",
    "maze_envs/AgiMazeSet-v0": "maze_envs.agimaze.set_env:AgiMazeSetEnv",
}

#: PettingZoo ids -> (AEC entry point, parallel entry point).
PETTINGZOO_ENVS: dict[str, tuple[str, str]] = {
    "maze_envs/MazeEscape-v0": (
        "maze_envs.maze_escape_v0:env",
        "maze_envs.maze_escape_v0:parallel_env",
    ),
    "maze_envs/MazeEscape-v1": (
        "maze_envs.maze_escape_v1:env",
        "maze_envs.maze_escape_v1:parallel_env",
    ),
}


def register_environments() -> None:
    """Register all environments; calling it again is harmless."""
    for env_id, entry_point in GYMNASIUM_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)
    for env_id, (aec_entry, parallel_entry) in PETTINGZOO_ENVS.items():
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=aec_entry)
        if env_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env_id, entry_point=parallel_entry)
