"""What every environment setup of an experiment shares (:mod:`.spec`, :mod:`.setspec`).

A setup has a label, the policies it is played by and optionally its own seeds; cases and run
keys are hashed with :func:`stable_key`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from maze_envs.bench.policyspec import PolicyEntry
from maze_envs.bench.seeds import parse_seeds

#: Default evaluation budget of AGI Maze setups (EnvTraverse: 5 x max_steps).
DEFAULT_BUDGET_FACTOR = 5.0

Seeds = Annotated[tuple[int, ...], Field(min_length=1)]


def seeds_or_none(value: Any) -> tuple[int, ...] | None:
    return None if value is None else parse_seeds(value)


class SetupBase(BaseModel):
    """The fields every setup has: a label, its policies, its own seeds (optional)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    label: str | None = None
    policies: tuple[PolicyEntry, ...] = Field(min_length=1)
    seeds: Seeds | None = None

    @field_validator("seeds", mode="before")
    @classmethod
    def _parse_seeds(cls, value: Any) -> Any:
        return seeds_or_none(value)
