"""Replay journaled AGI Maze games (``AgiMaze-v0``, ``AgiMazeSet-v0``) for ``maze-envs verify``.

Each game is rebuilt from its stored config (pack path or labyrinth JSON, budget factor,
``max_steps``, pack root; the ``reward_shaping`` key of older journals is ignored: rewards are
not part of what is verified) and seed, reset, and stepped with the recorded actions; the
rebuilt environment records into a :class:`~maze_envs.journal.capture.CaptureJournal`, so
every turn's state hash, observation and events are compared with exactly what the live
environment wrote
(:func:`maze_envs.journal.verify_game` does the comparing; :mod:`maze_envs.verify` picks these
replayers by env id). The format is described in :mod:`maze_envs.agimaze.recording`.

Example:
    >>> import tempfile, pathlib
    >>> import gymnasium as gym
    >>> import maze_envs
    >>> from maze_envs.verify import verify_journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0005.json",
    ...                journal=path)
    >>> _ = env.reset(seed=0)
    >>> for name in ("up", "left", "down"):
    ...     _ = env.unwrapped.step_name(name)
    >>> env.close()
    >>> [report.describe() for report in verify_journal(path)]
    ['game 1: ok, 4 turns verified (abandoned before its end)']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.recording import (
    ENV_ID,
    PLAYER,
    SET_ENV_ID,
    config_pack_version,
    labyrinth_from_json,
)
from maze_envs.agimaze.set_env import AgiMazeSetEnv
from maze_envs.journal import GameInfo, ReplayStep
from maze_envs.journal.capture import CaptureJournal


def _seed(game: GameInfo) -> int:
    if game.seed is None:
        raise ValueError("the game has no seed, so it cannot be rebuilt")
    return game.seed


def _player_action(actions: Mapping[str, Any]) -> Any:
    if set(actions) != {PLAYER}:
        raise ValueError(f"expected the action of {PLAYER!r}, got {sorted(actions)}")
    return actions[PLAYER]


def env_from_config(config: Mapping[str, Any], journal: Any = None) -> AgiMazeEnv:
    """The ``AgiMaze-v0`` environment a journal game's ``config`` describes."""
    labyrinth = config.get("labyrinth")
    return AgiMazeEnv(
        path=config.get("path"),
        labyrinth=None if labyrinth is None else labyrinth_from_json(labyrinth),
        budget_factor=config["budget_factor"],
        max_steps=config.get("max_steps"),
        pack_root=config.get("pack_root"),
        pack_version=config_pack_version(config),
        journal=journal,
    )


def set_env_from_config(config: Mapping[str, Any], journal: Any = None) -> AgiMazeSetEnv:
    """The ``AgiMazeSet-v0`` environment a journal game's ``config`` describes."""
    labyrinths = config.get("labyrinths")
    return AgiMazeSetEnv(
        paths=config.get("paths"),
        target=config["target"],
        labyrinths=None if labyrinths is None else [labyrinth_from_json(x) for x in labyrinths],
        budget_factor=config["budget_factor"],
        pack_root=config.get("pack_root"),
        pack_version=config_pack_version(config),
        journal=journal,
    )


#: Env id -> the builder of that environment from a journal game's config.
BUILDERS: Final[dict[str, Callable[..., AgiMazeEnv | AgiMazeSetEnv]]] = {
    ENV_ID: env_from_config,
    SET_ENV_ID: set_env_from_config,
}


class AgiMazeReplayer:
    """Rebuilds one journaled AGI Maze episode (``AgiMaze-v0`` or ``AgiMazeSet-v0``, by the
    game's env id) and steps it (a ``journal.Replayer``)."""

    def __init__(self) -> None:
        self._capture = CaptureJournal()
        self._env: AgiMazeEnv | AgiMazeSetEnv | None = None

    def reset(self, game: GameInfo) -> ReplayStep:
        build = BUILDERS.get(game.env_id)
        if build is None:
            raise ValueError(
                f"not an AGI Maze game: env_id {game.env_id!r} (known: {', '.join(BUILDERS)})"
            )
        seed = _seed(game)
        self._env = build(game.config, journal=self._capture)
        self._env.reset(seed=seed)
        return self._capture.step(done=False)

    def step(self, actions: Mapping[str, Any]) -> ReplayStep:
        assert self._env is not None
        _, _, terminated, truncated, _ = self._env.step(_player_action(actions))
        return self._capture.step(done=terminated or truncated)


__all__ = ["BUILDERS", "AgiMazeReplayer", "env_from_config", "set_env_from_config"]
