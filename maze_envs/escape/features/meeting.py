"""The meeting alert: which agent slots stand on the agent's cell."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from maze_envs.escape.config import Config
from maze_envs.escape.features.base import (
    AgentSlots,
    Computation,
    Feature,
    FeatureContext,
    NumericField,
    Templates,
    flags,
    ints,
)

if TYPE_CHECKING:
    from maze_envs.escape.types import Observation, State


class MeetingAlert(Feature):
    """``colocated_with``: 1 for each agent slot whose agent is on this cell."""

    name = "meeting_alert"
    keys = ("colocated_with",)
    changes = "any_move"

    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        return {"colocated_with": spaces.MultiBinary(slots)}

    def observer(self, context: FeatureContext) -> Computation:
        slot_indices = context.slot_indices
        n = context.config.num_agents
        by_flags = Templates(lambda together: together, np.int8)  # by the tuple of flags
        nobody = [by_flags[tuple(False for _ in idx)] for idx in slot_indices]

        def compute(state: State, observations: list[dict[str, Any]]) -> None:
            positions = state.positions
            if len(set(positions)) == n:  # the common case: nobody shares a cell
                for obs, alone in zip(observations, nobody):  # noqa: B905 (one per agent)
                    obs["colocated_with"] = alone.copy()
                return
            for i, obs in enumerate(observations):
                here = positions[i]
                together = tuple([positions[j] == here and j != i for j in slot_indices[i]])
                obs["colocated_with"] = by_flags[together].copy()

        return compute

    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        flags = ints(obs["colocated_with"])
        names = []
        for name, at in zip(slots.others, slots.other_at):  # noqa: B905 (same length)
            if flags[at]:
                names.append(name)
        values["colocated_with"] = names

    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        here = set(data["colocated_with"] or ()) - {slots.agent}
        flags = [name in here for name in slots.slots]
        return {"colocated_with": np.array(flags, dtype=np.int8)}

    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        return legend["colocated_with"]

    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        if obs.colocated_with is None:
            return []
        if not obs.colocated_with:
            return [label("colocated_none")]
        return [label("colocated").format(names=", ".join(sorted(obs.colocated_with)))]

    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        return [
            NumericField(
                "colocated_with",
                spaces.MultiBinary(len(slots)),
                "colocated_with",
                tuple(f"colocated_with[{s}]" for s in slots),
                flags,
            )
        ]

    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        names = data.get("colocated_with")
        if names is None:
            return []
        return [("on this cell", ", ".join(names) if names else "nobody")]
