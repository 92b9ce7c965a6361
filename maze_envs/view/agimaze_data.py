"""The data of an AGI Maze viewer page (``AgiMaze-v0`` and ``AgiMazeSet-v0``), from a journal.

What was said and held comes from the journal rows as recorded (narration, set messages, the
formal observation, inventory, steps, errors); where the player stood comes from replaying the
recorded actions on the embedded engine (the journal does not store positions: the player never
sees them on a hidden labyrinth). The game is verified on the way; a failing game is drawn only up
to its first bad turn. The page draws the labyrinth with the cells the player has not visited yet
shown as unknown when the labyrinth is hidden (a spectator can reveal them). The steps are read by
:mod:`maze_envs.reading.agimaze`, which the analysis shares; each says whether the player's
state could still win (``dead``), and ``lost`` lists where a player entered a dead state (from
that step on the labyrinth was unwinnable: an unwinnable episode, not a slow one).
"""

from __future__ import annotations

from typing import Any

from maze_envs.agimaze.recording import PLAYER, SET_ENV_ID
from maze_envs.journal import GameInfo, Journal, JournalError, VerifyReport
from maze_envs.metrics import decision_metrics
from maze_envs.reading.agimaze import (
    decision_steps,
    lost_steps,
    rebuild_env,
    replay_steps,
)
from maze_envs.reading.turns import read_turns
from maze_envs.view.decisions import decision_tables, metric_lines
from maze_envs.view.generic_data import page_header
from maze_envs.view.verification import verify


def _summary(info: GameInfo, steps: list[dict[str, Any]], labyrinths: list[Any]) -> list[str]:
    outcome = info.outcome
    if outcome is None:
        result = "unfinished (no outcome recorded)"
    elif outcome.get("aborted"):
        result = "abandoned before its end"
    elif "solved" in outcome:
        result = "solved" if outcome["solved"] else "not solved"
    else:
        result = "finished"
    for key in ("steps", "rhae"):
        if outcome and key in outcome:
            result += f", {key} {outcome[key]}"
    for lost in lost_steps(steps, labyrinths):
        where = f" in {lost['name']}" if len(labyrinths) > 1 else ""
        result += f", lost{where} at step {lost['step']} (no win possible after it)"
    played = [lab["name"] for lab in labyrinths if lab is not None]
    return [
        info.env_id,
        f"game {info.id}",
        f"seed {info.seed}",
        f"{len(steps)} steps recorded",
        result,
        ", ".join(played) if len(played) <= 3 else f"{len(played)} labyrinths",
        f"budget factor {info.config.get('budget_factor', 5.0)}",
        f"library {info.library_version}",
        info.created,
    ]


def agimaze_game_data(
    journal: Journal, game_id: int, report: VerifyReport | None = None
) -> dict[str, Any]:
    """Everything an AGI Maze page shows, as JSON-ready data. ``report``: the game's
    verification when already made on this journal (else it is verified here)."""
    info = journal.game(game_id)
    if not info.env_id.startswith("maze_envs/AgiMaze"):
        raise JournalError(f"game {game_id} is a {info.env_id} game, not an AGI Maze game")
    turns, problem = read_turns(journal, game_id)
    if report is None:  # a report of the same journal may be given (the runner's)
        report = verify(journal, game_id, info)
    if not report.ok and report.problem is not None and report.problem.turn < len(turns):
        turns = turns[: report.problem.turn]  # draw only the turns that verified
        problem = f"turn {report.problem.turn} ({report.problem.kind})"
    try:
        steps, labyrinths = replay_steps(info, turns)
    except (ValueError, RuntimeError) as exc:  # the recorded actions do not fit the game
        raise JournalError(f"game {game_id} cannot be replayed: {exc}") from None
    decisions, blobs = decision_tables(journal, turns, [PLAYER])
    metrics = {PLAYER: decision_metrics(decision_steps(steps, turns, info), escape=False)}
    return {
        **page_header("agimaze", game_id, info),
        "summary": _summary(info, steps, labyrinths),
        "verification": report.describe(),
        "verified": report.ok,
        "problem": problem,
        "metrics": metrics,
        "metrics_text": metric_lines(metrics),
        "is_set": info.env_id == SET_ENV_ID,
        "labyrinths": labyrinths,
        "n": len(steps),
        "steps": steps,
        "lost": lost_steps(steps, labyrinths),
        "decisions": None if decisions is None else decisions[PLAYER],
        "blobs": blobs,
    }


__all__ = ["SET_ENV_ID", "agimaze_game_data", "rebuild_env", "replay_steps"]
