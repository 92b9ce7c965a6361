"""The trail: the cells where the agent ended each of the last K turns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from maze_envs.escape.config import Config
from maze_envs.escape.features.base import (
    AgentSlots,
    Computation,
    Feature,
    FeatureContext,
    NumericField,
    coordinate_bounds,
    frame_scale,
    ints,
)

if TYPE_CHECKING:
    from maze_envs.escape.types import Observation, State


class Trail(Feature):
    """``trail`` and ``trail_length``: the cells where the agent ended each of the last K turns,
    oldest first, in the coordinate frame. The *last* row is last turn's cell: it never holds the
    current turn, and after a bump or a STAY it equals the current cell. Only the last
    ``trail_length`` rows are real; earlier rows are zero padding."""

    name = "trail"
    switch = "trail_length"
    keys = ("trail", "trail_length")
    changes = "turn"
    fields = ("trail",)
    example: ClassVar[Mapping[str, Any]] = {"coordinates": "own", "trail_length": 4}

    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        low, high = coordinate_bounds(config)
        k = config.trail_length
        return {
            "trail": spaces.Box(np.tile(low, (k, 1)), np.tile(high, (k, 1)), dtype=np.int64),
            "trail_length": spaces.Discrete(k + 1),
        }

    def observer(self, context: FeatureContext) -> Computation:
        frames, k = context.frames, context.config.trail_length

        def compute(state: State, observations: list[dict[str, Any]]) -> None:
            turn = state.turn
            length = turn if turn < k else k
            # the trail keys (State.trail_keys, sliced here without the property's call)
            # index the frames directly (see State.trail_ring): one new array for all agents,
            # a (K, 2) row each
            head = state.trail_head
            trails = frames.take(state.trail_ring[:, head : head + k], axis=0)
            for i, obs in enumerate(observations):
                obs["trail"] = trails[i]
                obs["trail_length"] = length

        return compute

    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        rows = obs["trail"]
        if type(rows) is not np.ndarray:
            rows = np.asarray(rows, dtype=np.int64)
        # the last trail_length rows, flat: zip pairs them (no list per row)
        flat = ints(rows[len(rows) - int(obs["trail_length"]) :].ravel())
        values["trail"] = list(zip(flat[::2], flat[1::2]))  # noqa: B905 (pairs: even length)

    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        trail = data["trail"] or []
        rows = np.zeros((config.trail_length, 2), dtype=np.int64)
        if trail:
            rows[config.trail_length - len(trail) :] = trail
        return {"trail": rows, "trail_length": len(trail)}

    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        return legend[f"trail_{trail}"].format(length=config.trail_length)

    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        if obs.trail is None:
            return []
        if not obs.trail:
            return [label("trail_empty")]
        cells = ", ".join(f"[{x}, {y}]" for x, y in obs.trail)
        return [label("trail").format(cells=cells)]

    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        low = -1.0 if config.coordinates in ("own", "shared") else 0.0
        k = config.trail_length
        scale_x, scale_y = frame_scale(config)

        def scaled(entries: NDArray[np.int64], j: int, float32: bool) -> NDArray[np.float32]:
            # float64 arithmetic in both forms (int64 times a float32 scale), then float32
            scale = np.float64(np.float32(scale_y if j % 2 else scale_x))
            return (entries.astype(np.float64) * scale).astype(np.float32)

        def real(entries: NDArray[np.int64], j: int, float32: bool) -> NDArray[np.float32]:
            return (entries >= k - j).astype(np.float32)  # the last trail_length rows

        return [
            NumericField(
                "trail",
                spaces.Box(low, 1.0, (k, 2), np.float32),
                "trail",
                tuple(f"trail[{i}].{c}" for i in range(k) for c in "xy"),
                scaled,
            ),
            NumericField(
                "trail_mask",
                spaces.MultiBinary(k),
                "trail_length",
                tuple(f"trail_mask[{i}]" for i in range(k)),
                real,
                repeat=k,
            ),
        ]

    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        trail = data.get("trail")
        if trail is None:
            return []
        if not trail:
            return [("trail", "(empty)")]
        cells = " → ".join(f"[{x},{y}]" for x, y in trail)
        return [("trail", f"{cells}  (ends with last turn's cell)")]
