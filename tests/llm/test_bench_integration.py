"""LLM policies through the benchmark runner, end to end, against loopback model servers.

A full Maze Escape game (3 agents) and a full AGI Maze episode (TUTORIAL) are played by LLM
policies through ``maze_envs.bench`` (API and ``maze-envs bench``), over the real client paths
(OpenAI Chat Completions, Anthropic Messages, Ollama's native API) to a loopback server the test
starts and scripts. Then: the journal holds every call (prompt blobs, raw replies, quirks,
usage, cost, harness settings), ``maze-envs verify`` passes, the viewer page shows an agent's
prompt and raw reply, and the results (rows, CSV, summary) carry tokens, cost checked against
genai-prices, cost per success and quirk counts. Also: the response cache makes a rerun send
zero requests, a model outage mid-game is recorded as an outage (never as the model's play), and
token caps stop a game cleanly with the reason.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import orjson
import pytest

from maze_envs.bench.spec import Experiment
from maze_envs.cli import main as cli_main
from maze_envs.journal import Journal
from maze_envs.view.page import read_payload
from tests.llm.bench_support import (
    ESCAPE_SIZE,
    ESCAPE_TURNS,
    IN_TOKENS,
    OUT_TOKENS,
    TUTORIAL,
    agimaze_plan,
    decisions_of,
    escape_experiment,
    escape_model,
    escape_plans,
    module_server,
    price_of,
    run,
    server,
)
from tests.llm.servers import LoopbackServer, Reply

__all__ = ["module_server", "server"]  # the fixtures


# --- 1. a full Maze Escape game: journal, verify, viewer, results ------------------------------


def test_a_full_maze_escape_game_with_a_hosted_model_through_the_runner(
    server: LoopbackServer, tmp_path: Path
) -> None:
    spec = f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0"
    experiment = escape_experiment(spec)
    plans = escape_plans(experiment)
    config = experiment.tasks()[0].case.game_config  # type: ignore[union-attr]
    quirks = {("A", 1): "json_as_text", ("B", 2): "move_case"}
    server.respond_with(escape_model(plans, quirks=quirks))
    result = run(experiment, tmp_path / "run")

    (row,) = result.rows
    assert row["status"] == "ok" and row["success"] is True, row
    assert result.verified_ok and result.verified is not None and len(result.verified) == 1
    decisions = 3 * row["turns"]
    assert row["decisions"] == decisions == row["requests"] == len(server.requests)
    assert (row["input_tokens"], row["output_tokens"]) == (
        decisions * IN_TOKENS,
        decisions * OUT_TOKENS,
    )
    assert row["fallbacks"] == row["outages"] == 0
    assert row["quirks"] == {"json_as_text": 1, "move_case": 1}
    expected = price_of(
        "gpt-4o-mini",
        "openai",
        input_tokens=decisions * IN_TOKENS,
        output_tokens=decisions * OUT_TOKENS,
    )
    assert row["cost_status"] == "priced"
    assert row["cost_usd"] == pytest.approx(expected, rel=1e-9)
    # the team finished as fast as possible: the scripted model played the oracle's moves
    assert row["finish_turn"] == row["fastest"]

    # results: CSV and the summary's cost per success
    with (tmp_path / "run" / "results.csv").open() as handle:
        (line,) = list(csv.DictReader(handle))
    assert float(line["cost_usd"]) == pytest.approx(expected)
    assert int(line["input_tokens"]) == decisions * IN_TOKENS
    assert json.loads(line["quirks"]) == {"json_as_text": 1, "move_case": 1}
    (group,) = orjson.loads((tmp_path / "run" / "results.json").read_bytes())["summary"]["escape"]
    assert group["cost_per_success"] == pytest.approx(expected)
    assert group["quirks"] == {"json_as_text": 1, "move_case": 1}
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert f"${expected:.4f}" in summary and "json_as_text 1, move_case 1" in summary

    # the journal: every call, the prompt stored once, raw replies, quirks, usage, cost, harness
    path = tmp_path / "run" / "games.sqlite"
    with Journal(path, readonly=True) as journal:
        (game_id,) = journal.game_ids()
        meta = journal.game(game_id).meta
        assert meta is not None
        harness = meta["harness"]
        assert set(harness) == {"A", "B", "C"}
        for settings in harness.values():
            assert settings["model"] == "openai-chat:gpt-4o-mini"
            assert settings["prompt_version"] == "v14" and settings["output_mode"] == "tool"
            assert settings["settings"]["base_url"] == server.openai_base_url
            assert "test-key" not in json.dumps(settings)
        records = decisions_of(journal, game_id)
        assert len(records) == decisions
        for record in records:
            assert record["status"] == "ok" and record["attempts"]
            assert record["usage"]["cost_status"] == "priced"
            assert record["usage"]["cost_usd"] == pytest.approx(
                price_of("gpt-4o-mini", "openai", input_tokens=IN_TOKENS, output_tokens=OUT_TOKENS)
            )
            # the system prompt is every agent's; the agent's own part opens its message
            assert "You are agent" not in record["system"]
            user = record["messages"]["new"][-1]["content"]
            assert user.startswith(f"You are agent {record['agent_name']}.")
            raw = record["attempts"][0]["raw"]
            assert (
                json.loads(raw["tool_arguments"] or raw["text"])["move"].upper()
                == (record["values"]["move"])
            )
        # the settings only the game decides come with each agent's first decision
        firsts = [r for r in records if r["turn"] == 0]
        assert len(firsts) == 3
        for record in firsts:
            assert record["harness"]["schema_order"] == ["move", "notebook", "radio"]
            assert record["harness"]["notebook_mode"] == config.notebook_mode
        quirky = sorted((r["agent_name"], r["turn"], r["quirks"]) for r in records if r["quirks"])
        assert quirky == [("A", 1, {"json_as_text": 1}), ("B", 2, {"move_case": 1})]
        (as_text,) = [r for r in records if (r["agent_name"], r["turn"]) == ("A", 1)]
        assert as_text["attempts"][0]["raw"]["tool_arguments"] is None
        # one system prompt for every agent, stored once as a blob however many turns
        raw_turns = list(journal.turns(game_id))
        keys = {d["system"]["$blob"] for t in raw_turns for d in (t.decisions or {}).values()}
        assert len(keys) == 1
        prompt_blob = next(iter(keys))

    # maze-envs verify and maze-envs view from the command line
    assert cli_main(["verify", str(path)]) == 0
    page = tmp_path / "game.html"
    assert cli_main(["view", str(path), "--out", str(page)]) == 0
    data = read_payload(page.read_text())
    assert "You are one of 3 agents (A, B, C)" in data["blobs"][prompt_blob]
    shown = data["decisions"]["B"][3]  # B's decision of turn 2, stored with turn 3
    raw = json.loads(shown["attempts"][0]["raw"]["tool_arguments"])
    assert raw["move"] == shown["values"]["move"].lower()  # the raw reply, exactly as sent
    assert shown["quirks"] == {"move_case": 1}
    assert "Turn: 2 (" in shown["messages"]["new"][0]["content"]


# --- a full AGI Maze episode from the command line, Anthropic with prompt-cache tokens --------


def test_a_full_agimaze_episode_with_anthropic_from_the_command_line(
    server: LoopbackServer, tmp_path: Path
) -> None:
    plan = agimaze_plan(TUTORIAL)
    replies = [json.dumps({"plan": f"go {a} toward the chest", "action": a}) for a in plan]
    first = Reply(tool_arguments=replies[0], cache_write_tokens=90)
    rest = [Reply(tool_arguments=text, cache_read_tokens=90) for text in replies[1:]]
    server.extend([first, *rest])
    out = tmp_path / "run"
    spec = f"anthropic:claude-haiku-4-5:base_url={server.url},retries=0,history=planning"
    code = cli_main(
        [
            "bench",
            "--env",
            "agimaze",
            "--pack",
            TUTORIAL,
            "--policy",
            spec,
            "--out",
            str(out),
            "--verify",
            "--no-plots",
            "--quiet",
        ]
    )
    assert code == 0
    assert server.script.remaining() == 0 and len(server.requests) == len(plan)
    assert all(r.protocol == "anthropic" for r in server.requests)
    (row,) = orjson.loads((out / "results.json").read_bytes())["games"]
    assert row["status"] == "ok" and row["solved"] is True and row["steps"] == len(plan)
    n = len(plan)
    expected = price_of(
        "claude-haiku-4-5",
        "anthropic",
        input_tokens=n * IN_TOKENS,
        cache_write_tokens=90,
        cache_read_tokens=90 * (n - 1),
        output_tokens=n * OUT_TOKENS,
    )
    assert row["cost_status"] == "priced"
    assert row["cost_usd"] == pytest.approx(expected, rel=1e-9)
    assert (row["cache_read_tokens"], row["cache_write_tokens"]) == (90 * (n - 1), 90)
    summary = orjson.loads((out / "results.json").read_bytes())["summary"]["agimaze"]
    (stage,) = summary["stage"]
    assert stage["cost_per_success"] == pytest.approx(expected)
    # the cache breakpoint is on the stable system prompt of every request, and on the last
    # message of the history, which the next step then reads from the cache
    assert all(
        r.body["system"][-1]["cache_control"]["type"] == "ephemeral" for r in server.requests
    )
    assert all(
        r.body["messages"][-1]["content"][-1]["cache_control"]["type"] == "ephemeral"
        for r in server.requests
    )
    assert row["cache_read_share"] == pytest.approx(90 * (n - 1) / (n * IN_TOKENS))
    path = out / "games.sqlite"
    with Journal(path, readonly=True) as journal:
        (game_id,) = journal.game_ids()
        meta = journal.game(game_id).meta
        assert meta is not None
        assert meta["harness"]["player"]["history"] == "planning"
        records = decisions_of(journal, game_id)
    assert [r["action"] for r in records] == plan
    assert records[0]["harness"]["schema_order"] == ["plan", "action"]
    assert "TUTORIAL" in records[0]["system"] or "labyrinth" in records[0]["system"].lower()
    assert cli_main(["verify", str(path)]) == 0
    page = tmp_path / "episode.html"
    assert cli_main(["view", str(path), "--out", str(page)]) == 0
    data = read_payload(page.read_text())
    shown = data["decisions"][2]  # the decision of step 1, stored with step 2
    assert shown["attempts"][0]["raw"]["tool_arguments"] == replies[1]
    assert f"go {plan[0]} toward the chest" in json.dumps(shown["messages"])  # the plan history
    assert shown["system"]["$blob"] in data["blobs"]


# --- local and unknown models: cost 0 marked local, unknown never 0 ---------------------------


def test_a_local_ollama_model_costs_zero_and_an_unknown_model_is_unknown(
    server: LoopbackServer, tmp_path: Path
) -> None:
    ollama = f"ollama:qwen3:8b:base_url={server.url},retries=0"
    unknown = f"openai-chat:my-own-finetune:base_url={server.openai_base_url},retries=0"
    experiment = Experiment.model_validate(
        {
            "name": "costs",
            "seeds": "0",
            "escape": [
                {
                    "preset": "navigator",
                    "sizes": [ESCAPE_SIZE],
                    "max_turns": ESCAPE_TURNS,
                    "policies": [ollama, unknown],
                }
            ],
        }
    )
    server.respond_with(escape_model(escape_plans(experiment)))
    result = run(experiment, tmp_path / "run")
    assert result.verified_ok
    rows = {r["policy"].split(":")[0]: r for r in result.rows}
    local, hosted = rows["ollama"], rows["openai-chat"]
    assert local["success"] and hosted["success"]
    assert (local["cost_usd"], local["cost_status"]) == (0.0, "local")
    assert local["input_tokens"] == 3 * local["turns"] * IN_TOKENS
    assert (hosted["cost_usd"], hosted["cost_status"]) == (None, "unknown")
    assert hosted["input_tokens"] == 3 * hosted["turns"] * IN_TOKENS
    groups = {g["policy"].split(":")[0]: g for g in result.summary["escape"]}
    assert groups["ollama"]["cost_status"] == "local"
    assert groups["ollama"]["cost_per_success"] == 0.0
    assert groups["openai-chat"]["cost_status"] == "unknown"
    assert groups["openai-chat"]["cost_per_success"] is None
    table = (tmp_path / "run" / "summary.md").read_text()
    ollama_line = next(line for line in table.splitlines() if "ollama:" in line)
    unknown_line = next(line for line in table.splitlines() if "my-own-finetune" in line)
    assert "$0 (local)" in ollama_line
    assert unknown_line.count("unknown") >= 2  # cost and cost per success
    with (tmp_path / "run" / "results.csv").open() as handle:
        lines = {line["policy"].split(":")[0]: line for line in csv.DictReader(handle)}
    assert (lines["ollama"]["cost_usd"], lines["ollama"]["cost_status"]) == ("0.0", "local")
    assert (lines["openai-chat"]["cost_usd"], lines["openai-chat"]["cost_status"]) == (
        "",
        "unknown",
    )
    ollama_bodies = server.bodies("ollama")
    assert ollama_bodies and all(b["options"]["num_ctx"] == 8192 for b in ollama_bodies)


# --- 2. the response cache through the runner: a rerun sends nothing --------------------------


def test_a_rerun_with_the_cache_sends_zero_requests(server: LoopbackServer, tmp_path: Path) -> None:
    cache = tmp_path / "replies.sqlite"
    spec = f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},retries=0,cache={cache}"
    experiment = escape_experiment(spec, seeds="0-1")
    plans = escape_plans(experiment)
    seeds = {task.seed: task for task in experiment.tasks()}
    assert set(seeds) == {0, 1}

    # the two games differ in their mazes; the model tells them apart by the first cell seen
    def seed_of(text: str) -> int:
        return int(current["seed"])

    current = {"seed": 0}
    server.respond_with(escape_model(plans, seed_of))
    rows = []
    for seed in (0, 1):  # one game per run so the responder knows the seed
        current["seed"] = seed
        single = escape_experiment(spec, seeds=str(seed))
        rows += run(single, tmp_path / f"first-{seed}", verify=False).rows
    sent = len(server.requests)
    assert sent == sum(r["requests"] for r in rows) > 0

    again = run(experiment, tmp_path / "again")
    assert len(server.requests) == sent  # not one request reached the server
    assert again.verified_ok
    by_seed = {r["seed"]: r for r in rows}
    for row in again.rows:
        first = by_seed[row["seed"]]
        assert row["requests"] == 0
        assert row["success"] and row["turns"] == first["turns"]
        assert row["input_tokens"] == first["input_tokens"]
        assert row["cost_usd"] == pytest.approx(first["cost_usd"])  # as recorded
    with Journal(again.journal, readonly=True) as journal:  # type: ignore[arg-type]
        records = [r for g in journal.game_ids() for r in decisions_of(journal, g)]
    assert records and all(r["attempts"][0]["cached"] for r in records)
