"""RHAE, step fraction, x1-solved and the pack summary."""

from __future__ import annotations

import json

import pytest

from maze_envs.agimaze.scoring import (
    EpisodeResult,
    PackSummary,
    rhae,
    step_fraction,
    summarize,
    x1_solved,
)


def test_rhae_formula_values() -> None:
    # (0.7 * 100 / 140) ** 2 = 0.25
    assert rhae(140, 100, True) == pytest.approx(0.25)
    assert rhae(100, 100, True) == pytest.approx(0.49)
    assert rhae(200, 100, True, factor=0.6) == pytest.approx(0.09)
    assert rhae(160, 100, True, factor=0.8) == pytest.approx(0.25)


def test_rhae_is_capped_at_one() -> None:
    assert rhae(70, 100, True) == 1.0
    assert rhae(1, 100, True) == 1.0
    assert rhae(71, 100, True) < 1.0


def test_rhae_is_zero_when_unsolved() -> None:
    assert rhae(1, 100, False) == 0.0
    assert rhae(500, 100, False) == 0.0


def test_rhae_decreases_with_steps_and_grows_with_factor() -> None:
    scores = [rhae(s, 50, True) for s in range(35, 300, 7)]
    assert scores == sorted(scores, reverse=True)
    assert rhae(120, 100, True, 0.6) < rhae(120, 100, True, 0.7) < rhae(120, 100, True, 0.8)


@pytest.mark.parametrize(
    ("args", "error", "fragment"),
    [
        ((-1, 10, True), ValueError, "steps must be >= 0"),
        ((5, 0, True), ValueError, "max_steps must be >= 1"),
        ((0, 10, True), ValueError, "at least one step"),
        ((5.0, 10, True), TypeError, "steps must be an int"),
        ((5, "10", True), TypeError, "max_steps must be an int"),
        ((True, 10, True), TypeError, "steps must be an int"),
    ],
)
def test_rhae_validates_arguments(args: tuple, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        rhae(*args)


@pytest.mark.parametrize("factor", [0, -0.7, float("nan"), float("inf")])
def test_rhae_rejects_bad_factors(factor: float) -> None:
    with pytest.raises(ValueError, match="factor must be"):
        rhae(10, 10, True, factor=factor)


def test_step_fraction_and_x1_solved() -> None:
    assert step_fraction(50, 100) == 0.5
    assert step_fraction(500, 100) == 5.0
    assert x1_solved(100, 100, True)
    assert not x1_solved(101, 100, True)
    assert not x1_solved(10, 100, False)


def test_summarize_aggregates_a_pack() -> None:
    runs = [
        EpisodeResult("a", 35, 50, True),  # rhae 1, x1
        EpisodeResult("b", 70, 50, True),  # rhae 0.25, not x1
        EpisodeResult("c", 250, 50, False),  # rhae 0, fraction 5
    ]
    summary = summarize(runs)
    assert isinstance(summary, PackSummary)
    assert (summary.count, summary.solved, summary.x1_solved) == (3, 2, 1)
    assert summary.mean_rhae == pytest.approx((1 + 0.25 + 0) / 3)
    assert summary.mean_step_fraction == pytest.approx((0.7 + 1.4 + 5.0) / 3)
    assert summary.sensitivity["0.6"] == pytest.approx(
        (rhae(35, 50, True, 0.6) + 30**2 / 70**2) / 3
    )
    assert summary.sensitivity["0.8"] == pytest.approx((1 + 40**2 / 70**2) / 3)
    assert PackSummary.model_validate_json(json.dumps(summary.model_dump())) == summary


def test_summarize_validates() -> None:
    with pytest.raises(ValueError, match="at least one"):
        summarize([])
    with pytest.raises(ValueError, match="at least one step"):
        EpisodeResult("x", 0, 10, True)
    with pytest.raises(ValueError, match="factor"):
        summarize([EpisodeResult("x", 5, 10, True)], factor=0)
