"""The distance sensor: straight-line distances to the exit and to each agent slot."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces

from maze_envs.escape.config import Config
from maze_envs.escape.features.base import (
    AgentSlots,
    Computation,
    Feature,
    FeatureContext,
    NumericField,
    ints,
    max_distance_tenths,
    scaled,
    tenths,
)
from maze_envs.grid import tenths_table

if TYPE_CHECKING:
    from maze_envs.escape.types import Observation, State


@lru_cache(maxsize=4)
def pair_tenths(width: int, height: int) -> array[int]:
    """``[a * cells + b]``: the straight-line distance between cells ``a`` and ``b`` of a
    ``width`` x ``height`` board, in tenths of a cell (``tenths_table``'s values; one lookup a
    pair on the step path; 2 bytes an entry, 5.6 MB for the largest board)."""
    rows, cols = np.divmod(np.arange(width * height, dtype=np.int64), width)
    table = np.array(tenths_table(max(width, height)), dtype=np.uint16)
    pairs = table[np.abs(cols[:, None] - cols[None, :]), np.abs(rows[:, None] - rows[None, :])]
    return array("H", pairs.tobytes())


class DistanceSensor(Feature):
    """Straight-line distances between cell centres, ignoring walls, in whole tenths of a
    cell: ``distances = [exit, then one entry per agent slot]``."""

    name = "distances"
    switch = "distance_sensor"
    keys = ("distances",)
    changes = "any_move"
    fields = ("distance_to_exit", "distance_to_teammates")
    example: ClassVar[Mapping[str, Any]] = {"distance_sensor": True}

    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        top = max_distance_tenths(config)
        return {"distances": spaces.Box(0, top, shape=(1 + slots,), dtype=np.int64)}

    def observer(self, context: FeatureContext) -> Computation:
        board = context.board
        exit_tenths, slot_indices = board.exit_tenths, context.slot_indices
        cells = board.width * board.height
        pair = pair_tenths(board.width, board.height)
        n = context.config.num_agents
        width = 1 + len(slot_indices[0])

        def compute(state: State, observations: list[dict[str, Any]]) -> None:
            positions = state.positions
            flat: list[int] = []
            append = flat.append
            for i, here in enumerate(positions):
                append(exit_tenths[here])
                row = here * cells
                for j in slot_indices[i]:  # an agent's own slot (version 1): here to here, 0
                    append(pair[row + positions[j]])
            # fromiter on a flat list is much cheaper than np.array on nested lists; one new
            # array for all agents, a row each
            rows = np.fromiter(flat, np.int64, n * width).reshape(n, width)
            for i, obs in enumerate(observations):
                obs["distances"] = rows[i]

        return compute

    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        distances = ints(obs["distances"])
        to_teammates = {}
        for name, at in zip(slots.others, slots.other_at):  # noqa: B905 (same length)
            to_teammates[name] = distances[1 + at]
        values["distance_to_exit"] = distances[0]
        values["distance_to_teammates"] = to_teammates

    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        to_teammates = data["distance_to_teammates"] or {}
        row = [data["distance_to_exit"], *(to_teammates.get(name, 0) for name in slots.slots)]
        return {"distances": np.array(row, dtype=np.int64)}

    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        return legend["distances"]

    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        if obs.distance_to_exit is None:
            return []
        parts = [label("distances").format(exit=tenths(obs.distance_to_exit))]
        for name, value in sorted((obs.distance_to_teammates or {}).items()):
            parts.append(label("distance_item").format(name=name, value=tenths(value)))
        return [", ".join(parts) + "."]

    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        return [
            NumericField(
                "distances",
                spaces.Box(0.0, 1.0, (1 + len(slots),), np.float32),
                "distances",
                ("distances[exit]", *(f"distances[{s}]" for s in slots)),
                scaled([1.0 / max_distance_tenths(config)]),
            )
        ]

    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        if data.get("distance_to_exit") is None:
            return []
        rows = [("distance to exit", f"{tenths(data['distance_to_exit'])} cells straight line")]
        for name, value in (data.get("distance_to_teammates") or {}).items():
            rows.append((f"distance to {name}", f"{tenths(value)} cells"))
        return rows
