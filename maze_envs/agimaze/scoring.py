"""Scores for AGI Maze runs: RHAE, step fraction, x1-solved, and their pack-level summary.

RHAE (Relative Human Action Efficiency) with reference factor ``f`` rewards a solved labyrinth by
how close its step count comes to ``f × max_steps``, the reference number of steps::

    rhae = min(1, (f × max_steps / steps) ** 2)   if solved
    rhae = 0                                      otherwise

``f = 0.7`` gives RHAE70, the headline score; 0.6 and 0.8 are the usual sensitivity variants.
Solving within ``f × max_steps`` steps scores the full 1.0, and each doubling of the steps beyond
that quarters the score.

The *step fraction* is ``steps / max_steps`` whether or not the labyrinth was solved (lower is
better; an unsolved run that used its whole evaluation budget of 5 × max_steps scores 5.0).
*x1-solved* counts labyrinths solved within ``max_steps`` itself.

Example:
    >>> from maze_envs.agimaze.scoring import EpisodeResult, rhae, summarize
    >>> rhae(steps=14, max_steps=20, solved=True)
    1.0
    >>> round(rhae(steps=28, max_steps=20, solved=True), 4)
    0.25
    >>> rhae(steps=100, max_steps=20, solved=False)
    0.0
    >>> summary = summarize([EpisodeResult("a", 10, 20, True), EpisodeResult("b", 100, 20, False)])
    >>> summary.count, summary.solved, summary.x1_solved, summary.mean_rhae
    (2, 1, 1, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel, ConfigDict

#: The reference factor of the headline score, RHAE70.
DEFAULT_FACTOR: Final = 0.7
#: Reference factors reported as sensitivity variants beside RHAE70.
SENSITIVITY_FACTORS: Final = (0.6, 0.8)


def _check_budget(steps: int, max_steps: int) -> None:
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise TypeError(f"steps must be an int, got {type(steps).__name__} {steps!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int):
        raise TypeError(f"max_steps must be an int, got {type(max_steps).__name__} {max_steps!r}")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if max_steps < 1:
        raise ValueError(
            f"max_steps must be >= 1 (the labyrinth's reference budget), got {max_steps}"
        )


def _check_factor(factor: float) -> None:
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise TypeError(f"factor must be a number, got {type(factor).__name__} {factor!r}")
    if not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"factor must be a finite number > 0 (e.g. 0.6, 0.7, 0.8), got {factor}")


def rhae(steps: int, max_steps: int, solved: bool, factor: float = DEFAULT_FACTOR) -> float:
    """RHAE score in [0, 1] of one labyrinth run (see the module docstring).

    Raises:
        TypeError: when ``steps`` or ``max_steps`` is not an int, or ``factor`` not a number.
        ValueError: for negative ``steps``, ``max_steps`` < 1, a non-positive ``factor``, or a
            solved run with 0 steps (winning always takes at least one step).
    """
    _check_budget(steps, max_steps)
    _check_factor(factor)
    if not solved:
        return 0.0
    if steps == 0:
        raise ValueError("a solved run has at least one step; got solved=True with steps=0")
    return min(1.0, (factor * max_steps / steps) ** 2)


def step_fraction(steps: int, max_steps: int) -> float:
    """Steps used as a fraction of the reference budget ``max_steps`` (lower is better)."""
    _check_budget(steps, max_steps)
    return steps / max_steps


#: Evaluation budget as a multiple of the reference ``max_steps`` (EnvTraverse uses 5): the
#: default of both AGI Maze envs and of the runner's AGI Maze setups.
DEFAULT_BUDGET_FACTOR: Final = 5.0


def step_budget(budget_factor: float, max_steps: int) -> int:
    """The evaluation budget: ``floor(budget_factor × max_steps)`` steps, at least one; an env
    truncates its episode there.

    >>> step_budget(5, 12), step_budget(0.5, 1)
    (60, 1)
    """
    return max(1, math.floor(budget_factor * max_steps))


def x1_solved(steps: int, max_steps: int, solved: bool) -> bool:
    """True when the labyrinth was solved within ``max_steps`` steps (the x1 budget)."""
    _check_budget(steps, max_steps)
    return bool(solved) and steps <= max_steps


@dataclass(frozen=True, slots=True)
class EpisodeResult:
    """Outcome of one labyrinth run, the input of :func:`summarize`."""

    name: str
    steps: int
    max_steps: int
    solved: bool

    def __post_init__(self) -> None:
        _check_budget(self.steps, self.max_steps)
        if self.solved and self.steps == 0:
            raise ValueError(f"{self.name}: a solved run has at least one step")


class PackSummary(BaseModel):
    """Aggregate scores over the runs of a pack (JSON-serializable)."""

    model_config = ConfigDict(frozen=True)

    count: int
    solved: int
    x1_solved: int
    factor: float
    mean_rhae: float
    mean_step_fraction: float
    #: Mean RHAE for each sensitivity factor, keyed by the factor written as in "0.6".
    sensitivity: dict[str, float]


def summarize(
    results: Iterable[EpisodeResult],
    factor: float = DEFAULT_FACTOR,
    sensitivity_factors: Sequence[float] = SENSITIVITY_FACTORS,
) -> PackSummary:
    """Aggregate a pack's runs: counts, mean RHAE (headline and sensitivity) and step fraction.

    Raises:
        ValueError: for an empty ``results`` (a mean over nothing is undefined) or a bad factor.
    """
    runs = list(results)
    if not runs:
        raise ValueError("summarize needs at least one EpisodeResult")
    _check_factor(factor)
    for extra in sensitivity_factors:
        _check_factor(extra)

    def mean_rhae(f: float) -> float:
        return sum(rhae(r.steps, r.max_steps, r.solved, f) for r in runs) / len(runs)

    return PackSummary(
        count=len(runs),
        solved=sum(1 for r in runs if r.solved),
        x1_solved=sum(1 for r in runs if x1_solved(r.steps, r.max_steps, r.solved)),
        factor=factor,
        mean_rhae=mean_rhae(factor),
        mean_step_fraction=sum(step_fraction(r.steps, r.max_steps) for r in runs) / len(runs),
        sensitivity={f"{f:g}": mean_rhae(f) for f in sensitivity_factors},
    )
