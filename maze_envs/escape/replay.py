"""Replay journaled Maze Escape games (v0 and v1) for ``maze-envs verify``.

Each game is rebuilt from its env id (the version), stored config, seed and (for a game of an
injected generator) the stored generator description, reset, and stepped with the recorded
actions. The generic checks (missing turns, unreadable or edited rows, outcomes that claim
missing turns, the comparison of every state hash, observation and event) are
:func:`maze_envs.journal.verify_game`'s; :mod:`maze_envs.verify` picks this replayer by env id.

The rebuilt environment records into a :class:`~maze_envs.journal.capture.CaptureJournal`
instead of a journal, so a replay compares exactly the payload the live environment wrote, with
no second copy of that format.

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs import maze_escape_v0
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=5, journal=path)
    >>> _ = env.reset(seed=3)
    >>> while env.agents:
    ...     _ = env.step({a: env.action_space(a).sample() for a in env.agents})
    >>> env.close()
    >>> from maze_envs.verify import verify_journal  # one floor up; it picks this replayer
    >>> [report.describe() for report in verify_journal(path)]
    ['game 1: ok, 6 turns verified']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from maze_envs._registration import entries
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import generator_from_description
from maze_envs.escape.types import Action, Config
from maze_envs.journal import GameInfo, ReplayStep
from maze_envs.journal.capture import CaptureJournal


def stored_action(action: Any) -> Any:
    """An action as the environment accepts it again.

    Typed :class:`Action` models are journaled as their JSON dump (``move`` is a name such as
    ``"N"``); action-space dicts (``move`` is an integer) are journaled as they are.
    """
    if isinstance(action, dict) and isinstance(action.get("move"), str):
        return Action.model_validate(action)
    return action


class EscapeReplayer:
    """Rebuilds one journaled Maze Escape game and steps it (a ``journal.Replayer``)."""

    def __init__(self) -> None:
        self._capture = CaptureJournal()
        self._env: MazeEscapeEnv | None = None

    def reset(self, game: GameInfo) -> ReplayStep:
        versions = {env.id: env for env in entries("escape")}
        version = versions.get(game.env_id)
        if version is None:
            raise ValueError(
                f"not a Maze Escape game: env_id {game.env_id!r} (known: {', '.join(versions)})"
            )
        if game.seed is None:
            raise ValueError("the game has no seed, so it cannot be rebuilt")
        config = Config.model_validate(game.config)
        generator = None if game.generator is None else generator_from_description(game.generator)
        self._env = version.make(config=config, generator=generator, journal=self._capture)
        self._env.reset(seed=game.seed)
        return self._capture.step(done=False)

    def step(self, actions: Mapping[str, Any]) -> ReplayStep:
        assert self._env is not None
        self._env.step({agent: stored_action(a) for agent, a in actions.items()})
        return self._capture.step(done=not self._env.agents)


__all__ = ["EscapeReplayer", "stored_action"]
