"""Uncertainty of aggregates: Wilson intervals for rates, seeded bootstrap intervals for means.

A single game is never an effect: every rate the results report comes with its Wilson score
interval and every mean with a percentile bootstrap interval. The bootstrap draws from a
``numpy.random.Generator`` seeded from the caller's seed and the values themselves, so the same
results always print the same intervals (no global random state).

A sample that cannot show spread has no interval: a mean over one value, or over values that
are all equal, has ``low`` and ``high`` None (a bootstrap of such a sample would print a
zero-width interval, ``73.71 [73.71, 73.71]``, as if the mean were known exactly); tables then
print the mean with its ``n`` instead (:meth:`Estimate.describe`).

Example:
    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 3), round(high, 3)
    (0.49, 0.943)
    >>> wilson_interval(0, 0)
    (None, None)
    >>> est = bootstrap_mean([1.0, 2.0, 3.0, 4.0], seed=0)
    >>> est.mean, est.low <= est.mean <= est.high, est.n
    (2.5, True, 4)
    >>> bootstrap_mean([], seed=0).mean is None
    True
    >>> one = bootstrap_mean([73.71])
    >>> one.low, one.high, one.describe()
    (None, None, '73.71 (n=1, no interval)')
    >>> bootstrap_ratio([2.0, 4.0, 3.0], [1.0, 2.0, 2.0]).mean
    1.8
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

#: Two-sided 95 % normal quantile.
Z95: Final = 1.959963984540054
#: Bootstrap resamples per interval.
BOOTSTRAP_RESAMPLES: Final = 2000


def wilson_interval(
    successes: int, trials: int, z: float = Z95
) -> tuple[float, float] | tuple[None, None]:
    """The Wilson score interval of a rate ``successes / trials`` (None, None for no trials)."""
    if trials < 0 or not 0 <= successes <= max(trials, 0):
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return None, None
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its 95 % bootstrap interval (all None when there are no values)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def has_interval(self) -> bool:
        """Whether the estimate has an interval (two or more values that are not all equal)."""
        return self.low is not None and self.high is not None

    def to_json(self) -> dict[str, float | int | None]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n}

    def describe(self, digits: int = 2) -> str:
        """``mean [low, high]``, or ``mean (n=1, no interval)`` when the sample shows no spread."""
        return describe_estimate(self.to_json(), digits)


def describe_estimate(estimate: Mapping[str, Any] | None, digits: int = 2) -> str:
    """An estimate (:meth:`Estimate.to_json`) as text: ``mean [low, high]``; without an
    interval, the mean with its ``n`` (``n=1``, or ``n=5, all equal``); ``–`` without a mean."""
    if not estimate or estimate.get("mean") is None:
        return "–"
    mean, low, high = estimate["mean"], estimate.get("low"), estimate.get("high")
    if low is None or high is None:
        n = estimate.get("n")
        why = "n=1" if n == 1 else f"n={n}, all equal" if n else "no spread"
        return f"{mean:.{digits}f} ({why}, no interval)"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _stream(values: np.ndarray, seed: int) -> np.random.Generator:
    # The stream depends on the data too, so two groups of the same size get different draws,
    # and on nothing else, so a rerun prints the same interval.
    digest = hashlib.sha256(values.tobytes()).digest()[:8]
    return np.random.default_rng((seed, int.from_bytes(digest, "little")))


def bootstrap_mean(
    values: Sequence[float], seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES
) -> Estimate:
    """The mean of ``values`` and its 95 % percentile bootstrap interval (no interval for one
    value or values that are all equal)."""
    data = np.asarray([float(v) for v in values], dtype=np.float64)
    n = int(data.size)
    if n == 0:
        return Estimate(None, None, None, 0)
    mean = float(data.mean())
    if n == 1 or np.all(data == data[0]):
        return Estimate(mean, None, None, n)  # no spread to resample: no interval
    rng = _stream(data, seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)  # bounded memory for large groups
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[picks].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return Estimate(mean, float(low), float(high), n)


def bootstrap_ratio(
    numerators: Sequence[float],
    denominators: Sequence[float],
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Estimate:
    """The ratio of means ``mean(numerators) / mean(denominators)`` of paired values (pair ``i``
    is ``numerators[i]`` and ``denominators[i]``), with its 95 % percentile bootstrap interval
    over pairs (resampled together). No interval for one pair or when every pair has the same
    ratio (no spread); mean None without pairs or with a zero denominator mean."""
    if len(numerators) != len(denominators):
        raise ValueError(
            f"paired values need as many numerators as denominators, got "
            f"{len(numerators)} and {len(denominators)}"
        )
    top = np.asarray([float(v) for v in numerators], dtype=np.float64)
    bottom = np.asarray([float(v) for v in denominators], dtype=np.float64)
    n = int(top.size)
    if n == 0 or bottom.sum() == 0:
        return Estimate(None, None, None, n)
    ratio = float(top.sum() / bottom.sum())
    if n == 1 or (np.all(top == top[0]) and np.all(bottom == bottom[0])):
        return Estimate(ratio, None, None, n)
    rng = _stream(np.concatenate([top, bottom]), seed)
    ratios = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, n, size=(stop - start, n))
        sums = bottom[picks].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios[start:stop] = top[picks].sum(axis=1) / sums
    finite = ratios[np.isfinite(ratios)]
    if finite.size == 0:
        return Estimate(ratio, None, None, n)
    low, high = np.quantile(finite, [0.025, 0.975])
    if low == high:  # every pair has the same ratio: no spread to show
        return Estimate(ratio, None, None, n)
    return Estimate(ratio, float(low), float(high), n)
