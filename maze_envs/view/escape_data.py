"""The data of a Maze Escape viewer page, read from a journal.

Per turn and agent: the true cell, the path distance to the exit and the reward (from
:mod:`maze_envs.reading.tracks`); the observation in its readable JSON form (edge kinds,
landmark names, distances, coordinates, trail...) and the optional features' panel rows
(``panels``, each feature's own wording of its value); the notebook, stored as changes so a
600-turn game stays small; the action as received and in readable form; the events; and the
per-decision records the runner attached (prompts, raw replies), whose large repeated texts stay
journal blobs, stored once; and per agent and for the team the per-decision metrics (decisions,
fallbacks, outages, wall-move rate, STAYs), computed by :mod:`maze_envs.metrics` like the
benchmark results and the analysis.
The journal is verified by replay on the way and the verdict is shown on the page; a game that
fails is drawn only up to its first bad turn.

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs import maze_escape_v0
    >>> from maze_envs.journal import Journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = maze_escape_v0.parallel_env(width=6, height=5, max_turns=3, journal=path)
    >>> _ = env.reset(seed=1)
    >>> while env.agents:
    ...     _ = env.step({a: env.action_space(a).sample() for a in env.agents})
    >>> env.close()
    >>> with Journal(path) as journal:
    ...     data = escape_game_data(journal, 1)
    >>> data["n"], data["verification"], sorted(data["cells"])
    (4, 'game 1: ok, 4 turns verified', ['A', 'B', 'C'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from maze_envs.escape.convert import (
    action_to_model,
    observation_from_stored,
    observation_to_json,
)
from maze_envs.escape.features import FEATURES
from maze_envs.escape.types import Action, Config
from maze_envs.escape.viewer import AGENT_COLOURS, CORAL
from maze_envs.journal import Journal, TurnRecord, VerifyReport
from maze_envs.metrics import Step, decision_metrics, escape_step
from maze_envs.reading.tracks import EscapeTrack, escape_track
from maze_envs.view.decisions import decision_tables, metric_lines
from maze_envs.view.generic_data import page_header
from maze_envs.view.page import text_deltas
from maze_envs.view.verification import verify


def readable_observation(stored: Any, config: Config, agent: str) -> dict[str, Any] | None:
    """An observation as journaled, in the typed model's JSON form (None if it does not fit)."""
    try:
        return observation_to_json(observation_from_stored(stored, config, agent), config, agent)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def feature_panels(readable: Mapping[str, Any], config: Config) -> list[list[str]]:
    """The optional features' rows ``[label, text]`` of an observation's panel (each feature's
    ``panel``, :mod:`maze_envs.escape.features`), from its JSON form."""
    return [
        [label, text] for feature in FEATURES for label, text in feature.panel(readable, config)
    ]


def readable_action(stored: Any, config: Config) -> dict[str, Any] | None:
    """An action as journaled, as the typed :class:`Action`'s JSON (``raw`` kept if unusual)."""
    if stored is None:
        return None
    try:
        if isinstance(stored, Mapping) and isinstance(stored.get("move"), str):
            model = Action.model_validate(stored)
        else:
            model = action_to_model(stored, config)
    except (ValueError, TypeError, KeyError):
        return {"move": None, "notebook": None, "radio": None, "raw": stored}
    return model.model_dump(mode="json")


def _observations(track: EscapeTrack) -> tuple[dict[str, list[Any]], dict[str, list[str]]]:
    """Readable observations without the notebook texts, and each agent's notebook per turn."""
    config = track.config
    observations: dict[str, list[Any]] = {a: [] for a in track.agents}
    notebooks: dict[str, list[str]] = {a: [] for a in track.agents}
    for record in track.turns:
        readable = {
            a: readable_observation(record.observations.get(a), config, a) for a in track.agents
        }
        own = {a: (o or {}).get("notebook", "") for a, o in readable.items()}
        for agent, obs in readable.items():
            notebooks[agent].append(own[agent] if isinstance(own[agent], str) else "")
            if obs is None:
                observations[agent].append(None)
                continue
            shown = obs.pop("teammate_notebooks", {}) or {}
            obs.pop("notebook", None)
            # a teammate's notebook as shown is its own notebook of the same turn: name it only
            obs["teammate_notebooks"] = [n for n, text in shown.items() if own.get(n) == text]
            odd = {n: text for n, text in shown.items() if own.get(n) != text}
            if odd:
                obs["teammate_notebooks_text"] = odd
            observations[agent].append(obs)
    return observations, notebooks


def _radio_log(track: EscapeTrack) -> list[list[Any]]:
    """Every message an agent tried to send: [turn, sender, text, result, reason]."""
    log: list[list[Any]] = []
    for record in track.turns[1:]:
        for agent in track.agents:
            action = record.actions.get(agent)
            text = action.get("radio") if isinstance(action, Mapping) else None
            if not isinstance(text, str) or not text:
                continue
            events = record.events.get(agent) or {}
            log.append([record.turn, agent, text, events.get("radio"), events.get("radio_reason")])
    return log


