"""The real benchmark's random-agent table (SPEC section 5), read from a data file.

``agimaze-bench`` ``docs/results.md`` publishes, per TRAINING stage, a uniform random agent's
success, good (won within ``soft_good_steps``) and late (won after it, within
``hard_max_steps``) rates in %. The TRAINING packs take their board sizes and budgets from it and
are calibrated on its rates (:mod:`~maze_envs.agimaze.packs.catalog`).

Example:
    >>> row = REAL_CALIBRATION[0]
    >>> row.family, row.stage, (row.rows, row.cols), row.success, row.good + row.late
    ('S0-keys', 'STAGE-01', (3, 3), 24.3, 24.3)
"""

from __future__ import annotations

from importlib import resources
from typing import Final

from pydantic import BaseModel, ConfigDict


class CalibrationRow(BaseModel):
    """One row of the real benchmark's random-baseline table (SPEC section 5); rates in %."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    stage: str
    rows: int
    cols: int
    soft_good_steps: int
    hard_max_steps: int
    success: float
    good: float
    late: float


def _row(spec: str) -> CalibrationRow:
    family, stage, size, soft, hard, success, good, late = spec.split()
    rows, cols = (int(x) for x in size.split("x"))
    return CalibrationRow(
        family=family,
        stage=stage,
        rows=rows,
        cols=cols,
        soft_good_steps=int(soft),
        hard_max_steps=int(hard),
        success=float(success),
        good=float(good),
        late=float(late),
    )


#: The table itself, a package data file (one row per line, ``#`` comments).
_TABLE: Final = resources.files("maze_envs.agimaze").joinpath("data", "real_calibration.txt")

#: The real random-baseline calibration table: family stage size soft hard success good late.
REAL_CALIBRATION: Final[tuple[CalibrationRow, ...]] = tuple(
    _row(line)
    for line in _TABLE.read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


__all__ = ["REAL_CALIBRATION", "CalibrationRow"]
