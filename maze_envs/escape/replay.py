"""Replay and verify journaled Maze Escape games (``maze-envs verify JOURNAL``).

Each game is rebuilt from its stored config, seed and (for a game of an injected generator) the
stored generator description, reset, and stepped with the recorded
actions. Every turn's chained state hash, every agent's observation and the events are compared
with what the journal holds; the first turn that differs is reported (see
:func:`maze_envs.journal.verify_game` for the generic checks: missing turns, unreadable rows,
edited rows, truncated games).

The rebuilt environment records into a :class:`_Capture` instead of a journal, so a replay
compares exactly the payload the live environment wrote, with no second copy of that format.

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs import maze_escape_v0
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=5, journal=path)
    >>> _ = env.reset(seed=3)
    >>> while env.agents:
    ...     _ = env.step({a: env.action_space(a).sample() for a in env.agents})
    >>> env.close()
    >>> [report.describe() for report in verify_journal(path)]
    ['game 1: ok, 6 turns verified']
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from maze_envs.escape.env import ENV_ID, MazeEscapeEnv
from maze_envs.escape.generator import generator_from_description
from maze_envs.escape.types import Action, Config
from maze_envs.journal import (
    GameInfo,
    Journal,
    JournalError,
    ReplayStep,
    VerifyReport,
    verify_game,
)


class _Capture:
    """Stands in for a journal: keeps what the environment would have recorded last."""

    def __init__(self) -> None:
        self.observations: Mapping[str, Any] = {}
        self.events: Mapping[str, Any] = {}
        self.digest = b""
        self.outcome: Mapping[str, Any] | None = None

    def start_game(self, **_: Any) -> int:
        return 1

    def record_turn(
        self,
        game_id: int,
        turn: int,
        *,
        observations: Mapping[str, Any],
        actions: Mapping[str, Any],
        events: Mapping[str, Any],
        state_digest: bytes,
    ) -> str:
        self.observations, self.events, self.digest = observations, events, state_digest
        return ""

    def finish_game(self, game_id: int, outcome: Mapping[str, Any]) -> None:
        self.outcome = outcome

    def close(self) -> None:
        pass


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
        self._capture = _Capture()
        self._env: MazeEscapeEnv | None = None

    def _step_result(self) -> ReplayStep:
        assert self._env is not None
        capture = self._capture
        done = not self._env.agents
        return ReplayStep(
            observations=capture.observations,
            events=capture.events,
            state_digest=capture.digest,
            done=done,
            outcome=capture.outcome if done else None,
        )

    def reset(self, game: GameInfo) -> ReplayStep:
        if game.env_id != ENV_ID:
            raise ValueError(f"not a Maze Escape game: env_id {game.env_id!r}")
        if game.seed is None:
            raise ValueError("the game has no seed, so it cannot be rebuilt")
        config = Config.model_validate(game.config)
        generator = None if game.generator is None else generator_from_description(game.generator)
        self._env = MazeEscapeEnv(config, generator=generator, journal=self._capture)
        self._env.reset(seed=game.seed)
        return self._step_result()

    def step(self, actions: Mapping[str, Any]) -> ReplayStep:
        assert self._env is not None
        self._env.step({agent: stored_action(a) for agent, a in actions.items()})
        return self._step_result()


def verify_journal(
    path: str | os.PathLike[str], game_ids: list[int] | None = None
) -> list[VerifyReport]:
    """Replay and verify the games of a journal (all of them, or ``game_ids``)."""
    with Journal(path, create=False) as journal:
        ids = journal.game_ids() if game_ids is None else game_ids
        return [verify_game(journal, game_id, EscapeReplayer) for game_id in ids]


def _row(journal: Journal, report: VerifyReport) -> str:
    try:
        info = journal.game(report.game_id)
        seed, turns = str(info.seed), str(info.turn_count)
    except JournalError:
        seed = turns = "?"
    result = report.describe().removeprefix(f"game {report.game_id}: ")
    return f"{report.game_id:>5}  {seed:>12}  {turns:>5}  {result}"


def main(argv: list[str]) -> int:
    """``maze-envs verify JOURNAL [--game N ...]``: exit 0 when every game verifies."""
    parser = argparse.ArgumentParser(
        prog="maze-envs verify",
        description="Replay every game of a Maze Escape journal and check each turn's state hash, "
        "observations and events. Exit status: 0 all games verify, 1 a game failed or is "
        "truncated, 2 the file is not a usable journal.",
    )
    parser.add_argument("journal", help="path of the SQLite journal")
    parser.add_argument(
        "--game", type=int, action="append", metavar="N", help="verify only game N (repeatable)"
    )
    args = parser.parse_args(argv)
    try:
        journal = Journal(args.journal, create=False)
    except JournalError as exc:
        print(f"maze-envs verify: {exc}")
        return 2
    with journal:
        try:
            ids = journal.game_ids()
        except JournalError as exc:
            print(f"maze-envs verify: {exc}")
            return 2
        if args.game:
            unknown = sorted(set(args.game) - set(ids))
            if unknown:
                print(f"maze-envs verify: no game {unknown} in {args.journal}; games: {ids}")
                return 2
            ids = args.game
        print(f"{args.journal}: {len(ids)} game(s)")
        print(f"{'game':>5}  {'seed':>12}  {'turns':>5}  result")
        reports = []
        for game_id in ids:
            report = verify_game(journal, game_id, EscapeReplayer)
            reports.append(report)
            print(_row(journal, report))
    good = sum(r.ok for r in reports)
    print(f"{good} of {len(reports)} game(s) verified")
    return 0 if good == len(reports) else 1


__all__ = ["EscapeReplayer", "main", "stored_action", "verify_journal"]
