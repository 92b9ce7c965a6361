"""Policies that give the metrics something to count (``tests.bench.metric_policies:Name``):
wall bumps, moves, STAYs, radio messages, and decisions that are not the policy's play
(fallbacks and outages, with and without a record), in a seeded mix."""

from __future__ import annotations

from typing import Any

import numpy as np

from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.escape.types import Action, Observation
from maze_envs.policies.interface import Decision, PolicyBase

#: What the outage decisions say (the runner's outage message names them).
MODEL, ERROR = "fake:unreachable", "connection refused"


class Mixed(PolicyBase[Any, Observation, Action]):
    """Maze Escape: each turn one of bump (into a side that is not open), move (through an open
    side), STAY, radio, fallback STAY (every other one without a record: the runner adds the
    status), or, with ``outages=true``, an outage STAY; the seed decides which."""

    def __init__(self, outages: bool = False, records: bool = False) -> None:
        self.kinds = ["bump", "move", "move", "stay", "radio", "fallback"]
        self.kinds += ["outage"] if outages else []
        #: every decision with a record shaped like a model's (read by the decision replay)
        self.records = records
        self.rng = np.random.default_rng(0)

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> Decision[Action]:
        kind = self.kinds[int(self.rng.integers(len(self.kinds)))]
        status: Any = "ok"
        radio: str | None
        record: dict[str, Any] | None = {"messages": {"new": []}} if self.records else None
        move, radio = "STAY", None
        if kind in ("bump", "move"):
            sides = [d for d, k in observation.edges.items() if (k == "open") == (kind == "move")]
            move = sides[0] if sides else "STAY"
        elif kind == "radio":
            radio = f"{self.agent} at turn {observation.turn}"
        elif kind == "fallback":
            status = "fallback"
            if observation.turn % 2 == 0:  # else no status in the record: the runner adds it
                record = {**(record or {}), "status": "fallback", "error": "no JSON"}
        elif kind == "outage":
            status = "outage"
            record = {**(record or {}), "status": "outage", "model": MODEL, "error": ERROR}
        action = Action(move=move, radio=radio)
        if record is not None:
            record = {**record, "action": action.model_dump(mode="json")}
        return Decision(action, record=record, status=status)


class MixedAgiMaze(PolicyBase[Any, AgiMazeObservation, str]):
    """AGI Maze: random moves (bumps among them), some of them fallbacks (and, with
    ``outages=true``, outages) that still use a step, as the LLM player's fallback does."""

    def __init__(self, outages: bool = False) -> None:
        self.outages = outages
        self.rng = np.random.default_rng(0)
        self.actions: tuple[str, ...] = ()

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        self.rng = np.random.default_rng(seed)
        self.actions = tuple(a for a in episode.action_names if a != "start")

    def act(self, observation: AgiMazeObservation) -> str | Decision[str]:
        action = self.actions[int(self.rng.integers(len(self.actions)))]
        roll = int(self.rng.integers(6))
        if roll == 0:
            return Decision(action, record={"status": "fallback"}, status="fallback")
        if roll == 1 and self.outages:
            return Decision(action, record={"model": MODEL, "error": ERROR}, status="outage")
        return action


class SeedInRecord(PolicyBase[Any, Any, Any]):
    """Plays like ``random`` on either environment and writes its policy seed in each record."""

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        self.rng = np.random.default_rng(seed)
        self.names = tuple(getattr(episode, "action_names", ()) or ("N", "E", "S", "W", "STAY"))

    def act(self, observation: Any) -> Decision[Any]:
        name = self.names[int(self.rng.integers(len(self.names)))]
        action = Action(move=name) if isinstance(observation, Observation) else name
        return Decision(action, record={"seed": self.seed})


class Unreachable(PolicyBase[Any, Any, Any]):
    """Every decision is an outage (a model that cannot be reached) until ``marker`` exists
    (the server is back): then it plays like ``Mixed`` without outages, or the first AGI Maze
    action."""

    def __init__(self, marker: str = "") -> None:
        self.marker = marker

    def act(self, observation: Any) -> Decision[Any]:
        from pathlib import Path

        escape = isinstance(observation, Observation)
        action: Any = Action(move="STAY") if escape else self.episode.action_names[0]
        if self.marker and Path(self.marker).exists():
            return Decision(action)
        record = {"status": "outage", "model": MODEL, "error": ERROR}
        return Decision(action, record=record, status="outage")
