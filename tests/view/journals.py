"""AGI Maze games journaled by the environments themselves, for the viewer and analysis tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.set_env import AgiMazeSetEnv
from maze_envs.journal import Journal


def record_agimaze(
    path: Path,
    config: dict[str, Any],
    actions: Sequence[str],
    *,
    seed: int = 0,
    labyrinth_set: bool = False,
) -> int:
    """Play ``actions`` (names) in ``AgiMaze-v0`` (or the set) built with ``config`` and
    ``journal=path``; returns the game id. The episode ends at its end or when the actions run
    out (then the journal holds it as abandoned)."""
    env: AgiMazeEnv | AgiMazeSetEnv = (
        AgiMazeSetEnv(**config, journal=path)
        if labyrinth_set
        else AgiMazeEnv(**config, journal=path)
    )
    env.reset(seed=seed)
    for name in actions:
        _, _, terminated, truncated, _ = env.step_name(name)
        if terminated or truncated:
            break
    env.close()
    with Journal.open_readonly(path) as journal:
        return journal.game_ids()[-1]
