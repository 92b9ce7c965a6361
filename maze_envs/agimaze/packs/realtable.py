"""The real benchmark's random-agent table (SPEC section 5), as data.

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


#: The real random-baseline calibration table: family stage size soft hard success good late.
REAL_CALIBRATION: Final[tuple[CalibrationRow, ...]] = tuple(
    _row(line)
    for line in """
S0-keys STAGE-01 3x3 35 70 24.3 4.5 19.8
S0-keys STAGE-02 3x3 35 70 16.7 2.2 14.5
S0-keys STAGE-03 4x4 80 160 9.2 1.3 7.9
S0-keys STAGE-04 3x3 35 70 14.2 1.1 13.1
S0-keys STAGE-05 4x4 80 160 4.6 0.3 4.3
S0-keys STAGE-06 4x5 100 200 1.9 0.2 1.7
S1-rivers STAGE-01 3x3 35 70 22.3 4.3 18.0
S1-rivers STAGE-02 3x4 50 100 15.0 2.7 12.3
S1-rivers STAGE-03 4x4 80 160 6.8 1.4 5.4
S1-rivers STAGE-04 4x4 80 160 1.5 0.2 1.3
S1-rivers STAGE-05 4x4 80 160 1.3 0.2 1.1
S1-rivers STAGE-06 5x5 125 250 2.6 0.1 2.5
S2-pits STAGE-01 3x3 35 70 24.8 4.8 20.0
S2-pits STAGE-02 4x4 80 160 18.1 3.2 14.9
S2-pits STAGE-03 4x5 100 200 10.1 1.3 8.8
S2-pits STAGE-04 4x4 80 160 5.9 0.7 5.2
S2-pits STAGE-05 4x5 100 200 4.3 0.4 3.9
S2-pits STAGE-06 5x5 125 250 3.6 0.3 3.3
S3-full STAGE-01 3x4 50 100 20.6 4.5 16.1
S3-full STAGE-02 4x4 80 160 7.3 1.6 5.7
S3-full STAGE-03 4x5 100 200 3.2 0.4 2.8
S3-full STAGE-04 5x5 125 250 4.2 0.4 3.8
S3-full STAGE-05 5x5 125 250 3.2 0.2 3.0
S3-full STAGE-06 4x6 125 250 1.5 0.2 1.3
""".strip().splitlines()
)


__all__ = ["REAL_CALIBRATION", "CalibrationRow"]
