"""The rewards and metrics of the verifiers environments, each from the project's own scoring.

A game's row is the benchmark runner's (:func:`maze_envs.bench.rollout.aplay`): its scores are
computed by the same functions as every ``maze-envs bench`` row (:mod:`maze_envs.metrics`,
:mod:`maze_envs.bench.metrics`, :mod:`maze_envs.agimaze.scoring`). The rubric reads them; it
computes nothing of its own but the one transform :func:`finish_speed` (a higher-is-better
form of the finish ratio).

Each reward is one named, weighted part of a trace's reward (verifiers sums weight x score and
logs every part in the trace; ``[env.taskset.task.rewards] <name> = {weight = w}`` changes a
weight). Maze Escape rewards are the team's: every agent's trace gets them.

=================  ======  ===================================================================
reward             weight  definition
=================  ======  ===================================================================
``team_success``   1.0     1 when every agent visited the exit within the turn limit
``finish_speed``   1.0     :func:`finish_speed`: fastest possible finish / the team's finish
                           turn, in (0, 1]; 0 without team success
``solved``         1.0     AGI Maze: left with the treasure within the evaluation budget
``success``        0.5     solved within ``max_steps`` (the benchmark's success)
``good``           0.5     solved within ``soft_good_steps`` (the benchmark's "good"; a
                           success that is not good is "late")
``rhae70``         1.0     RHAE with reference factor 0.7 (:func:`maze_envs.agimaze.scoring.rhae`)
=================  ======  ===================================================================

A labyrinth set is scored by its target, its last labyrinth, as the EnvTraverse evaluation does
(:func:`maze_envs.bench.metrics.agimaze_set_scores`). The metrics (logged, not summed) are the
row's numeric columns of :data:`ESCAPE_METRICS` / :data:`AGIMAZE_METRICS` that the game has.

A game with an outage (a model call that failed after its retries) is not the model's play: it
is not scored (:class:`NotScored`), so its rollout stands as failed in verifiers (``--resume``
plays it again) instead of counting as a loss.

Example:
    >>> row = {"status": "ok", "game_id": 1, "success": True, "finish_ratio": 2.0, "turns": 20,
    ...        "fastest": 10}
    >>> rewards("escape", row)
    {'team_success': (1.0, 1.0), 'finish_speed': (0.5, 1.0)}
    >>> metrics("escape", row)
    {'turns': 20.0, 'fastest': 10.0, 'finish_ratio': 2.0}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

Kind = Literal["escape", "agimaze"]
Row = Mapping[str, Any]


class NotScored(ValueError):
    """The game cannot be scored as the model's play (an outage, or no game at all)."""


def finish_speed(finish_ratio: float | None) -> float:
    """Finish speed = 1 / finish ratio (:func:`maze_envs.metrics.finish_ratio`: the team's
    finish turn / the fastest possible finish), in (0, 1]; 0 for a game the team did not
    finish (no ratio).

    >>> finish_speed(4.0), finish_speed(None)
    (0.25, 0.0)
    """
    if finish_ratio is None or not math.isfinite(finish_ratio) or finish_ratio <= 0:
        return 0.0
    return 1.0 / finish_ratio


def _flag(column: str) -> Callable[[Row], float]:
    return lambda row: 1.0 if row.get(column) else 0.0


@dataclass(frozen=True)
class Reward:
    """One part of the rubric: its name, weight, and how it reads a game's row."""

    name: str
    weight: float
    score: Callable[[Row], float]


ESCAPE_REWARDS: Final = (
    Reward("team_success", 1.0, _flag("success")),
    Reward("finish_speed", 1.0, lambda row: finish_speed(row.get("finish_ratio"))),
)
AGIMAZE_REWARDS: Final = (
    Reward("solved", 1.0, _flag("solved")),
    Reward("success", 0.5, _flag("success")),
    Reward("good", 0.5, _flag("good")),
    Reward("rhae70", 1.0, lambda row: float(row.get("rhae70") or 0.0)),
)
RUBRICS: Final[dict[Kind, tuple[Reward, ...]]] = {
    "escape": ESCAPE_REWARDS,
    "agimaze": AGIMAZE_REWARDS,
}
#: The row columns logged as metrics, when the game has them (numbers; flags as 0/1).
ESCAPE_METRICS: Final = (
    "turns",
    "fastest",
    "finish_turn",
    "finish_ratio",
    "finish_ratio_censored",
    "first_out",
    "agents_out",
    "wall_moves",
    "wall_move_rate",
    "stays",
    "radio_messages",
    "notebook_bytes",
)
AGIMAZE_METRICS: Final = (
    "steps",
    "max_steps",
    "soft_good_steps",
    "budget",
    "step_fraction",
    "x1_solved",
    "late",
    "rhae60",
    "rhae80",
    "wall_moves",
    "wall_move_rate",
    "set_steps",
    "set_solved",
    "set_labyrinths",
)
#: Columns of every game: the decisions and what they cost.
PLAY_METRICS: Final = (
    "decisions",
    "fallbacks",
    "outages",
    "input_tokens",
    "output_tokens",
    "requests",
)
_METRICS: Final[dict[Kind, tuple[str, ...]]] = {
    "escape": ESCAPE_METRICS + PLAY_METRICS,
    "agimaze": AGIMAZE_METRICS + PLAY_METRICS,
}


def check_scored(row: Row) -> None:
    """Raise :class:`NotScored` when ``row`` is not a game to score as the model's play."""
    status = row.get("status")
    if status == "outage":
        raise NotScored(
            f"game {row.get('game_id')}: a model call failed after its retries (an outage: "
            f"{row.get('stop_reason') or row.get('outage')}); it is not the model's play"
        )
    if row.get("game_id") is None:
        raise NotScored(f"the game never started: {row.get('error') or row.get('stop_reason')}")


def rewards(kind: Kind, row: Row) -> dict[str, tuple[float, float]]:
    """Every reward of the ``kind`` rubric for ``row``: name -> (score, weight)."""
    check_scored(row)
    return {part.name: (part.score(row), part.weight) for part in RUBRICS[kind]}


def metrics(kind: Kind, row: Row) -> dict[str, float]:
    """The numeric columns of ``row`` logged as metrics (those the game has)."""
    out: dict[str, float] = {}
    for column in _METRICS[kind]:
        value = row.get(column)
        if isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
            out[column] = float(value)
    return out
