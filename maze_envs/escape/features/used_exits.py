"""Used exits: the edges of the agent's cell it has already crossed."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from gymnasium import spaces

from maze_envs.escape.config import Config
from maze_envs.escape.features.base import (
    AgentSlots,
    Computation,
    Feature,
    FeatureContext,
    NumericField,
    flags,
    ints,
    template,
)
from maze_envs.escape.vocab import DIRECTIONS

if TYPE_CHECKING:
    from maze_envs.escape.types import Observation, State


#: flags N, E, S, W -> the names of the edges used
_NAMES: Final = {
    flags: tuple(d for d, used in zip(DIRECTIONS, flags, strict=True) if used)
    for flags in itertools.product((0, 1), repeat=len(DIRECTIONS))
}
#: used-edge bit mask (0..15) -> flags N, E, S, W (templates).
EDGE_FLAGS: Final = tuple(
    template([(mask >> k) & 1 for k in range(len(DIRECTIONS))], np.int8) for mask in range(16)
)


class UsedExits(Feature):
    """``used_exits``: 1 for each edge of the current cell (N, E, S, W) that this agent has
    crossed in either direction, leaving or entering the cell."""

    name = "used_exits"
    keys = ("used_exits",)
    changes = "own_move"

    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        return {"used_exits": spaces.MultiBinary(len(DIRECTIONS))}

    def observer(self, context: FeatureContext) -> Computation:
        def compute(state: State, observations: list[dict[str, Any]]) -> None:
            for obs, used, here in zip(observations, state.used_exits, state.positions):  # noqa: B905
                obs["used_exits"] = EDGE_FLAGS[used[here]].copy()

        return compute

    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        north, east, south, west = ints(obs["used_exits"])
        values["used_exits"] = list(_NAMES[north, east, south, west])

    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        used = set(data["used_exits"] or ())
        return {"used_exits": np.array([d in used for d in DIRECTIONS], dtype=np.int8)}

    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        return legend["used_exits"]

    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        if obs.used_exits is None:
            return []
        if not obs.used_exits:
            return [label("used_exits_none")]
        sides = ", ".join(d for d in DIRECTIONS if d in obs.used_exits)
        return [label("used_exits").format(sides=sides)]

    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        names = tuple(f"used_exits[{d}]" for d in DIRECTIONS)
        return [
            NumericField(
                "used_exits", spaces.MultiBinary(len(DIRECTIONS)), "used_exits", names, flags
            )
        ]

    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        used = data.get("used_exits")
        if used is None:
            return []
        return [("edges used", ", ".join(used) if used else "none")]
