"""History policies of the AGI Maze LLM policy: what the model sees of its earlier steps.

The designs the AGI Maze benchmark's own baseline agents compare, each selectable by name:

* ``observations``: a plain history: every earlier observation (user message) and the action
  taken after it (assistant message);
* ``planning``: the same, plus the model's one-line ``plan`` kept beside each action;
* ``world_model``: a clean history (observations and bare actions) plus a ``state`` description
  the model rewrites every step; only the newest description is shown, at the end of the prompt.

``window`` keeps only the last N steps (a sliding window; ``None`` keeps all). Without a window
the history only grows at its end, so each request starts with the previous request's bytes and
provider prompt caches hit; a sliding window changes the start of the history on every step once
it is full, which is the price of a bounded prompt. ``messages(current, start=k)`` also leaves
out the steps before ``k``: the policy's automatic trim when the history would not fit the
model's context window.

Example:
    >>> history = History("planning")
    >>> history.add("Step 0 of 20.", {"plan": "go up to the wall", "action": "up"})
    >>> [role for role, _ in history.messages("Step 1 of 20.")]
    ['user', 'assistant', 'user']
    >>> history.messages("Step 1 of 20.")[1][1]
    '{"plan": "go up to the wall", "action": "up"}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from llm_policies.prompt_data import load

HistoryKind = Literal["observations", "planning", "world_model"]
HISTORY_KINDS: Final = ("observations", "planning", "world_model")
Role = Literal["user", "assistant"]
#: The reply field each history policy adds to the action.
REASONING_FIELD: Final[dict[str, tuple[Literal["plan", "state"], ...]]] = {
    "observations": (),
    "planning": ("plan",),
    "world_model": ("state",),
}


def history_text(kind: HistoryKind) -> dict[str, str]:
    """The data-file text of a history policy (``about``, ``instruction``...)."""
    section: dict[str, str] = load("agimaze/history.toml")[kind]
    return section


@dataclass
class _Step:
    observation: str
    reply: dict[str, Any]
    #: the assistant message of this step (built once: a long history is re-sent every step)
    text: str = ""


@dataclass
class History:
    """The steps of one episode as chat messages, under one history policy."""

    kind: HistoryKind = "observations"
    window: int | None = None
    #: reply fields in the schema's order (the order kept in the assistant messages)
    field_order: Sequence[str] = ("plan", "state", "check", "action")
    steps: list[_Step] = field(default_factory=list)
    state: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in HISTORY_KINDS:
            raise ValueError(
                f"unknown history policy {self.kind!r}; choose one of {', '.join(HISTORY_KINDS)}"
            )
        if self.window is not None and (not isinstance(self.window, int) or self.window < 1):
            raise ValueError(
                f"window must be a positive number of steps or None, got {self.window!r}"
            )

    def reset(self) -> None:
        """Forget every step (a new episode)."""
        self.steps.clear()
        self.state = None

    def add(self, observation: str, reply: Mapping[str, Any]) -> None:
        """Record one step: the observation text shown and the validated reply values."""
        kept = ("action", *REASONING_FIELD[self.kind])
        if self.kind == "world_model":
            if reply.get("state"):  # a fallback step has none: the last description stays
                self.state = str(reply["state"])
            kept = ("action",)
        ordered = {f: reply[f] for f in self.field_order if f in kept and f in reply}
        self.steps.append(_Step(observation, ordered, json.dumps(ordered, ensure_ascii=False)))

    def first_shown(self, start: int = 0) -> int:
        """The index of the first step shown: after the window and after ``start``."""
        first = 0 if self.window is None else max(0, len(self.steps) - self.window)
        return max(first, min(start, len(self.steps)))

    def messages(self, current: str, start: int = 0) -> list[tuple[Role, str]]:
        """(role, content) pairs: the kept steps, then ``current`` as the last user message.

        ``start`` leaves out the steps before it too (an automatic trim to fit the context).
        """
        shown = self.steps[self.first_shown(start) :]
        dropped = len(self.steps) - len(shown)
        out: list[tuple[Role, str]] = []
        for step in shown:
            out.append(("user", step.observation))
            out.append(("assistant", step.text))
        last = current
        if self.kind == "world_model":
            text = history_text("world_model")
            state = self.state or text["state_empty"]
            last = f"{current}\n\n{text['state_header']}\n{state}"
        out.append(("user", last))
        if dropped:
            note = load("agimaze/history.toml")["window"]["dropped"].format(count=dropped)
            out[0] = ("user", f"{note}\n\n{out[0][1]}")
        return out