def _summary(track: EscapeTrack, n: int) -> list[str]:
    info, config = track.info, track.config
    outcome = info.outcome
    if outcome is None:
        result = "unfinished (no outcome recorded)"
    elif outcome.get("aborted"):
        result = f"abandoned at turn {outcome.get('turns')}"
    elif outcome.get("success"):
        result = f"team escaped at turn {outcome.get('turns')}"
    else:
        result = f"not escaped in {outcome.get('turns')} turns"
    fastest = (outcome or {}).get("fastest_possible_finish")
    if fastest is not None:
        result += f" (fastest possible finish: turn {fastest})"
    frame = config.coordinates or "no coordinates"
    return [
        info.env_id,
        f"game {info.id}",
        f"seed {info.seed}",
        f"{config.width}x{config.height}",
        f"{len(track.agents)} agents",
        f"{n} turns recorded",
        result,
        f"{config.notebook_mode} notebook, {frame}, "
        f"{'distance sensor' if config.distance_sensor else 'no distance sensor'}",
        f"library {info.library_version}",
        info.created,
    ]


def decision_counts(track: EscapeTrack) -> dict[str, dict[str, Any]]:
    """Per agent and for the team, the per-decision metrics of the turns read
    (:func:`maze_envs.metrics.decision_metrics`: the benchmark's and the analysis's numbers)."""
    steps: dict[str, list[Step]] = {
        agent: [
            escape_step(
                track.results[agent][t],
                track.turns[t].decisions.get(agent),
                track.turns[t].events.get(agent),
            )
            for t in range(1, track.length)
        ]
        for agent in track.agents
    }
    out = {agent: decision_metrics(agent_steps) for agent, agent_steps in steps.items()}
    out["team"] = decision_metrics([step for agent_steps in steps.values() for step in agent_steps])
    return out


def _per_agent(track: EscapeTrack, values: list[Mapping[str, Any]]) -> dict[str, list[Any]]:
    return {a: [v.get(a) for v in values] for a in track.agents}


def escape_game_data(
    journal: Journal, game_id: int, report: VerifyReport | None = None
) -> dict[str, Any]:
    """Everything a Maze Escape page shows, as JSON-ready data. ``report``: the game's
    verification when already made on this journal (else it is verified here)."""
    track = escape_track(journal, game_id)
    if report is None:  # a report of the same journal may be given (the runner's)
        report = verify(journal, game_id, track.info)
    turns: list[TurnRecord] = track.turns
    problem = track.problem
    if not report.ok and report.problem is not None and report.problem.turn < len(turns):
        turns = turns[: report.problem.turn]  # draw only the turns that verified
        problem = f"turn {report.problem.turn} ({report.problem.kind})"
    n = len(turns)
    if n < track.length:
        track = EscapeTrack(
            info=track.info,
            config=track.config,
            layout=track.layout,
            board=track.board,
            agents=track.agents,
            turns=turns,
            cells={a: v[:n] for a, v in track.cells.items()},
            moves={a: v[:n] for a, v in track.moves.items()},
            results={a: v[:n] for a, v in track.results.items()},
            problem=problem,
        )
    config, layout = track.config, track.layout
    observations, notebooks = _observations(track)
    decisions, blobs = decision_tables(journal, turns, track.agents)
    first_exit = {
        a: next((t for t, cell in enumerate(track.cells[a]) if cell == track.board.exit_cell), None)
        for a in track.agents
    }
    metrics = decision_counts(track)
    return {
        **page_header("escape", game_id, track.info),
        "summary": _summary(track, n),
        "verification": report.describe(),
        "verified": report.ok,
        "problem": problem,
        "metrics": metrics,
        "metrics_text": metric_lines(metrics),
        "width": layout.width,
        "height": layout.height,
        "maze": layout.maze.ravel().tolist(),
        "exit": list(layout.exit_cell),
        "doorway": layout.doorway,
        "landmarks": [[*cell, name] for cell, name in layout.landmarks],
        "agents": list(track.agents),
        "colours": [
            f"rgb{AGENT_COLOURS[i % len(AGENT_COLOURS)]}" for i in range(config.num_agents)
        ],
        "coral": f"rgb{CORAL}",
        "frame": config.coordinates,
        "n": n,
        "cells": track.cells,
        "path": {a: [track.board.exit_path[c] for c in cells] for a, cells in track.cells.items()},
        "reward": {a: track.rewards(a) for a in track.agents},
        "first_exit": first_exit,
        "obs": observations,
        "panels": {
            a: [None if o is None else feature_panels(o, config) for o in obs]
            for a, obs in observations.items()
        },
        "notebook": {a: text_deltas(texts) for a, texts in notebooks.items()},
        "action": {
            a: [None] + [readable_action(t.actions.get(a), config) for t in turns[1:]]
            for a in track.agents
        },
        "events": _per_agent(track, [{}] + [t.events for t in turns[1:]]),
        "decisions": decisions,
        "blobs": blobs,
        "radio": _radio_log(track),
    }
