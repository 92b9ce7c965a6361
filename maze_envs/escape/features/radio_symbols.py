"""Radio symbols: the symbol (1..K) each agent slot radioed last turn, 0 when it sent none."""

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
    ints,
)

if TYPE_CHECKING:
    from maze_envs.escape.types import Observation, State


class RadioSymbols(Feature):
    """``radio_symbols``: per agent slot, the radio symbol (1..K) its agent sent last turn, 0
    when it sent none (the agent's own slot is 0). With ``radio_symbols=K`` an action's
    ``radio_symbol`` 1..K goes out with its radio message, under the radio's rules: heard by
    every teammate next turn, then the radio cools down; refused (``last_action.radio``) while
    it cools down or is switched off. The communication of the batched engine."""

    name = "radio_symbols"
    keys = ("radio_symbols",)
    example: ClassVar[Mapping[str, Any]] = {"radio_symbols": 4}
    changes = "turn"  # what was sent last turn: any turn may change it

    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        return {"radio_symbols": spaces.MultiDiscrete([config.radio_symbols + 1] * slots)}

    def observer(self, context: FeatureContext) -> Computation:
        slot_indices = context.slot_indices
        n = context.config.num_agents
        width = len(slot_indices[0])
        # [agent, slot] -> the agent index of the slot, or n (a 0 appended) for the own slot
        where = np.array(
            [[j if j != i else n for j in slots] for i, slots in enumerate(slot_indices)],
            dtype=np.intp,
        ).reshape(n, width)

        def compute(state: State, observations: list[dict[str, Any]]) -> None:
            sent = np.array([*state.radio_symbols, 0], dtype=np.int64)
            rows = sent.take(where)  # one new array for all agents, a row each
            for i, obs in enumerate(observations):
                obs["radio_symbols"] = rows[i]

        return compute

    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        sent = ints(obs["radio_symbols"])
        heard = {}
        for name, at in zip(slots.others, slots.other_at):  # noqa: B905 (same length)
            if sent[at]:
                heard[name] = sent[at]
        values["radio_symbols"] = heard

    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        heard = data["radio_symbols"] or {}
        row = [heard.get(name, 0) if name != slots.agent else 0 for name in slots.slots]
        return {"radio_symbols": np.array(row, dtype=np.int64)}

    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        return legend["radio_symbols"].format(count=config.radio_symbols)

    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        if obs.radio_symbols is None:
            return []
        if not obs.radio_symbols:
            return [label("radio_symbols_none")]
        heard = ", ".join(
            label("radio_symbol_item").format(sender=name, symbol=symbol)
            for name, symbol in sorted(obs.radio_symbols.items())
        )
        return [label("radio_symbols").format(symbols=heard)]

    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        values = range(config.radio_symbols + 1)
        return [
            NumericField(
                "radio_symbols",
                spaces.MultiDiscrete([config.radio_symbols + 1] * len(slots)),
                "radio_symbols",
                tuple(f"radio_symbols[{s}]={v}" for s in slots for v in values),
            )
        ]

    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        heard = data.get("radio_symbols")
        if heard is None:
            return []
        shown = ", ".join(f"{name}: {symbol}" for name, symbol in sorted(heard.items()))
        return [("radio symbols", shown or "none")]
