"""Generic per-agent rows of a game of any other environment (recorded by ``wrappers.recording``).

Foreign games (CartPole, FrozenLake, a PettingZoo env) have no behavioural metrics here, but their
journal rows say what happened: per agent and game,

``steps``           turns in which the agent acted (an action is recorded for it);
``total_reward``    the sum of its recorded rewards (numbers only; None when it has none);
``terminated``, ``truncated``  whether any of its recorded steps ended it that way;
``distinct_observations``  how many different observations it was given (the reset included),
                    compared as their stored JSON;
``turns``           the game's last stored turn; ``outcome`` finished / aborted / unfinished.

The rows are read as recorded, never replayed (the library has no replayer for these games).

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs.journal import Journal, Recorder
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> rec = Recorder(path, env_id="Toy-v0", config={})
    >>> _ = rec.start(1, {"agent": 0}, b"0", {"agent": {"info": {}}})
    >>> for k, obs in enumerate([1, 0, 1], start=1):
    ...     done = k == 3
    ...     _ = rec.turn(k, {"agent": obs}, {"agent": k % 2},
    ...                  {"agent": {"reward": 0.5, "terminated": done, "truncated": False}}, b"x")
    >>> rec.finish({"return": 1.5, "steps": 3, "terminated": True})
    >>> rec.close()
    >>> with Journal.open_readonly(path) as journal:
    ...     turns = list(journal.turns(1))
    ...     (row,) = generic_metrics(journal.game(1), turns)
    >>> row.steps, row.total_reward, row.terminated, row.distinct_observations, row.outcome
    (3, 1.5, True, 2, 'finished')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from maze_envs.journal import GameInfo, TurnRecord


@dataclass(frozen=True)
class GenericMetrics:
    """One agent's row in one game of another environment (see the module docstring)."""

    game: int
    env_id: str
    seed: int | None
    agent: str
    turns: int
    steps: int
    total_reward: float | None
    terminated: bool
    truncated: bool
    distinct_observations: int
    outcome: str
    note: str = ""

    def row(self) -> dict[str, Any]:
        """The metrics as one table row (column name -> value)."""
        return asdict(self)


def _outcome(info: GameInfo) -> str:
    if info.outcome is None:
        return "unfinished"
    return "aborted" if info.aborted else "finished"


def generic_metrics(
    info: GameInfo, turns: list[TurnRecord], note: str = ""
) -> list[GenericMetrics]:
    """One row per agent of a foreign game, from its readable turns (agents in first-seen order)."""
    agents: dict[str, None] = {}
    for record in turns:
        for part in (record.observations, record.actions, record.events):
            for agent in part:
                agents.setdefault(str(agent), None)
    rows = []
    for agent in agents:
        steps = 0
        total: float | None = None
        ended = {"terminated": False, "truncated": False}
        seen: set[bytes] = set()
        for record in turns:
            if agent in record.observations:
                seen.add(orjson.dumps(record.observations[agent], option=orjson.OPT_SORT_KEYS))
            if record.turn > 0 and agent in record.actions:
                steps += 1
            events = record.events.get(agent)
            if record.turn == 0 or not isinstance(events, Mapping):
                continue
            reward = events.get("reward")
            if isinstance(reward, bool) or not isinstance(reward, int | float):
                reward = None
            if reward is not None and math.isfinite(reward):
                total = (total or 0.0) + float(reward)
            for flag in ended:
                ended[flag] = ended[flag] or bool(events.get(flag))
        rows.append(
            GenericMetrics(
                game=info.id,
                env_id=info.env_id,
                seed=info.seed,
                agent=agent,
                turns=turns[-1].turn if turns else 0,
                steps=steps,
                total_reward=total,
                terminated=ended["terminated"],
                truncated=ended["truncated"],
                distinct_observations=len(seen),
                outcome=_outcome(info),
                note=note,
            )
        )
    return rows
