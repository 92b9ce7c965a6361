"""Inspect scorers of the maze tasks: each game's outcome, with honest intervals over games.

The scores come from the game's row (left by :func:`~llm_policies.apps.inspect.solver.play_game`),
whose columns are the runner's metric functions (:mod:`maze_envs.bench.metrics`):

* Maze Escape (:func:`escape_score`): ``team_success`` (1 when every agent visited the exit) and
  ``finish_ratio`` (the team's finish turn / the fastest possible finish; successes only);
* AGI Maze (:func:`agimaze_score`): ``solved`` (within the budget) and ``rhae70``;
* labyrinth sets (:func:`agimaze_set_score`): ``solved`` and ``rhae70`` of the set's target,
  ``labyrinths_solved`` and ``mean_rhae70`` over the set
  (:func:`~llm_policies.apps.inspect.scores.set_scores`).

A value that does not exist for a game (the finish ratio of a failure) is NaN, which Inspect
leaves out of that key's metrics. Rates get their Wilson interval, means a seeded bootstrap
interval (:mod:`maze_envs.bench.stats`), beside Inspect's ``mean`` and ``stderr``.

Games that are not the model's play are left out and counted (``Score.unscored``, the reason in
the explanation and ``metadata``): a game with an outage (a call that still failed after
Inspect's retries). A game cut short by an Inspect sample limit is scored as it stood: a limit
is part of the evaluation's conditions.

Each game left out is also named on the console, as it is scored: a warning with the sample,
why (how many decisions got no reply, from which model, the first error) and, when the cause is
known, what to do (:func:`excluded_warning`). So an eval whose every game is left out, whose
metrics are therefore all ``nan``, never says so silently.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from llm_policies.apps.inspect.solver import RESULT_KEY, summary
from maze_envs.bench.stats import bootstrap_mean, wilson_interval

NAN: Final = float("nan")
logger = logging.getLogger(__name__)
#: The first error is cut to this many characters in the console's warning.
_ERROR_CHARS: Final = 240
#: Hints by a fragment of an outage's first error: the known causes and what to do.
_HINTS: Final = (
    (
        "tiktoken",
        "Inspect's mockllm/model counts tokens with tiktoken, which downloads its tables on first "
        "use; offline, try the stand-in model instead: --model stand-in/wall-follower",
    ),
)


def excluded_warning(sample: Any, row: Mapping[str, Any]) -> str:
    """What the console says of a game left out of the metrics (an outage or an error).

    >>> print(excluded_warning("9x9/seed=0", {"status": "outage", "outages": 3, "decisions": 3,
    ...     "outage": {"model": "inspect:m/x", "error": "m/x: ConnectionError: tiktoken"}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    maze_envs: sample 9x9/seed=0 left out of the metrics: 3 of 3 decisions got no reply from
    inspect:m/x after Inspect's retries (first error: m/x: ConnectionError: tiktoken). Inspect's
    mockllm/model counts tokens with tiktoken, which downloads its tables on first use; offline,
    try the stand-in model instead: --model stand-in/wall-follower
    """
    if row.get("status") == "error":
        return (
            f"maze_envs: sample {sample} left out of the metrics: the game ended with an error: "
            f"{row.get('error')}"
        )
    outage = row.get("outage") or {}
    error = str(outage.get("error") or "")
    hints = [hint for fragment, hint in _HINTS if fragment in error]
    if len(error) > _ERROR_CHARS:  # a network error's text runs to many lines
        error = error[: _ERROR_CHARS - 1] + "…"
    text = (
        f"maze_envs: sample {sample} left out of the metrics: {row.get('outages')} of "
        f"{row.get('decisions')} decisions got no reply from {outage.get('model') or 'the model'}"
        f" after Inspect's retries (first error: {error or 'not recorded'})"
    )
    return ". ".join([text, *hints])


def _values(scores: list[SampleScore]) -> list[float]:
    return [float(s.score.as_float()) for s in scores]


@metric
def wilson_low() -> Metric:
    """Lower end of the 95% Wilson interval of a rate (scores 0 or 1)."""

    def compute(scores: list[SampleScore]) -> float:
        values = _values(scores)
        low, _ = wilson_interval(round(sum(values)), len(values))
        return NAN if low is None else low

    return compute


@metric
def wilson_high() -> Metric:
    """Upper end of the 95% Wilson interval of a rate (scores 0 or 1)."""

    def compute(scores: list[SampleScore]) -> float:
        values = _values(scores)
        _, high = wilson_interval(round(sum(values)), len(values))
        return NAN if high is None else high

    return compute


@metric
def bootstrap_low() -> Metric:
    """Lower end of the 95% percentile bootstrap interval of the mean (seeded: reproducible)."""

    def compute(scores: list[SampleScore]) -> float:
        low = bootstrap_mean(_values(scores)).low
        return NAN if low is None else low

    return compute


@metric
def bootstrap_high() -> Metric:
    """Upper end of the 95% percentile bootstrap interval of the mean (seeded: reproducible)."""

    def compute(scores: list[SampleScore]) -> float:
        high = bootstrap_mean(_values(scores)).high
        return NAN if high is None else high

    return compute


def _rate() -> list[Metric]:
    return [mean(), stderr(), wilson_low(), wilson_high()]


def _mean() -> list[Metric]:
    return [mean(), stderr(), bootstrap_low(), bootstrap_high()]


def _flag(value: Any) -> float:
    return 1.0 if value else 0.0


def _number(value: Any) -> float:
    return NAN if value is None else float(value)


def _plain(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row for the score's metadata (NaN-free JSON values)."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def _score(
    state: TaskState,
    values: Callable[[Mapping[str, Any]], dict[str, float]],
    interrupted: dict[str, float],
) -> Score:
    row = state.store.get(RESULT_KEY)
    if not isinstance(row, Mapping):
        return Score(
            value=interrupted,
            answer="interrupted",
            explanation=(
                "the game was interrupted before it ended (an Inspect limit or a cancellation); "
                "scored as not (yet) solved; the journal stores it as aborted"
            ),
        )
    metadata = _plain(row)
    outages = int(row.get("outages") or 0)
    if row.get("status") == "error" or (outages and not row.get("inspect_limit")):
        logger.warning(excluded_warning(state.sample_id, row))
    if row.get("status") == "error":
        return Score.unscored(
            reason="error",
            answer=summary(row),
            explanation=f"the game ended with an error: {row.get('error')}",
            metadata=metadata,
        )
    if outages and not row.get("inspect_limit"):
        return Score.unscored(
            reason="outage",
            answer=summary(row),
            explanation=(
                f"{outages} decision(s) got no model reply after Inspect's retries, so the game "
                "is not the model's play; left out of the metrics (counted here)"
            ),
            metadata=metadata,
        )
    where = f"journal {row.get('journal')}, game {row.get('game_id')}"
    notes = [where]
    if row.get("inspect_limit"):
        notes.append(str(row["inspect_limit"]))
    if row.get("fallbacks"):
        notes.append(f"{row['fallbacks']} fallback decision(s) (no usable reply)")
    return Score(
        value=values(row),
        answer=summary(row),
        explanation="; ".join(notes),
        metadata=metadata,
    )


def escape_values(row: Mapping[str, Any]) -> dict[str, float]:
    """``team_success`` and ``finish_ratio`` (NaN unless the team succeeded) of a game row."""
    return {
        "team_success": _flag(row.get("success")),
        "finish_ratio": _number(row.get("finish_ratio")),
    }


def agimaze_values(row: Mapping[str, Any]) -> dict[str, float]:
    """``solved`` and ``rhae70`` of a single-labyrinth row."""
    return {"solved": _flag(row.get("solved")), "rhae70": float(row.get("rhae70") or 0.0)}


def set_values(row: Mapping[str, Any]) -> dict[str, float]:
    """The target's ``solved`` and ``rhae70``, ``labyrinths_solved`` and ``mean_rhae70``."""
    return {
        "solved": _flag(row.get("solved")),
        "rhae70": float(row.get("rhae70") or 0.0),
        "labyrinths_solved": float(row.get("labyrinths_solved") or 0.0),
        "mean_rhae70": float(row.get("mean_rhae70") or 0.0),
    }


@scorer(metrics={"team_success": _rate(), "finish_ratio": _mean()})
def escape_score() -> Scorer:
    """Maze Escape: team success and finish / fastest possible finish."""

    async def score(state: TaskState, target: Target) -> Score:
        return _score(state, escape_values, {"team_success": 0.0, "finish_ratio": NAN})

    return score


@scorer(metrics={"solved": _rate(), "rhae70": _mean()})
def agimaze_score() -> Scorer:
    """AGI Maze, one labyrinth: solved within the budget, and RHAE70."""

    async def score(state: TaskState, target: Target) -> Score:
        return _score(state, agimaze_values, {"solved": 0.0, "rhae70": 0.0})

    return score


@scorer(
    metrics={
        "solved": _rate(),
        "rhae70": _mean(),
        "labyrinths_solved": _mean(),
        "mean_rhae70": _mean(),
    }
)
def agimaze_set_score() -> Scorer:
    """AGI Maze labyrinth set: the target solved and its RHAE70, and the set's shares."""

    async def score(state: TaskState, target: Target) -> Score:
        interrupted = {"solved": 0.0, "rhae70": 0.0, "labyrinths_solved": NAN, "mean_rhae70": NAN}
        return _score(state, set_values, interrupted)

    return score
