"""History policies as message lists: what each keeps, the window, validation."""

from __future__ import annotations

import json

import pytest

from llm_policies.history import REASONING_FIELD, History


def _filled(history: History, steps: int) -> History:
    for n in range(steps):
        history.add(f"obs {n}", {"plan": f"plan {n}", "state": f"state {n}", "action": "up"})
    return history


def test_observations_keeps_actions_only() -> None:
    messages = _filled(History("observations"), 2).messages("obs 2")
    assert messages == [
        ("user", "obs 0"),
        ("assistant", json.dumps({"action": "up"})),
        ("user", "obs 1"),
        ("assistant", json.dumps({"action": "up"})),
        ("user", "obs 2"),
    ]


def test_planning_keeps_the_plan_in_field_order() -> None:
    history = _filled(History("planning", field_order=("action", "plan")), 1)
    assert history.messages("obs 1")[1] == ("assistant", '{"action": "up", "plan": "plan 0"}')


def test_world_model_shows_only_the_newest_state_at_the_end() -> None:
    history = _filled(History("world_model"), 3)
    messages = history.messages("obs 3")
    assert messages[-1] == (
        "user",
        "obs 3\n\nYour state description from the previous step:\nstate 2",
    )
    assert all("state" not in content for _, content in messages[:-1])
    history.add("obs 3", {"action": "down"})  # a fallback step keeps the last description
    assert history.messages("obs 4")[-1][1].endswith("\nstate 2")


def test_window_drops_the_oldest_steps_and_says_so() -> None:
    history = _filled(History("observations", window=2), 5)
    messages = history.messages("obs 5")
    assert len(messages) == 5
    assert messages[0] == ("user", "(3 earlier steps are no longer shown.)\n\nobs 3")
    assert messages[-1] == ("user", "obs 5")


def test_reset_and_validation() -> None:
    history = _filled(History("world_model"), 2)
    history.reset()
    assert history.messages("obs")[-1][1].endswith("(none yet: this is your first step)")
    assert len(history.messages("obs")) == 1
    with pytest.raises(ValueError, match="unknown history policy 'memory'"):
        History("memory")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window must be a positive number of steps or None"):
        History("observations", window=0)
    assert REASONING_FIELD == {"observations": (), "planning": ("plan",), "world_model": ("state",)}
