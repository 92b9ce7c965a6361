"""The behavioural metrics of one Maze Escape game, per agent and for the team.

Each metric is computed from the journal alone (what each agent saw, sent and was told, and the
status of each decision), with the agents' true cells rebuilt by
:func:`maze_envs.reading.tracks.escape_track`. A row holds who played the game and how it
ended, then every metric of :data:`maze_envs.metrics.METRICS` that ``maze-envs analyze`` shows
for Maze Escape, in the table's order: the per-decision metrics of :mod:`maze_envs.metrics`
(the same numbers as the benchmark row's) and the behaviour metrics of
:mod:`.escape_behaviour`, one function each (its docstring is the definition). Only the
policy's own decisions (status ``ok``) count in behaviour metrics, never a fallback or an
outage.

``setup``, ``policy``, ``agent_policy``, ``run_key``, ``status``
    The benchmark arm of the game (:mod:`.labels`; None for games the runner did not play), the
    agent's own policy spec, and how the game ended (:func:`maze_envs.metrics.game_status`, or
    ``unfinished`` / ``aborted``).
``size``, ``agent``, ``turns``
    The maze's size, the agent (``team`` for the team row), and the turns read.

The team row sums the counts (a metric whose ``team`` is ``sum``), computes the per-decision
metrics over every agent's decisions (``recount``: the same functions, so it equals the
benchmark row's), takes the union of the cells for coverage, and the earliest first exit visit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Final

from maze_envs.bench.analysis.escape_behaviour import AgentGame
from maze_envs.bench.analysis.labels import GameLabels, game_labels
from maze_envs.bench.metrics import status_from_outcome
from maze_envs.metrics import (
    Metric,
    Step,
    decision_metrics,
    decision_status,
    escape_step,
    metrics_for,
    radio_sent,
)
from maze_envs.reading.tracks import EscapeTrack

TEAM: Final = "team"
#: The observation keys the metrics read (the analysis reads only these from the journal).
OBSERVATION_KEYS: Final = ("distances", "notebook", "teammate_notebooks")
#: The event keys the metrics and the track read (the analysis reads only these).
EVENT_KEYS: Final = ("move", "radio", "first_exit_visit", "team_success")
#: The metrics of a Maze Escape row, in the table's order.
ESCAPE_METRICS: Final[tuple[Metric, ...]] = metrics_for("analyze", "escape")


@dataclass(frozen=True)
class AgentMetrics:
    """One agent's (or the team's) behaviour in one game (see the module docstring): who and
    how it ended, then ``values``, every metric by column name (read as attributes too:
    ``row.wall_move_rate``)."""

    game: int
    env_id: str
    seed: int | None
    setup: str | None
    policy: str | None
    agent_policy: str | None
    run_key: str | None
    status: str
    size: str
    agent: str
    turns: int
    values: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def __getattr__(self, name: str) -> Any:
        # only for the metrics' names; dunder and field lookups (e.g. while unpickling) fail
        if name.startswith("__") or name == "values":
            raise AttributeError(name)
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(
                f"AgentMetrics has no field or metric {name!r}; the metrics are "
                f"{', '.join(self.values)}"
            ) from None

    def row(self) -> dict[str, Any]:
        """The metrics as one table row (column name -> value)."""
        out = {
            name: getattr(self, name)
            for name in (
                "game",
                "env_id",
                "seed",
                "setup",
                "policy",
                "agent_policy",
                "run_key",
                "status",
                "size",
                "agent",
                "turns",
            )
        }
        out.update(self.values)
        out["note"] = self.note
        return out


def _success_turn(track: EscapeTrack) -> int | None:
    for record in track.turns[1:]:
        for events in record.events.values():
            if (events or {}).get("team_success"):
                return record.turn
    return None


def escape_steps(track: EscapeTrack, agent: str) -> list[Step]:
    """One agent's decisions of a journaled game as the metrics count them (turns 1 to the
    last): the kind from the recorded move result, the status from the decision record
    (:func:`maze_envs.metrics.escape_step`; a game's few distinct decisions are built once)."""
    turns, results = track.turns, track.results[agent]
    made: dict[tuple[Any, Any, bool], Step] = {}
    out = []
    for t in range(1, len(turns)):
        record, event = turns[t].decisions.get(agent), turns[t].events.get(agent)
        # what escape_step reads of the record and the event (decoded JSON: plain dicts; None
        # when absent, which is no status and no message)
        if type(record) is dict:
            status = record.get("status")
        else:
            status = None if record is None else decision_status(record)
        if type(event) is dict:
            sent = event.get("radio") == "sent"
        else:
            sent = False if event is None else radio_sent(event)
        key = (results[t], status if isinstance(status, str) else None, sent)
        step = made.get(key)
        if step is None:
            step = made[key] = escape_step(
                key[0], {"status": key[1]}, {"radio": "sent" if sent else None}
            )
        out.append(step)
    return out


def _game_status(track: EscapeTrack, steps: list[Step]) -> str:
    """How the game ended (:func:`~maze_envs.bench.metrics.status_from_outcome`)."""
    return status_from_outcome(track.info.outcome, sum(s.status == "outage" for s in steps))


def agent_metrics(
    track: EscapeTrack,
    agent: str,
    success_turn: int | None,
    labels: GameLabels | None = None,
    status: str | None = None,
    steps: list[Step] | None = None,
) -> AgentMetrics:
    """The metrics of one agent of a game: each row of :data:`ESCAPE_METRICS` by its function
    (the per-decision ones by :func:`maze_envs.metrics.decision_metrics`); ``steps`` are its
    decisions (:func:`escape_steps`), when already read."""
    if steps is None:
        steps = escape_steps(track, agent)
    labels = labels or game_labels(track.info.meta)
    game = AgentGame(track, agent, steps, success_turn)
    counts = decision_metrics(Counter(steps))
    values = {
        metric.column("analyze"): (
            counts[metric.name] if metric.name in counts else metric.compute(game)
        )
        for metric in ESCAPE_METRICS
    }
    return AgentMetrics(
        game=track.info.id,
        env_id=track.info.env_id,
        seed=track.info.seed,
        setup=labels.setup,
        policy=labels.policy,
        agent_policy=labels.agent_policy(agent),
        run_key=labels.run_key,
        status=status if status is not None else _game_status(track, steps),
        size=f"{track.board.width}x{track.board.height}",
        agent=agent,
        turns=max(len(track.turns) - 1, 0),
        values=values,
        note=track.problem or "",
    )


def _team_value(
    metric: Metric,
    track: EscapeTrack,
    agents: list[AgentMetrics],
    counts: dict[str, Any],
    success_turn: int | None,
) -> Any:
    """The team row's value of one metric (:attr:`~maze_envs.metrics.Metric.team`)."""
    column = metric.column("analyze")
    values = [a.values[column] for a in agents]
    if metric.team == "recount":
        return counts[metric.name]
    if metric.team == "sum":
        return sum(values)
    if metric.name in ("cells_visited", "coverage"):
        union = {cell for a in track.agents for cell in track.cells[a]}
        board = track.board
        return (
            len(union)
            if metric.name == "cells_visited"
            else len(union) / (board.width * board.height)
        )
    if metric.name == "reversals_after_rise":
        return None if None in values else sum(x or 0 for x in values)
    firsts = [
        a.values["first_exit_turn"] for a in agents if a.values["first_exit_turn"] is not None
    ]
    if metric.name == "first_exit_turn":
        return min(firsts) if firsts else None
    if metric.name == "turns_to_team_success":
        return success_turn - min(firsts) if success_turn is not None and firsts else None
    if metric.name == "team_success":
        return values[0]
    raise ValueError(f"no team rule for metric {metric.name!r} (team={metric.team!r})")


def team_metrics(
    track: EscapeTrack,
    agents: list[AgentMetrics],
    steps: list[Step] | None = None,
    success_turn: int | EllipsisType | None = ...,
) -> AgentMetrics:
    """The team row of a game from its agents' rows (and all its agents' decisions, and the
    turn of team success when already read)."""
    if isinstance(success_turn, EllipsisType):
        success_turn = _success_turn(track)
    first = agents[0]
    if steps is None:
        steps = [step for agent in track.agents for step in escape_steps(track, agent)]
    counts = decision_metrics(Counter(steps))
    return AgentMetrics(
        game=first.game,
        env_id=first.env_id,
        seed=first.seed,
        setup=first.setup,
        policy=first.policy,
        agent_policy=first.policy,
        run_key=first.run_key,
        status=first.status,
        size=first.size,
        agent=TEAM,
        turns=first.turns,
        values={
            metric.column("analyze"): _team_value(metric, track, agents, counts, success_turn)
            for metric in ESCAPE_METRICS
        },
        note=first.note,
    )


def game_metrics(track: EscapeTrack) -> list[AgentMetrics]:
    """One row per agent, then the team row."""
    success_turn = _success_turn(track)
    labels = game_labels(track.info.meta)
    by_agent = {agent: escape_steps(track, agent) for agent in track.agents}
    steps = [step for agent in track.agents for step in by_agent[agent]]
    status = _game_status(track, steps)
    rows = [
        agent_metrics(track, agent, success_turn, labels, status, by_agent[agent])
        for agent in track.agents
    ]
    return [*rows, team_metrics(track, rows, steps, success_turn)] if rows else []
