"""The policy interface: sync and async policies, decisions, usage, and the README example.

The baselines themselves are tested in ``tests/policies/``.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from maze_envs.escape.types import Action, Observation
from maze_envs.policies import (
    AsyncPolicy,
    AsyncPolicyBase,
    Decision,
    EscapeEpisode,
    Policy,
    PolicyBase,
    TremauxExplorer,
    Usage,
    as_async,
    as_decision,
    is_async,
    is_privileged,
    make_policy,
)

README = Path(__file__).resolve().parent.parent / "README.md"


class Stay(PolicyBase[EscapeEpisode, Observation, Action]):
    def act(self, observation: Observation) -> Action:
        return Action()


class Thinker(AsyncPolicyBase[EscapeEpisode, Observation, Action]):
    async def aact(self, observation: Observation) -> Decision[Action]:
        await asyncio.sleep(0)
        return Decision(Action(move="N"), record={"why": "north"}, usage=Usage(requests=1))


class Bare:
    """Only ``reset`` and ``act``: the protocol, without a base class."""

    privileged = False

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        self.agent = agent

    def act(self, observation: Any) -> str:
        return "up"

    def close(self) -> None:
        self.closed = True


def test_sync_and_async_policies_have_both_methods() -> None:
    stay, thinker = Stay(), Thinker()
    assert isinstance(stay, Policy) and isinstance(thinker, AsyncPolicy)
    assert not is_async(stay) and is_async(thinker)
    assert asyncio.run(stay.aact(None)) == Action()  # type: ignore[arg-type]
    decision = thinker.act(None)  # type: ignore[arg-type]
    assert isinstance(decision, Decision) and decision.action.move == "N"

    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match=r"await policy\.aact"):
            thinker.act(None)  # type: ignore[arg-type]

    asyncio.run(inside_a_loop())


def test_adapters_and_decisions() -> None:
    bare = Bare()
    adapted = as_async(bare)
    assert as_async(adapted) is adapted and as_async(Stay()).__class__ is Stay
    adapted.reset("A", 1, None)
    assert bare.agent == "A" and asyncio.run(adapted.aact(None)) == "up"
    adapted.close()
    assert bare.closed
    assert as_decision("up") == Decision("up")
    full = Decision("up", record={"k": 1}, stop="cap")
    assert as_decision(full) is full
    assert not is_privileged(bare) and is_privileged(make_policy("oracle"))


def test_usage_adds_up_and_never_counts_an_unknown_cost_as_zero() -> None:
    priced = Usage(input_tokens=10, output_tokens=2, requests=1, cost_usd=0.5, cost_status="priced")
    local = Usage(input_tokens=5, requests=1, cost_usd=0.0, cost_status="local")
    unknown = Usage(input_tokens=1, requests=1, cost_status="unknown")
    both = priced + local
    assert (both.input_tokens, both.requests, both.cost_usd, both.cost_status) == (
        15,
        2,
        0.5,
        "priced",
    )
    worst = both + unknown
    assert (worst.cost_usd, worst.cost_status, worst.requests) == (None, "unknown", 3)
    assert Usage().to_json()["cost_status"] == "none"


def test_the_old_mover_names_are_gone_and_the_two_argument_reset_stays() -> None:
    """``RandomWalker`` / ``DepthFirstExplorer`` (``policies/movers.py``) were cut as legacy
    aliases (issue 17); a reset without an episode still assumes the default rules."""
    import maze_envs.policies as policies

    assert not hasattr(policies, "RandomWalker") and not hasattr(policies, "DepthFirstExplorer")
    explorer = TremauxExplorer()
    explorer.reset("A", 0)  # the old two-argument reset: default rules assumed
    assert explorer.config.width == 10


def _readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"README has no '## {title}' section"
    return match.group(1)


def test_readme_policy_example_runs_and_its_table_lists_every_built_in() -> None:
    section = _readme_section("Policies")
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), str(README), "exec"), namespace)  # the example plays a game
    assert namespace["outcome"]["turns"] > 0
    from maze_envs.policies import available_policies

    for kind in ("escape", "agimaze"):
        for name in available_policies(kind):
            assert f"`{name}`" in section, (kind, name)
