"""Cost from genai-prices (checked against its published prices) and token/cost caps."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from llm_policies.accounting import Budget, BudgetLimits, price
from maze_envs.policies.interface import Usage

AT = datetime(2026, 1, 15, tzinfo=UTC)
# 10,000 input tokens of which 6,000 read from the cache and 1,000 written to it; 800 output
CALL = Usage(
    input_tokens=10_000, output_tokens=800, cache_read_tokens=6_000, cache_write_tokens=1_000
)


def test_claude_sonnet_5_5_at_its_published_prices() -> None:
    # genai-prices: $2 / MTok input, $10 output, $0.10 cache read, $2.50 cache write (5 min)
    priced = price("anthropic:claude-sonnet-5-5", CALL, at=AT)
    expected = (3_000 * 2.00 + 6_000 * 0.10 + 1_000 * 2.50 + 800 * 10.00) / 1_000_000
    assert priced.cost_status == "priced"
    assert priced.cost_usd == pytest.approx(expected, rel=1e-12)
    assert priced.cost_usd == pytest.approx(0.0171, rel=1e-12)
    # tokens are untouched
    assert (priced.input_tokens, priced.output_tokens) == (10_000, 800)


def test_gpt_4o_mini_at_its_published_prices() -> None:
    # genai-prices: $0.15 / MTok input, $0.60 output, $0.075 cached input (no write price:
    # written tokens cost the input price)
    usage = Usage(input_tokens=10_000, output_tokens=800, cache_read_tokens=6_000)
    expected = (4_000 * 0.15 + 6_000 * 0.075 + 800 * 0.60) / 1_000_000
    for spec in ("openai:gpt-4o-mini", "openai-chat:gpt-4o-mini"):
        priced = price(spec, usage, at=AT)
        assert priced.cost_usd == pytest.approx(expected, rel=1e-12)
        assert priced.cost_usd == pytest.approx(0.00153, rel=1e-12)


def test_openrouter_models_are_priced_by_their_openrouter_entry() -> None:
    usage = Usage(input_tokens=1_000, output_tokens=500)
    priced = price("openrouter:anthropic/claude-sonnet-5.5", usage, at=AT)
    assert priced.cost_usd == pytest.approx((1_000 * 2 + 500 * 10) / 1e6, rel=1e-12)


def test_local_models_cost_nothing_and_say_so() -> None:
    for spec, local in (("ollama:qwen3:8b", False), ("scripted:x", False), ("openai-chat:m", True)):
        priced = price(spec, CALL, local=local)
        assert (priced.cost_usd, priced.cost_status) == (0.0, "local")


def test_unknown_models_are_unknown_not_free() -> None:
    priced = price("openai-chat:Qwen/Qwen3-8B-served-by-vllm", CALL)
    assert (priced.cost_usd, priced.cost_status) == (None, "unknown")
    # the name the provider reported is tried when the spec's is unknown
    dated = price("openai-chat:my-alias", CALL, reported_model="gpt-4o-mini-2024-07-18", at=AT)
    assert (
        dated.cost_status == "priced"
        and dated.cost_usd == price("openai:gpt-4o-mini", CALL, at=AT).cost_usd
    )


def test_an_unknown_cost_stays_unknown_in_totals() -> None:
    known = price("openai:gpt-4o-mini", CALL, at=AT)
    unknown = price("openai-chat:nobody-knows", CALL)
    total = known + unknown
    assert total.cost_status == "unknown" and total.cost_usd is None
    assert total.input_tokens == 20_000


# --- caps -----------------------------------------------------------------------------------


def priced_call(tokens: int, cost: float) -> Usage:
    return Usage(input_tokens=tokens, requests=1, cost_usd=cost, cost_status="priced")


def test_a_game_token_cap_stops_the_game_not_the_run() -> None:
    run = Budget(max_tokens=100_000, name="run")
    game = run.child(max_tokens=1_000)
    game.charge(priced_call(600, 0.001))
    assert game.exceeded() is None
    game.charge(priced_call(400, 0.001))
    assert game.exceeded() == "token cap of the game reached: 1000 tokens used, cap 1000"
    assert run.exceeded() is None and run.used.input_tokens == 1_000
    # the next game starts afresh
    assert run.child(max_tokens=1_000).exceeded() is None


def test_a_run_cost_cap_stops_every_game() -> None:
    run = Budget(max_cost_usd=0.05, name="run")
    games = [run.child() for _ in range(3)]
    for game in games:
        game.charge(priced_call(100, 0.02))
    assert run.exceeded() == "cost cap of the run reached: $0.0600 spent, cap $0.0500"
    assert all(g.exceeded() == run.exceeded() for g in games)
    assert run.to_json()["used"]["cost_usd"] == pytest.approx(0.06)


def test_a_cost_cap_with_an_unknown_price_stops_by_default() -> None:
    game = Budget(max_cost_usd=1.0, name="game")
    game.charge(Usage(input_tokens=10, requests=1, cost_status="unknown"))
    reason = game.exceeded()
    assert reason is not None and "cannot be checked" in reason and "unknown" in reason
    lenient = Budget(max_cost_usd=1.0, name="game", on_unknown_cost="ignore")
    lenient.charge(Usage(input_tokens=10, requests=1, cost_status="unknown"))
    lenient.charge(priced_call(10, 0.5))
    assert lenient.exceeded() is None
    lenient.charge(priced_call(10, 0.5))
    assert lenient.exceeded() == "cost cap of the game reached: $1.0000 spent, cap $1.0000"


def test_local_calls_never_reach_a_cost_cap() -> None:
    game = Budget(max_cost_usd=0.01)
    for _ in range(100):
        game.charge(price("ollama:qwen3:8b", Usage(input_tokens=5_000, output_tokens=50)))
    assert game.exceeded() is None and game.used.cost_usd == 0.0


def test_no_caps_never_stop_and_none_usage_is_ignored() -> None:
    budget = Budget()
    budget.charge(None)
    budget.charge(priced_call(10**9, 10**6))
    assert budget.exceeded() is None


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"max_tokens": 0}, ValueError),
        ({"max_tokens": -5}, ValueError),
        ({"max_tokens": 1.5}, TypeError),
        ({"max_cost_usd": 0}, ValueError),
        ({"on_unknown_cost": "maybe"}, ValueError),
    ],
)
def test_bad_caps_are_refused(kwargs: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        BudgetLimits(**kwargs)  # type: ignore[arg-type]


def test_a_game_budget_holds_through_any_run_budget_node() -> None:
    from llm_policies.accounting import BudgetNode

    class Shared:
        """A run budget as another process might keep it: the BudgetNode interface only."""

        parent = None

        def __init__(self) -> None:
            self.held = 0
            self.charged = 0

        def hold(self, tokens: int, cost_usd: float | None) -> str | None:
            if self.charged + self.held + tokens > 1000:
                return "token cap of the run reached"
            self.held += tokens
            return None

        def unhold(self, tokens: int, cost_usd: float) -> None:
            self.held -= tokens

        def charge(self, usage: Usage | None) -> None:
            self.charged += 0 if usage is None else usage.input_tokens + usage.output_tokens

        def exceeded(self) -> str | None:
            return "token cap of the run reached" if self.charged >= 1000 else None

    run = Shared()
    assert isinstance(run, BudgetNode)
    game = Budget(max_tokens=5000, name="game", parent=run)
    held = game.reserve(600, 0.0)
    assert not isinstance(held, str) and run.held == 600
    assert game.reserve(600, 0.0) == "token cap of the run reached"
    assert run.held == 600  # the refused request held nothing anywhere
    game.charge(Usage(input_tokens=500, output_tokens=100))
    held.release()
    assert (run.held, run.charged) == (0, 600)
