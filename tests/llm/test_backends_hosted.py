"""Hosted backends (pydantic-ai) on their real client paths against the loopback servers.

OpenAI Chat Completions (``openai-chat:``), OpenAI Responses (``openai:``) and Anthropic Messages
(``anthropic:``), each in every output mode, with every quirk passed through raw, and the
failures pydantic-ai leaves to us: retries of 429/5xx/timeouts, stalled and unreadable bodies.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from llm_policies.backends import (
    ModelTimeout,
    ModelUnavailable,
    make_backend,
)
from llm_policies.backends.pydantic_ai import PydanticAIBackend
from llm_policies.settings import ModelSettings
from tests.llm.backend_support import SCHEMA, SYSTEM, Sleeps, module_server, request, server
from tests.llm.servers import (
    QUIRKS,
    Hang,
    HttpError,
    LoopbackServer,
    Reply,
    Stall,
    malformed_json,
    non_object_json,
)
from tests.llm.servers.quirks import quirk_reply

__all__ = ["module_server", "server"]  # fixtures used below

OPENAI_KEY = "sk-test-openai-SECRET-1234567890"
ANTHROPIC_KEY = "sk-ant-test-SECRET-0987654321"
PROTOCOLS = {
    "openai-chat:gpt-4o-mini": "openai-chat",
    "openai:gpt-4o-mini": "openai-responses",
    "anthropic:claude-sonnet-4-6": "anthropic",
}
SPECS = list(PROTOCOLS)


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def base_url(server: LoopbackServer, spec: str) -> str:
    return server.url if spec.startswith("anthropic") else server.openai_base_url


def settings_for(server: LoopbackServer, spec: str, **kw: Any) -> ModelSettings:
    kw.setdefault("max_output_tokens", 300)
    return ModelSettings(base_url=base_url(server, spec), **kw)


def complete(backend: Any, req: Any) -> Any:
    async def go() -> Any:
        try:
            return await backend.complete(req)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def tools_schema(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    tool = body["tools"][0]
    if protocol == "openai-chat":
        return tool["function"]["parameters"]
    if protocol == "openai-responses":
        return tool["parameters"]
    return tool["input_schema"]


def native_schema(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    if protocol == "openai-chat":
        return body["response_format"]["json_schema"]["schema"]
    if protocol == "openai-responses":
        return body["text"]["format"]["schema"]
    return body["output_config"]["format"]["schema"]


# --- one good reply in each output mode, per protocol --------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_tool_mode_sends_a_forced_tool_and_returns_the_raw_arguments(
    server: LoopbackServer, spec: str
) -> None:
    protocol = PROTOCOLS[spec]
    raw = '{"check": "N open, came from S", "move": "N", "radio": null}'
    server.push(Reply(tool_arguments=raw))
    settings = settings_for(server, spec, temperature=0.3)
    reply = complete(make_backend(spec, settings), request(settings, "tool"))
    assert reply.tool_arguments == raw
    assert reply.text is None
    assert reply.cached is False and reply.retries == ()
    (sent,) = server.requests
    assert sent.protocol == protocol
    body = sent.body
    schema = tools_schema(protocol, body)
    # the schema's key order (check before move) is what the model sees
    assert list(schema["properties"]) == ["check", "move", "radio"]
    assert schema["properties"]["check"]["anyOf"] == SCHEMA["properties"]["check"]["anyOf"]
    if protocol == "anthropic":
        # pydantic-ai leaves temperature out of Anthropic requests (the API version sent rejects
        # it); the backend says so, and that is what a game records
        assert "temperature" not in body
        assert "temperature" in make_backend(spec, settings).dropped_settings(settings)
    else:
        assert body["temperature"] == 0.3
    if protocol == "openai-chat":
        assert body["tool_choice"] == "required"
        assert body["tools"][0]["function"]["name"] == "maze_action"
        # a server that is not OpenAI gets the cap in the field llama.cpp & co. read
        assert body["max_tokens"] == 300 and "max_completion_tokens" not in body
    elif protocol == "openai-responses":
        assert body["tool_choice"] == "required"
        assert body["max_output_tokens"] == 300
    else:
        assert body["tool_choice"]["type"] in ("any", "tool")
        assert body["max_tokens"] == 300


@pytest.mark.parametrize("spec", SPECS)
def test_native_mode_sends_the_json_schema_and_returns_the_text(
    server: LoopbackServer, spec: str
) -> None:
    protocol = PROTOCOLS[spec]
    raw = '{"check": null, "move": "E", "radio": "B: at the piano"}'
    server.push(Reply(text=raw))
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings), request(settings, "native"))
    assert reply.text == raw and reply.tool_arguments is None
    body = server.requests[0].body
    assert "tools" not in body
    assert list(native_schema(protocol, body)["properties"]) == ["check", "move", "radio"]


@pytest.mark.parametrize("spec", SPECS)
def test_prompted_mode_sends_plain_text_and_returns_it(server: LoopbackServer, spec: str) -> None:
    raw = 'Sure! {"move": "W"}'
    server.push(Reply(text=raw))
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings), request(settings, "prompted"))
    assert reply.text == raw
    body = server.requests[0].body
    for key in ("tools", "response_format", "output_config"):
        assert key not in body
    assert "format" not in body.get("text", {})


@pytest.mark.parametrize("spec", SPECS)
def test_system_prompt_and_history_go_where_each_protocol_expects(
    server: LoopbackServer, spec: str
) -> None:
    from llm_policies.backends import ChatMessage

    protocol = PROTOCOLS[spec]
    server.push(Reply(text="ok"))
    settings = settings_for(server, spec)
    history = (ChatMessage("user", "turn 1"), ChatMessage("assistant", '{"move": "N"}'))
    complete(make_backend(spec, settings), request(settings, "prompted", history=history))
    body = server.requests[0].body
    if protocol == "openai-chat":
        assert body["messages"][0] == {"role": "system", "content": SYSTEM}
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
    elif protocol == "openai-responses":
        assert body["instructions"] == SYSTEM
        assert [m["role"] for m in body["input"]] == ["user", "assistant", "user"]
    else:
        # ours is the last system block (pydantic-ai may put a preface of its own before it)
        block = body["system"][-1]
        assert block["text"] == SYSTEM
        assert [b["text"] for b in body["system"]].count(SYSTEM) == 1
        # the Anthropic cache breakpoint on the stable system prompt
        assert block["cache_control"]["type"] == "ephemeral"
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


def test_a_game_records_the_settings_its_requests_go_out_without(server: LoopbackServer) -> None:
    from llm_policies.registry import make_llm_policy

    # Anthropic: pydantic-ai drops the temperature; the game says so and why, and keeps what was
    # asked for (a replay asks the same)
    claude = make_llm_policy(
        "anthropic:claude-sonnet-5-5", "escape", temperature=0.2, base_url=server.url
    )
    harness = claude.harness()
    assert harness["temperature"] is None and harness["settings"]["temperature"] == 0.2
    assert "ignored" in harness["dropped_settings"]["temperature"]
    # Chat Completions carries it: nothing dropped, the temperature recorded is the one sent
    chat = make_llm_policy(
        "openai-chat:gpt-4o-mini", "escape", temperature=0.2, base_url=server.openai_base_url
    )
    assert chat.harness()["temperature"] == 0.2 and chat.harness()["dropped_settings"] == {}
    # and what the policy reports is what reached the wire
    server.push(Reply(text="x"), Reply(text="y"))
    for spec, policy in (("anthropic:claude-sonnet-5-5", claude), ("openai-chat:x", chat)):
        settings = policy.settings
        complete(make_backend(spec, settings), request(settings, "prompted"))
    anthropic_body, chat_body = (sent.body for sent in server.requests)
    assert "temperature" not in anthropic_body and chat_body["temperature"] == 0.2
    assert not server.requests[0].body.get("seed")


def test_openai_chat_sends_the_seed(server: LoopbackServer) -> None:
    spec = "openai-chat:gpt-4o-mini"
    server.push(Reply(text="x"))
    settings = settings_for(server, spec, seed=42, temperature=0.0)
    complete(make_backend(spec, settings), request(settings, "prompted"))
    body = server.requests[0].body
    assert body["seed"] == 42 and body["temperature"] == 0.0


def test_reasoning_effort_reaches_a_reasoning_model(server: LoopbackServer) -> None:
    spec = "openai:gpt-5.6-terra"
    server.push(Reply(text="x"))
    settings = ModelSettings(base_url=server.openai_base_url, reasoning_effort="low")
    complete(make_backend(spec, settings), request(settings, "prompted"))
    assert server.requests[0].body["reasoning"]["effort"] == "low"


def test_anthropic_without_an_output_cap_is_streamed_and_still_read_whole(
    server: LoopbackServer,
) -> None:
    spec = "anthropic:claude-sonnet-5-5"
    raw = '{"check": "N open", "move": "N", "radio": null}'
    server.push(Reply(tool_arguments=raw, input_tokens=900, cache_read_tokens=800))
    settings = ModelSettings(base_url=server.url)
    reply = complete(make_backend(spec, settings), request(settings, "tool"))
    assert server.requests[0].body["stream"] is True  # pydantic-ai streams a large max_tokens
    assert json.loads(reply.tool_arguments) == json.loads(raw)
    assert list(json.loads(reply.tool_arguments)) == ["check", "move", "radio"]
    assert reply.usage.input_tokens == 900 and reply.usage.cache_read_tokens == 800


# --- usage and cost ------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_usage_counts_every_input_token_and_cache_reads_and_writes(
    server: LoopbackServer, spec: str
) -> None:
    server.push(
        Reply(
            tool_arguments='{"move": "S"}',
            input_tokens=1000,
            output_tokens=50,
            cache_read_tokens=600,
            cache_write_tokens=100,
        )
    )
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings), request(settings, "tool"))
    usage = reply.usage
    assert (usage.input_tokens, usage.output_tokens) == (1000, 50)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (600, 100)
    assert usage.requests == 1 and usage.latency_s > 0 and reply.latency_s == usage.latency_s
    assert usage.cost_status == "priced"
    if spec.startswith("anthropic"):
        # claude-sonnet-4-6: $3 input, $0.30 cache read, $3.75 cache write, $15 output per MTok
        expected = (300 * 3 + 600 * 0.3 + 100 * 3.75 + 50 * 15) / 1e6
    else:
        # gpt-4o-mini: $0.15 input (cache writes at the input price), $0.075 cached, $0.60 output
        expected = (300 * 0.15 + 600 * 0.075 + 100 * 0.15 + 50 * 0.6) / 1e6
    assert usage.cost_usd == pytest.approx(expected, rel=1e-9)


def test_a_server_declared_local_costs_nothing(server: LoopbackServer) -> None:
    spec = "openai-chat:Qwen/Qwen3-8B"
    server.push(Reply(text="x"), Reply(text="y"))
    settings = settings_for(server, spec)
    assert complete(make_backend(spec, settings), request(settings)).usage.cost_status == "unknown"
    local = complete(make_backend(spec, settings, local=True), request(settings))
    assert (local.usage.cost_usd, local.usage.cost_status) == (0.0, "local")


# --- quirks pass through raw ---------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("quirk", sorted(QUIRKS))
def test_every_quirk_reaches_the_harness_untouched(
    server: LoopbackServer, spec: str, quirk: str
) -> None:
    objects_only = spec.startswith("anthropic")
    scripted = quirk_reply(quirk, tool=True, objects_only=objects_only)
    server.push(scripted)
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings), request(settings, "tool"))
    if scripted.text is not None:
        assert reply.text == scripted.text and reply.tool_arguments is None
    elif objects_only:  # Anthropic carries tool input as an object: same keys, same order
        assert reply.tool_arguments is not None
        assert list(json.loads(reply.tool_arguments).items()) == list(
            json.loads(scripted.tool_arguments or "").items()
        )
    else:
        assert reply.tool_arguments == scripted.tool_arguments


# --- failures ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_429_is_retried_after_the_time_retry_after_asks(server: LoopbackServer, spec: str) -> None:
    server.push(HttpError(429, retry_after=3), Reply(tool_arguments='{"move": "N"}'))
    sleeps = Sleeps()
    settings = settings_for(server, spec)
    backend = make_backend(spec, settings, retry=sleeps.policy())
    reply = complete(backend, request(settings))
    assert reply.tool_arguments == '{"move": "N"}'
    assert len(server.requests) == 2
    assert sleeps.waits == [3.0]
    (failed,) = reply.retries
    assert (failed.kind, failed.status, failed.waited_s) == ("rate_limit", 429, 3.0)


@pytest.mark.parametrize("status", [500, 502, 503, 529])
def test_server_errors_are_retried_with_growing_jittered_waits(
    server: LoopbackServer, status: int
) -> None:
    spec = "openai-chat:gpt-4o-mini"
    # the same body twice: still transient (only a validation error body is permanent)
    server.push(HttpError(status), HttpError(status), Reply(text="ok"))
    sleeps = Sleeps()
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings, retry=sleeps.policy()), request(settings))
    assert reply.text == "ok" and len(server.requests) == 3
    assert [a.kind for a in reply.retries] == ["server", "server"]
    assert [a.status for a in reply.retries] == [status, status]
    # base 0.5 s doubling, each scaled by a jitter factor in [0.5, 1)
    assert 0.25 <= sleeps.waits[0] < 0.5 and 0.5 <= sleeps.waits[1] < 1.0


def test_the_jitter_is_seeded(server: LoopbackServer) -> None:
    spec = "openai-chat:gpt-4o-mini"
    waits = []
    for _ in range(2):
        server.push(HttpError(503), HttpError(503), Reply(text="ok"))
        sleeps = Sleeps()
        settings = settings_for(server, spec)
        complete(make_backend(spec, settings, retry=sleeps.policy(seed=3)), request(settings))
        waits.append(sleeps.waits)
    assert waits[0] == waits[1] and len(waits[0]) == 2


@pytest.mark.parametrize("spec", SPECS)
def test_a_call_past_its_deadline_is_retried(server: LoopbackServer, spec: str) -> None:
    # a deadline only the hang reaches: the second reply must fit in it on a loaded machine
    server.push(Hang(60), Reply(text="late but fine"))
    settings = settings_for(server, spec, timeout_s=3)
    reply = complete(make_backend(spec, settings, retry=Sleeps().policy()), request(settings))
    assert reply.text == "late but fine"
    assert [a.kind for a in reply.retries] == ["timeout"]


@pytest.mark.parametrize("spec", SPECS)
def test_a_reply_that_stalls_mid_body_is_cut_at_the_deadline_and_retried(
    server: LoopbackServer, spec: str
) -> None:
    server.push(Stall(60), Reply(text="second try"))
    settings = settings_for(server, spec, timeout_s=3)
    reply = complete(make_backend(spec, settings, retry=Sleeps().policy()), request(settings))
    assert reply.text == "second try"
    assert [a.kind for a in reply.retries] == ["timeout"]


def test_a_stream_that_stalls_is_cut_at_the_deadline(server: LoopbackServer) -> None:
    spec = "anthropic:claude-sonnet-5-5"
    server.push(Stall(60, Reply(text="never whole")), Reply(text="whole"))
    settings = ModelSettings(base_url=server.url, timeout_s=3)  # no cap: streamed
    reply = complete(make_backend(spec, settings, retry=Sleeps().policy()), request(settings))
    assert server.requests[0].body["stream"] is True
    assert reply.text == "whole" and [a.kind for a in reply.retries] == ["timeout"]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("bad", [malformed_json, non_object_json], ids=["malformed", "non_object"])
def test_unreadable_bodies_are_protocol_errors_and_retried(
    server: LoopbackServer, spec: str, bad: Any
) -> None:
    server.push(bad(), Reply(text="readable"))
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings, retry=Sleeps().policy()), request(settings))
    assert reply.text == "readable"
    assert [a.kind for a in reply.retries] == ["protocol"]


@pytest.mark.parametrize("spec", SPECS)
def test_persistent_failure_becomes_model_unavailable_after_the_budget(
    server: LoopbackServer, spec: str
) -> None:
    server.extend([HttpError(503)] * 3)
    sleeps = Sleeps()
    settings = settings_for(server, spec, retries=2)
    backend = make_backend(spec, settings, retry=sleeps.policy())
    with pytest.raises(ModelUnavailable) as caught:
        complete(backend, request(settings))
    assert len(server.requests) == 3 and len(sleeps.waits) == 2
    error = caught.value
    assert error.kind == "server" and error.status == 503 and len(error.attempts) == 3
    assert spec in str(error) and "3 attempt" in str(error)
    assert error.to_json()["attempts"][0]["status"] == 503


def test_persistent_timeouts_become_model_timeout(server: LoopbackServer) -> None:
    spec = "openai-chat:gpt-4o-mini"
    server.extend([Hang(5), Hang(5)])
    settings = settings_for(server, spec, timeout_s=0.2, retries=1)
    with pytest.raises(ModelTimeout) as caught:
        complete(make_backend(spec, settings, retry=Sleeps().policy()), request(settings))
    assert caught.value.kind == "timeout" and isinstance(caught.value, ModelUnavailable)


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_refused_request_is_not_retried(server: LoopbackServer, status: int) -> None:
    spec = "openai-chat:gpt-4o-mini"
    server.push(HttpError(status, message="no such model"))
    settings = settings_for(server, spec)
    with pytest.raises(ModelUnavailable) as caught:
        complete(make_backend(spec, settings, retry=Sleeps().policy()), request(settings))
    assert caught.value.kind == "refused" and caught.value.status == status
    assert len(server.requests) == 1


def test_a_retry_after_beyond_the_limit_ends_the_call_at_once(server: LoopbackServer) -> None:
    spec = "openai-chat:gpt-4o-mini"
    server.push(HttpError(429, retry_after=3600))
    sleeps = Sleeps()
    settings = settings_for(server, spec)
    with pytest.raises(ModelUnavailable, match="3600"):
        complete(make_backend(spec, settings, retry=sleeps.policy()), request(settings))
    assert sleeps.waits == [] and len(server.requests) == 1


def test_no_retries_means_one_attempt(server: LoopbackServer) -> None:
    spec = "openai:gpt-4o-mini"
    server.push(HttpError(500))
    settings = settings_for(server, spec, retries=0)
    with pytest.raises(ModelUnavailable):
        complete(make_backend(spec, settings), request(settings))
    assert len(server.requests) == 1


# --- keys, base URLs, injected providers and clients ---------------------------------------


@pytest.mark.parametrize("spec", SPECS)
def test_the_api_key_is_sent_but_never_recorded(server: LoopbackServer, spec: str) -> None:
    key = ANTHROPIC_KEY if spec.startswith("anthropic") else OPENAI_KEY
    server.push(Reply(tool_arguments='{"move": "N"}'))
    settings = settings_for(server, spec)
    reply = complete(make_backend(spec, settings), request(settings))
    headers = server.requests[0].headers
    assert key in headers.get("authorization", "") + headers.get("x-api-key", "")
    recorded = json.dumps(reply.raw) + repr(reply)
    assert key not in recorded and "SECRET" not in recorded


def test_openai_base_url_environment_variable(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    server.push(Reply(text="via env"))
    settings = ModelSettings()
    reply = complete(make_backend("openai-chat:gpt-4o-mini", settings), request(settings))
    assert reply.text == "via env" and server.requests[0].path == "/v1/chat/completions"


def test_anthropic_base_url_environment_variable(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.push(Reply(text="via env"))
    settings = ModelSettings(max_output_tokens=100)
    reply = complete(make_backend("anthropic:claude-haiku-4-5", settings), request(settings))
    assert reply.text == "via env" and server.requests[0].path == "/v1/messages"


def test_openrouter_redirected_by_the_base_url_option(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-SECRET")
    server.push(Reply(tool_arguments='{"move": "E"}', input_tokens=1000, output_tokens=100))
    spec = "openrouter:anthropic/claude-sonnet-5.5"
    settings = ModelSettings(base_url=server.openai_base_url, max_output_tokens=100)
    reply = complete(make_backend(spec, settings), request(settings))
    assert reply.tool_arguments == '{"move": "E"}'
    sent = server.requests[0]
    assert (
        sent.path == "/v1/chat/completions" and "sk-or-test-SECRET" in sent.headers["authorization"]
    )
    assert sent.body["model"] == "anthropic/claude-sonnet-5.5"
    # an Anthropic model through OpenRouter gets the cache breakpoint on the system prompt too
    assert "cache_control" in json.dumps(sent.body["messages"][0])
    assert reply.usage.cost_status == "priced" and reply.usage.cost_usd == pytest.approx(
        (1000 * 2 + 100 * 10) / 1e6
    )


def test_an_injected_provider_is_used(server: LoopbackServer) -> None:
    from openai import AsyncOpenAI
    from pydantic_ai.providers.openrouter import OpenRouterProvider

    provider = OpenRouterProvider(
        openai_client=AsyncOpenAI(base_url=server.openai_base_url, api_key="sk-or-inject")
    )
    server.push(Reply(text="through the provider"))
    settings = ModelSettings()
    backend = make_backend("openrouter:openai/gpt-4o-mini", settings, provider=provider)
    assert complete(backend, request(settings)).text == "through the provider"
    assert server.requests[0].headers["authorization"] == "Bearer sk-or-inject"


def test_an_injected_http_client_is_used(server: LoopbackServer) -> None:
    import httpx2

    seen: list[str] = []

    async def hook(req: Any) -> None:
        seen.append(str(req.url))

    client = httpx2.AsyncClient(event_hooks={"request": [hook]})
    server.push(Reply(text="through the client"))
    settings = ModelSettings(base_url=server.openai_base_url)
    backend = make_backend("openai-chat:gpt-4o-mini", settings, client=client)
    assert complete(backend, request(settings)).text == "through the client"
    assert seen == [f"{server.openai_base_url}/chat/completions"]


def test_an_injected_sdk_client_is_used(server: LoopbackServer) -> None:
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(base_url=server.url, api_key="sk-ant-injected")
    server.push(Reply(text="through the sdk"))
    settings = ModelSettings(max_output_tokens=50)
    backend = make_backend("anthropic:claude-haiku-4-5", settings, client=client)
    assert complete(backend, request(settings)).text == "through the sdk"


def test_bad_specs_and_clients_get_clear_errors() -> None:
    settings = ModelSettings(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="unknown model provider prefix 'nope'"):
        make_backend("nope:model", settings)
    with pytest.raises(ValueError, match="must look like '<provider>:<model>'"):
        make_backend("gpt-4o", settings)
    with pytest.raises(TypeError, match="client for openai-chat"):
        make_backend("openai-chat:gpt-4o-mini", settings, client=object())
    with pytest.raises(ValueError, match="either provider= or client="):
        make_backend("openai-chat:gpt-4o-mini", settings, provider=object())


def test_a_missing_key_is_reported_when_the_backend_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(Exception, match="ANTHROPIC_API_KEY"):
        make_backend("anthropic:claude-sonnet-5-5", ModelSettings())


# --- concurrency and event loops -----------------------------------------------------------


def test_concurrent_calls_share_one_backend(server: LoopbackServer) -> None:
    spec = "openai-chat:gpt-4o-mini"
    server.respond_with(lambda r: Reply(text=r.body["messages"][-1]["content"], delay_s=0.05))
    settings = settings_for(server, spec)
    backend = make_backend(spec, settings)

    async def go() -> list[Any]:
        try:
            calls = [
                backend.complete(request(settings, "prompted", user=f"u{i}")) for i in range(24)
            ]
            return await asyncio.gather(*calls)
        finally:
            await backend.aclose()

    replies = asyncio.run(go())
    assert [r.text for r in replies] == [f"u{i}" for i in range(24)]
    assert len(server.requests) == 24


def test_a_fresh_event_loop_per_turn_works(server: LoopbackServer) -> None:
    # what AsyncPolicyBase.act does: asyncio.run per decision
    spec = "openai-chat:gpt-4o-mini"
    server.push(Reply(text="turn 1"), Reply(text="turn 2"), Reply(text="turn 3"))
    settings = settings_for(server, spec)
    backend = make_backend(spec, settings)
    texts = [asyncio.run(backend.complete(request(settings))).text for _ in range(3)]
    asyncio.run(backend.aclose())
    assert texts == ["turn 1", "turn 2", "turn 3"]


# --- pydantic-ai's own test models ---------------------------------------------------------


def test_function_model_sees_the_request_and_its_reply_comes_back_raw() -> None:
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: dict[str, Any] = {}

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen["tools"] = [t.name for t in info.output_tools]
        seen["instructions"] = info.instructions
        seen["schema"] = info.output_tools[0].parameters_json_schema
        return ModelResponse(parts=[ToolCallPart("maze_action", '{"move": "north"}')])

    settings = ModelSettings()
    backend = PydanticAIBackend("function:test", settings, FunctionModel(model), local=True)
    reply = complete(backend, request(settings, "tool"))
    assert reply.tool_arguments == '{"move": "north"}'
    assert seen["tools"] == ["maze_action"] and seen["instructions"] == SYSTEM
    assert list(seen["schema"]["properties"]) == ["check", "move", "radio"]
    assert reply.usage.cost_status == "local"


@pytest.mark.parametrize("spec", ["openai-chat:local-model", "anthropic:claude-haiku-4-5"])
def test_a_server_that_needs_no_key_gets_a_placeholder(
    server: LoopbackServer, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    server.push(Reply(text="no key needed"))
    settings = settings_for(server, spec)
    assert complete(make_backend(spec, settings), request(settings)).text == "no key needed"
    headers = server.requests[0].headers
    assert "api-key-not-set" in headers.get("authorization", "") + headers.get("x-api-key", "")
