"""Coordinates: the agent's ``[x, y]`` in the game's frame."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    Templates,
    coordinate_bounds,
    frame_scale,
    ints,
    scaled,
)

if TYPE_CHECKING:
    from maze_envs.escape.types import Observation, State


class Coordinates(Feature):
    """``position``: ``[x, y]`` (x east, y north) in the frame ``absolute`` (origin ``(0, 0)``
    at the maze's south-west corner cell), ``own`` (origin at the agent's own start cell) or
    ``shared`` (origin at agent A's start cell)."""

    name = "coordinates"
    keys = ("position",)
    changes = "own_move"
    example: ClassVar[Mapping[str, Any]] = {"coordinates": "own"}

    def enabled(self, config: Config) -> bool:
        return config.coordinates is not None

    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        low, high = coordinate_bounds(config)
        return {"position": spaces.Box(low, high, dtype=np.int64)}

    def observer(self, context: FeatureContext) -> Computation:
        frames = context.frames
        stride = context.board.width * context.board.height + 1

        def row(at: int) -> Callable[[int], Any]:
            return lambda cell: frames[at + cell]

        caches = [Templates(row(i * stride)) for i in range(context.config.num_agents)]

        def compute(state: State, observations: list[dict[str, Any]]) -> None:
            for obs, cache, here in zip(observations, caches, state.positions):  # noqa: B905
                obs["position"] = cache[here].copy()

        return compute

    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        x, y = ints(obs["position"])
        values["position"] = (x, y)

    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        return {"position": np.array(data["position"], dtype=np.int64)}

    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        return legend[f"position_{config.coordinates}"]

    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        if obs.position is None:
            return []
        return [label("position").format(x=obs.position[0], y=obs.position[1])]

    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        low = -1.0 if config.coordinates in ("own", "shared") else 0.0
        return [
            NumericField(
                "position",
                spaces.Box(low, 1.0, (2,), np.float32),
                "position",
                ("position[0]", "position[1]"),
                scaled(frame_scale(config)),
            )
        ]

    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        if data.get("position") is None:
            return []
        x, y = data["position"]
        return [("coordinates", f"[{x}, {y}] ({config.coordinates} frame, x east, y north)")]
