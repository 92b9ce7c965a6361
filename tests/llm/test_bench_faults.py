"""LLM policies through the runner when things go wrong, and what keeps them fast.

A model outage (503 forever, replies after the deadline) mid-game: the game does not crash, the
fallback is recorded as an outage and the row says so; a lasting outage and token or cost caps
stop the game cleanly with the reason. Backends of one endpoint share their providers and
client pools, and a game that ends never closes the clients of one still playing. The
LLM-versus-solver example runs offline.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from maze_envs.bench.spec import Experiment
from maze_envs.cli import main as cli_main
from maze_envs.journal import Journal
from tests.llm.bench_support import (
    ESCAPE_SIZE,
    IN_TOKENS,
    OUT_TOKENS,
    TUTORIAL,
    agimaze_experiment,
    agimaze_plan,
    decisions_of,
    escape_experiment,
    escape_model,
    escape_observation,
    escape_plans,
    module_server,
    price_of,
    request_text,
    run,
    server,
    stay_model,
)
from tests.llm.servers import HttpError, LoopbackServer, RecordedRequest, Reply

__all__ = ["module_server", "server"]  # the fixtures


# --- 3. a model outage mid-game ---------------------------------------------------------------


def test_an_outage_mid_game_plays_stay_and_is_recorded_as_an_outage(
    server: LoopbackServer, tmp_path: Path
) -> None:
    spec = f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0,timeout_s=3"
    experiment = escape_experiment(spec, turns=6)
    good = escape_model(escape_plans(experiment))

    def respond(request: RecordedRequest) -> Any:
        turn = int(re.search(r"Turn: (\d+) \(", request_text(request)).group(1))  # type: ignore[union-attr]
        if turn < 2:
            return good(request)
        if turn < 4:
            return HttpError(503, message="overloaded")
        return Reply(text="{}", delay_s=60.0)  # long after the 3 s deadline

    server.respond_with(respond)
    result = run(experiment, tmp_path / "run")
    (row,) = result.rows
    assert row["turns"] == 6  # the game went on to its end
    # an outage touched it: not the model's play, reported apart (issue 13)
    assert row["status"] == "outage"
    assert (row["outages"], row["fallbacks"], row["decisions"]) == (12, 0, 18)
    assert row["stays"] == 0  # the fallback STAYs are no STAYs of the model
    assert row["requests"] == 6  # only the answered calls count
    assert result.verified_ok
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "outages" in summary
    with Journal(result.journal, readonly=True) as journal:  # type: ignore[arg-type]
        game_id = journal.game_ids()[0]
        records = decisions_of(journal, game_id)
        actions = {t.turn: t.actions for t in journal.turns(game_id)}
    for record in records:
        if record["turn"] < 2:
            assert record["status"] == "ok"
            continue
        assert record["status"] == "outage" and record["values"] is None
        assert record["action"]["move"] == "STAY"
        assert actions[record["turn_index"]][record["agent_name"]]["move"] == "STAY"
        kind = "server" if record["turn"] < 4 else "timeout"
        assert record["outage"]["kind"] == kind, record["outage"]


def test_a_lasting_outage_stops_the_game_with_the_reason(
    server: LoopbackServer, tmp_path: Path
) -> None:
    spec = (
        f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0,"
        "max_consecutive_fallbacks=3"
    )
    server.respond_with(lambda request: HttpError(503))
    result = run(escape_experiment(spec, turns=20), tmp_path / "run")
    (row,) = result.rows
    assert row["status"] == "outage" and row["turns"] == 3
    assert "model unavailable in 3 decisions in a row" in row["stop_reason"]
    assert row["outages"] == 9 and row["error"] is None
    assert result.verified_ok  # the game is stored as stopped (aborted) and verifies
    with Journal(result.journal, readonly=True) as journal:  # type: ignore[arg-type]
        outcome = journal.game(journal.game_ids()[0]).outcome
    assert outcome is not None
    assert outcome["aborted"] is True and outcome["stopped"] == "requested"
    assert "model unavailable" in outcome["stop_reason"]


def test_an_agimaze_outage_falls_back_without_crashing(
    server: LoopbackServer, tmp_path: Path
) -> None:
    plan = agimaze_plan(TUTORIAL)
    server.extend([Reply(tool_arguments=json.dumps({"action": a})) for a in plan[:2]])
    server.respond_with(lambda request: HttpError(503))
    spec = (
        f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0,"
        "max_consecutive_fallbacks=4"
    )
    result = run(agimaze_experiment(spec), tmp_path / "run")
    (row,) = result.rows
    assert row["status"] == "outage" and row["outages"] == 4 and row["decisions"] == 6
    assert "model unavailable" in row["stop_reason"]
    with Journal(result.journal, readonly=True) as journal:  # type: ignore[arg-type]
        records = decisions_of(journal, journal.game_ids()[0])
    fallbacks = [r for r in records if r["status"] == "outage"]
    assert len(fallbacks) == 4
    for record in fallbacks:
        # the single-labyrinth env plays every action it offers, so the fallback uses a step
        # (see docs/llm.md); it is recorded as a fallback, never as the model's play
        assert record["values"] is None and record["fallback_action"] == record["action"]
    assert row["steps"] == 6
    assert result.verified_ok


# --- 4. caps through the runner ---------------------------------------------------------------


def test_a_token_cap_holds_for_the_whole_game_of_three_agents(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # before: each agent had its own budget, so a 3-agent game used three times the cap
    spec = (
        f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0,"
        "max_tokens_per_game=5000"
    )
    experiment = escape_experiment(spec)
    server.respond_with(stay_model)
    result = run(experiment, tmp_path / "run")
    (row,) = result.rows
    assert row["status"] == "stopped"
    reason = row["stop_reason"]
    assert "token cap of the game reached" in reason and "cap 5000" in reason
    calls = len(server.requests)
    assert row["requests"] == calls and calls > 3
    assert row["input_tokens"] == calls * IN_TOKENS and row["output_tokens"] == calls * OUT_TOKENS
    assert row["input_tokens"] + row["output_tokens"] <= 5000
    assert row["turns"] < 30
    assert row["cost_usd"] == pytest.approx(
        price_of(
            "gpt-4o-mini",
            "openai",
            input_tokens=calls * IN_TOKENS,
            output_tokens=calls * OUT_TOKENS,
        )
    )
    assert result.verified_ok
    path = tmp_path / "run" / "games.sqlite"
    with Journal(path, readonly=True) as journal:
        records = decisions_of(journal, journal.game_ids()[0])
    refused = [r for r in records if r.get("fallback_reason") == "cap"]
    assert refused and all(r["attempts"] == [] for r in refused)  # never sent


def test_a_cost_cap_holds_for_the_whole_game(server: LoopbackServer, tmp_path: Path) -> None:
    one = price_of("gpt-4o-mini", "openai", input_tokens=IN_TOKENS, output_tokens=OUT_TOKENS)
    cap = 60 * one
    spec = (
        f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0,"
        f"max_cost_per_game={cap}"
    )
    experiment = escape_experiment(spec)
    server.respond_with(stay_model)
    (row,) = run(experiment, tmp_path / "run").rows
    assert row["status"] == "stopped" and "cost cap of the game reached" in row["stop_reason"]
    assert 3 < row["requests"] == len(server.requests)
    assert row["cost_usd"] <= cap


# --- 5. hosted backends share their provider (one connection pool, built once) --------------


def test_backends_of_one_endpoint_share_a_provider_until_the_last_closes(
    server: LoopbackServer, tmp_path: Path
) -> None:
    import asyncio

    from llm_policies.backends.pydantic_ai import SHARED_PROVIDERS
    from llm_policies.registry import make_llm_policy

    before = len(SHARED_PROVIDERS)
    slots = SHARED_PROVIDERS.slots
    url = server.openai_base_url
    policies = [
        make_llm_policy("openai-chat:gpt-4o-mini", "escape", base_url=url) for _ in range(2 * slots)
    ]
    providers = {id(p.backend.model.provider) for p in policies}  # type: ignore[attr-defined]
    assert len(providers) == slots == len(SHARED_PROVIDERS) - before
    other = make_llm_policy("openai-chat:gpt-4o-mini", "escape", base_url=url + "/other")
    assert id(other.backend.model.provider) not in providers  # type: ignore[attr-defined]

    async def close(some: list[Any]) -> None:
        for policy in some:
            await policy.aclose()

    asyncio.run(close(policies[:slots]))
    assert len(SHARED_PROVIDERS) - before == slots + 1  # every pool still has a user
    asyncio.run(close([*policies[slots:], other]))
    assert len(SHARED_PROVIDERS) == before


def test_ollama_backends_of_one_host_share_their_clients(server: LoopbackServer) -> None:
    import asyncio

    from llm_policies.backends.ollama import SHARED_CLIENTS
    from llm_policies.registry import make_llm_policy
    from maze_envs.escape.types import Config
    from maze_envs.policies.interface import EscapeEpisode

    action = json.dumps({"move": "N", "notebook": None, "radio": None})
    server.respond_with(lambda request: Reply(text=action, delay_s=0.05))
    config = Config.from_preset("navigator")
    episode = EscapeEpisode("maze_envs/MazeEscape-v1", "A", config.agents, config)
    policies: list[Any] = [
        make_llm_policy("ollama:qwen3:8b", "escape", base_url=server.url) for _ in range(6)
    ]
    for policy in policies:
        policy.reset("A", 0, episode)

    async def play() -> tuple[int, list[str]]:
        decisions = await asyncio.gather(*(p.aact(escape_observation()) for p in policies))
        pools = {id(p.backend._pool) for p in policies}
        await policies[0].aclose()  # the others go on through the same clients
        again = await asyncio.gather(*(p.aact(escape_observation()) for p in policies[1:]))
        for policy in policies[1:]:
            await policy.aclose()
        return len(pools), [d.status for d in [*decisions, *again]]

    before = len(SHARED_CLIENTS)
    pools, statuses = asyncio.run(play())
    assert pools == 1 and statuses == ["ok"] * 11
    assert len(SHARED_CLIENTS) == before  # the last backend closed the pool


def test_a_game_plays_on_after_a_shorter_game_closed_its_policies(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # two games at once share the providers; the first to end must not close the other's client
    spec = f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0"
    setups = [
        {"preset": "navigator", "sizes": [ESCAPE_SIZE], "max_turns": turns, "policies": [spec]}
        for turns in (3, 12)
    ]
    experiment = Experiment.model_validate({"name": "lifetimes", "seeds": "0", "escape": setups})
    action = json.dumps({"move": "N", "notebook": None, "radio": None})
    server.respond_with(lambda request: Reply(tool_arguments=action))
    result = run(experiment, tmp_path / "run", concurrency=2)
    assert sorted(r["turns"] for r in result.rows) == [3, 12]
    assert all(r["status"] == "ok" and r["outages"] == 0 for r in result.rows)
    assert len(server.requests) == 3 * (3 + 12)
    assert result.verified_ok


# --- 6. the example: an LLM against a solver, offline ----------------------------------------


def test_the_llm_versus_solver_example_runs_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    examples = Path(__file__).resolve().parents[2] / "examples"
    monkeypatch.syspath_prepend(str(examples))
    spec = importlib.util.spec_from_file_location("llm_vs_solver", examples / "llm_vs_solver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "run"
    args = ["--sizes", "5", "--seeds", "0-1", "--max-turns", "60", "--out", str(out)]
    assert module.main(args) == 0
    printed = capsys.readouterr().out
    assert "explorer (solver)" in printed and "LLM (llm_vs_solver:offline_llm)" in printed
    assert "$0 (local)" in printed and "LLM minus solver" in printed
    rows = orjson.loads((out / "results.json").read_bytes())["games"]
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    llm = [r for r in rows if r["policy"].startswith("LLM")]
    assert all(r["cost_status"] == "local" and r["input_tokens"] > 0 for r in llm)
    assert all(r["decisions"] == 3 * r["turns"] for r in llm)
    assert cli_main(["verify", str(out / "games.sqlite")]) == 0
