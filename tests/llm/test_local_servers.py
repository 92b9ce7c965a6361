"""Local model servers (llama.cpp, vLLM, LM Studio) through the real client paths and the runner.

The loopback server behaves like llama.cpp's (:mod:`tests.llm.servers.llamacpp`): it ignores
tools, rejects ``json_schema`` with HTTP 500, reads ``max_tokens`` but not
``max_completion_tokens``, refuses prompts over its context, and tells ``n_ctx`` on ``/props``.
The harness probes it once per endpoint and picks a mode it honours (``output_mode=auto``), says
once when an asked mode is rejected (a configuration error, never an outage per decision), keeps
prompts inside the context (Maze Escape stops with reason ``context``; the AGI Maze history is
trimmed), and records each of these once per game in the journal.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from llm_policies.backends import ContextLengthExceeded, ModelUnavailable, make_backend
from llm_policies.capabilities import ENDPOINTS
from llm_policies.settings import ModelSettings
from maze_envs.journal import Journal
from tests.llm.backend_support import request
from tests.llm.bench_support import (
    TUTORIAL,
    agimaze_experiment,
    decisions_of,
    escape_experiment,
    escape_model,
    escape_plans,
    module_server,
    run,
    server,
    stay_model,
    with_probes,
)
from tests.llm.servers import HttpError, LlamaCpp, LoopbackServer, RecordedRequest, Reply
from tests.llm.servers.llamacpp import prompt_tokens
from tests.llm.servers.protocols import render_reply

__all__ = ["module_server", "server"]  # the fixtures


@pytest.fixture(autouse=True)
def fresh_endpoints() -> Iterator[None]:
    # what the harness learnt about a server is kept for the process ("the run"); the tests
    # reuse one loopback port with different behaviours
    ENDPOINTS.clear()
    yield
    ENDPOINTS.clear()


def local(server: LoopbackServer, model: str = "smol", **options: Any) -> str:
    extra = "".join(f",{k}={v}" for k, v in options.items())
    return f"openai-chat:{model}:base_url={server.openai_base_url},local=true,retries=1{extra}"


def chat(server: LoopbackServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.protocol == "openai-chat"]


def probes(server: LoopbackServer) -> list[RecordedRequest]:
    return [r for r in chat(server) if r.body["messages"][-1]["content"] == "Say hello."]


def records(out: Path) -> list[dict[str, Any]]:
    with Journal(out / "games.sqlite", readonly=True) as journal:
        return [r for g in journal.game_ids() for r in decisions_of(journal, g)]


def notices(recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for r in recorded for n in r.get("notices", [])]


# --- the backend on a llama.cpp-like server ----------------------------------------------------


def complete(backend: Any, req: Any) -> Any:
    async def go() -> Any:
        try:
            return await backend.complete(req)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_json_object_mode_and_the_output_cap_a_local_server_reads(server: LoopbackServer) -> None:
    server.behave_like_llama_cpp()
    server.push(Reply(text='{"move": "N"}', output_tokens=400))
    settings = ModelSettings(base_url=server.openai_base_url, max_output_tokens=120)
    reply = complete(make_backend("openai-chat:smol", settings), request(settings, "json_object"))
    (sent,) = server.requests
    assert sent.body["response_format"] == {"type": "json_object"}
    # llama.cpp ignores max_completion_tokens; max_tokens is what it reads
    assert sent.body["max_tokens"] == 120 and "max_completion_tokens" not in sent.body
    assert reply.usage.output_tokens == 120  # the server honoured it


def test_openai_itself_still_gets_max_completion_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    seen: list[dict[str, Any]] = []

    def handler(sent: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(sent.content))
        return httpx2.Response(200, json=render_reply("openai-chat", Reply(text="{}"), seen[-1]))

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    settings = ModelSettings(base_url="https://api.openai.com/v1", max_output_tokens=77)
    backend = make_backend("openai-chat:gpt-4o-mini", settings, client=client)
    complete(backend, request(settings, "prompted"))
    assert seen[0]["max_completion_tokens"] == 77 and "max_tokens" not in seen[0]


def test_a_rejected_json_schema_is_one_request_not_five(server: LoopbackServer) -> None:
    server.behave_like_llama_cpp()
    settings = ModelSettings(base_url=server.openai_base_url, retries=4)
    with pytest.raises(ModelUnavailable) as caught:
        complete(make_backend("openai-chat:smol", settings), request(settings, "native"))
    assert len(server.requests) == 1 and caught.value.permanent
    assert "Input should be" in caught.value.message and "response_format" in caught.value.message


def test_a_prompt_over_the_context_is_a_context_error_not_an_outage(
    server: LoopbackServer,
) -> None:
    server.behave_like_llama_cpp(LlamaCpp(n_ctx=256))
    settings = ModelSettings(base_url=server.openai_base_url, retries=4)
    long = request(settings, "prompted", user="the corridor bends left " * 200)
    with pytest.raises(ContextLengthExceeded) as caught:
        complete(make_backend("openai-chat:smol", settings), long)
    assert caught.value.window == 256 and caught.value.kind == "context"
    assert len(server.requests) == 1  # never retried


def test_anthropic_history_gets_a_cache_breakpoint_on_its_last_message(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from llm_policies.backends.base import ChatMessage

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    server.push(Reply(text="{}"), Reply(text="{}"))
    settings = ModelSettings(base_url=server.url, max_output_tokens=50)
    history = (ChatMessage("user", "step 0"), ChatMessage("assistant", '{"action": "up"}'))
    plain = request(settings, "prompted", history=history)
    backend = make_backend("anthropic:claude-sonnet-5-5", settings)

    async def go() -> None:
        await backend.complete(plain)
        await backend.complete(replace(plain, cache_history=True))
        await backend.aclose()

    asyncio.run(go())
    first, second = (r.body for r in server.requests)
    assert "cache_control" in json.dumps(first["system"])  # the stable system prompt
    assert "cache_control" not in json.dumps(first["messages"])
    last = second["messages"][-1]["content"]
    assert last[-1]["cache_control"]["type"] == "ephemeral"  # the history up to here, next time


# --- through the runner --------------------------------------------------------------------


def test_auto_picks_the_mode_a_llama_cpp_server_honours_once_per_endpoint(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp()
    experiment = escape_experiment(local(server), turns=4, seeds="0-1")
    server.respond_with(with_probes(escape_model(escape_plans(experiment), lambda t: 0)))
    result = run(experiment, tmp_path / "run", concurrency=1)
    assert result.verified_ok
    # probed once for the run: native (refused by the server), then the schema as a grammar
    # (honoured: only the one value the probe's schema allows came back)
    sent = [p.body["response_format"] for p in probes(server)]
    assert [f["type"] for f in sent] == ["json_schema", "json_object"]
    assert sent[1]["schema"]["properties"]["answer"]["enum"] == ["grammar-ok"]
    played = [r for r in chat(server) if r not in probes(server)]
    assert played and all(r.body["response_format"]["type"] == "json_object" for r in played)
    assert all(list(r.body["response_format"]["schema"]["properties"]) for r in played)
    assert all("tools" not in r.body for r in played)
    recorded = records(tmp_path / "run")
    assert all(r["status"] == "ok" and r["output_mode"] == "grammar" for r in recorded)
    endpoint = [n for n in notices(recorded) if n["kind"] == "endpoint"]
    assert len(endpoint) == 2  # once per game, not once per agent or decision
    assert endpoint[0]["auto"]["mode"] == "grammar"
    assert [p["status"] for p in endpoint[0]["auto"]["probes"]] == ["rejected", "honoured"]
    assert endpoint[0]["context_window"] == 2048 and endpoint[0]["context_source"] == "props"
    firsts = [r["harness"] for r in recorded if "harness" in r]
    assert {h["output_mode"] for h in firsts} == {"auto"}
    assert {h["output_mode_chosen"] for h in firsts} == {"grammar"}


def test_auto_takes_json_object_from_a_server_that_ignores_the_grammar(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # a server that takes json_object but not the schema beside it (a plain JSON mode)
    server.push(HttpError(400, message="response_format json_schema is not supported"))
    server.respond_with(with_probes(stay_model))
    run(escape_experiment(local(server), turns=2), tmp_path / "run")
    recorded = records(tmp_path / "run")
    assert {r["output_mode"] for r in recorded} == {"json_object"}
    (endpoint,) = [n for n in notices(recorded) if n["kind"] == "endpoint"]
    assert [p["status"] for p in endpoint["auto"]["probes"]] == ["rejected", "ignored", "honoured"]


def test_a_mode_the_server_rejects_is_one_configuration_error_not_outages(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp()
    experiment = escape_experiment(local(server, output_mode="native"), seeds="0-1")
    server.respond_with(with_probes(stay_model))
    result = run(experiment, tmp_path / "run", concurrency=1)
    assert len(chat(server)) == 1  # one probe; no game request, no retry, no second game call
    for row in result.rows:
        assert row["status"] == "stopped" and row["turns"] == 1 and row["outages"] == 0
        assert "config: the server rejects output_mode='native'" in row["stop_reason"]
        assert "output_mode=auto" in row["stop_reason"]  # what to change
    assert result.verified_ok


def test_a_server_that_ignores_tools_is_said_once_per_game(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp()
    experiment = escape_experiment(local(server, output_mode="tool"), turns=3)
    server.respond_with(with_probes(stay_model))
    run(experiment, tmp_path / "run")
    (ignored,) = [n for n in notices(records(tmp_path / "run")) if n["kind"] == "mode_ignored"]
    assert ignored["mode"] == "tool" and "ignores tool_choice" in ignored["detail"]


@pytest.mark.parametrize("props", [True, False], ids=["window-known", "window-learnt"])
def test_a_maze_escape_prompt_that_cannot_fit_stops_the_game_at_the_first_turn(
    server: LoopbackServer, tmp_path: Path, props: bool
) -> None:
    server.behave_like_llama_cpp(LlamaCpp(n_ctx=700, props=props, tokenizer=None))
    experiment = escape_experiment(local(server, max_output_tokens=100), turns=30)
    server.respond_with(with_probes(stay_model))
    result = run(experiment, tmp_path / "run")
    (row,) = result.rows
    assert row["status"] == "stopped" and row["turns"] == 1 and row["outages"] == 0
    assert ": context: " in row["stop_reason"]
    recorded = records(tmp_path / "run")
    assert {r["fallback_reason"] for r in recorded} == {"context"}
    game_requests = [r for r in chat(server) if r not in probes(server)]
    if props:  # the window was known: nothing was sent that could not fit
        assert game_requests == []
    else:  # learnt from the server's refusal: one request per agent at most
        assert len(game_requests) <= 3
        assert any(n["kind"] == "context_learned" for n in notices(recorded))
    assert result.verified_ok


def test_the_agimaze_history_is_trimmed_to_fit_the_context(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp(LlamaCpp(n_ctx=1600))
    moves = iter(["up", "down"] * 200)
    server.respond_with(
        with_probes(lambda r: Reply(text=json.dumps({"action": next(moves)}), output_tokens=9))
    )
    result = run(agimaze_experiment(local(server, max_output_tokens=60)), tmp_path / "run")
    (row,) = result.rows
    assert row["status"] == "ok" and row["fallbacks"] == row["outages"] == 0
    assert row["decisions"] > 20
    # every request fitted with room for the reply: the server refused none
    played = [r for r in chat(server) if r not in probes(server)]
    assert len(played) == row["decisions"]
    assert all(prompt_tokens(r.body) + r.body["max_tokens"] <= 1600 for r in played)
    recorded = records(tmp_path / "run")
    trims = [r["history_trim"] for r in recorded if "history_trim" in r]
    assert trims and all(t["context_window"] == 1600 for t in trims)
    assert row["history_trims"] == len(trims)  # what the model saw, in the row and the tables
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "| history trims | cap breaches |" in summary
    assert len([n for n in notices(recorded) if n["kind"] == "history_trim"]) == 1
    assert recorded[-1]["history_left_out"] > 0
    assert result.verified_ok


def test_a_reply_over_the_output_cap_is_recorded_as_a_cap_breach(
    server: LoopbackServer, tmp_path: Path
) -> None:
    # a server that ignores the cap (the loopback without llama.cpp behaviour)
    def long_reply(sent: RecordedRequest) -> Reply:
        return Reply(text=stay_model(sent).text, output_tokens=1184)

    spec = local(server, max_output_tokens=120, output_mode="prompted")
    server.respond_with(long_reply)
    result = run(escape_experiment(spec, turns=2), tmp_path / "run")
    recorded = records(tmp_path / "run")
    assert all(r["cap_breaches"] == 1 for r in recorded)
    assert result.rows[0]["cap_breaches"] == len(recorded)
    (group,) = result.summary["escape"]
    assert group["cap_breaches"] == len(recorded)
    assert "cap breaches" in (tmp_path / "run" / "summary.md").read_text()
    assert recorded[0]["attempts"][0]["cap_breach"] == {"output_tokens": 1184, "cap": 120}
    assert len([n for n in notices(recorded) if n["kind"] == "cap_breach"]) == 1


def test_the_ollama_context_warning_is_in_the_journal_once_per_game(
    server: LoopbackServer, tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    def full(sent: RecordedRequest) -> Reply:
        reply = stay_model(sent)
        return Reply(text=reply.text, input_tokens=8000, output_tokens=192)

    server.respond_with(full)
    spec = f"ollama:qwen3:8b:base_url={server.url},retries=0"
    run(escape_experiment(spec, turns=3), tmp_path / "run")
    warned = [n for n in notices(records(tmp_path / "run")) if n["kind"] == "context_warning"]
    assert len(warned) == 1 and warned[0]["num_ctx"] == 8192
    assert not [w for w in recwarn if "num_ctx" in str(w.message)]  # nothing on stderr


def test_agimaze_tables_carry_the_usage_columns_and_the_cache_read_share(
    server: LoopbackServer, tmp_path: Path
) -> None:
    from tests.llm.bench_support import agimaze_plan

    plan = agimaze_plan(TUTORIAL)
    server.extend(
        Reply(text=json.dumps({"action": a}), input_tokens=200, cache_read_tokens=150) for a in plan
    )
    spec = f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},output_mode=prompted"
    result = run(agimaze_experiment(spec), tmp_path / "run")
    (row,) = result.rows
    assert row["cache_read_share"] == pytest.approx(0.75)
    summary = (tmp_path / "run" / "summary.md").read_text()
    for column in ("tokens in/out", "cost / solved", "fallbacks", "outages", "quirks"):
        assert column in summary.split("## AGI Maze")[1]
    assert f"{len(plan) * 200:,}/" in summary


def test_a_custom_field_order_survives_the_command_line(
    server: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from maze_envs.cli import main as cli_main

    with pytest.raises(SystemExit):
        cli_main(["bench", "--help"])
    assert "order=radio|check|move|notebook" in " ".join(capsys.readouterr().out.split())
    server.respond_with(stay_model)
    spec = (
        f"openai-chat:gpt-4o-mini:base_url={server.openai_base_url},"
        "order=radio|check|move|notebook,check=optional,output_mode=tool"
    )
    out = tmp_path / "run"
    args = ["bench", "--env", "escape", "--size", "5", "--max-turns", "2", "--policy", spec]
    assert cli_main([*args, "--out", str(out), "--quiet", "--no-plots"]) == 0
    sent = chat(server)[0].body["tools"][0]["function"]["parameters"]
    assert list(sent["properties"]) == ["radio", "check", "move", "notebook"]
    first = next(r for r in records(out) if "harness" in r)
    assert first["harness"]["order"] == ["radio", "check", "move", "notebook"]


def test_a_read_only_cache_replays_an_auto_run_without_asking_the_server(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.behave_like_llama_cpp()
    cache = tmp_path / "replies.sqlite"
    spec = local(server, cache=str(cache))
    experiment = escape_experiment(spec, turns=3)
    server.respond_with(with_probes(stay_model))
    first = run(experiment, tmp_path / "first").rows[0]
    assert first["status"] == "ok" and first["requests"] == 9
    ENDPOINTS.clear()  # a new run, which knows nothing of the server
    server.reset()  # the server is gone: it answers nothing any more
    replay = escape_experiment(local(server, cache=str(cache), cache_mode="read_only"), turns=3)
    again = run(replay, tmp_path / "again").rows[0]
    assert server.requests == []
    assert again["status"] == "ok" and again["requests"] == 0 and again["outages"] == 0
    recorded = records(tmp_path / "again")
    assert {r["output_mode"] for r in recorded} == {"grammar"}
    (endpoint,) = [n for n in notices(recorded) if n["kind"] == "endpoint"]
    assert [p["status"] for p in endpoint["auto"]["probes"]] == ["uncached", "honoured"]
