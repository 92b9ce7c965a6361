"""The Ollama backend on the official client's path against the loopback ``/api/chat``."""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import ollama
import pytest

from llm_policies.backends import ModelTimeout, ModelUnavailable, check_output_mode, make_backend
from llm_policies.backends.ollama import OllamaBackend
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

SPEC = "ollama:qwen3:8b"


@pytest.fixture(autouse=True)
def no_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)


def complete(backend: Any, req: Any) -> Any:
    async def go() -> Any:
        try:
            return await backend.complete(req)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_native_mode_sends_the_whole_schema_in_format(server: LoopbackServer) -> None:
    raw = '{"check": "N open", "move": "N", "radio": null}'
    server.push(Reply(text=raw, input_tokens=700, output_tokens=30))
    settings = ModelSettings(base_url=server.url, temperature=0.2, seed=11, max_output_tokens=200)
    reply = complete(make_backend(SPEC, settings), request(settings, "native"))
    assert reply.text == raw and reply.tool_arguments is None
    (sent,) = server.requests
    assert sent.path == "/api/chat"
    body = sent.body
    assert body["model"] == "qwen3:8b"
    # the schema arrives whole (anyOf included) and in its key order
    assert body["format"] == SCHEMA
    assert list(body["format"]["properties"]) == ["check", "move", "radio"]
    assert not body.get("tools")  # the client always sends a (here empty) tool list
    assert body["think"] is False and body["stream"] is False
    assert body["options"] == {"num_ctx": 8192, "temperature": 0.2, "seed": 11, "num_predict": 200}
    assert body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert body["messages"][-1]["role"] == "user"
    assert "keep_alive" not in body
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (700, 30)
    assert (reply.usage.cost_usd, reply.usage.cost_status) == (0.0, "local")
    assert reply.model == "qwen3:8b" and reply.raw["done"] is True


def test_prompted_mode_has_no_format(server: LoopbackServer) -> None:
    server.push(Reply(text='```json\n{"move": "S"}\n```'))
    settings = ModelSettings(base_url=server.url)
    reply = complete(make_backend(SPEC, settings), request(settings, "prompted"))
    assert reply.text == '```json\n{"move": "S"}\n```'
    assert "format" not in server.requests[0].body


def test_context_size_keep_alive_and_thinking_are_settable(server: LoopbackServer) -> None:
    server.push(Reply(text="{}"), Reply(text="{}"))
    settings = ModelSettings(base_url=server.url, num_ctx=32768, keep_alive="10m", think=True)
    complete(make_backend(SPEC, settings), request(settings, "native"))
    body = server.requests[0].body
    assert body["options"]["num_ctx"] == 32768 and body["keep_alive"] == "10m"
    assert body["think"] is True
    effort = ModelSettings(base_url=server.url, reasoning_effort="high")
    complete(make_backend("ollama:gpt-oss:20b", effort), request(effort, "native"))
    assert server.requests[1].body["think"] == "high"


def test_tool_mode_is_refused_because_the_client_drops_schema_parts() -> None:
    # what the ollama client does to a tool schema: the nullable field loses its anyOf
    tool = {"type": "function", "function": {"name": "maze_action", "parameters": SCHEMA}}
    kept = ollama.Tool.model_validate(tool).model_dump(exclude_none=True, by_alias=True)
    assert kept["function"]["parameters"]["properties"]["check"] == {"description": "one line"}
    backend = make_backend(SPEC, ModelSettings())
    assert backend.output_modes == ("native", "json_object", "prompted")
    with pytest.raises(ValueError, match="output mode 'tool' is not served by ollama:qwen3:8b"):
        check_output_mode(backend, "tool")
    with pytest.raises(ValueError, match="use 'native'"):
        complete(backend, request(ModelSettings(), "tool"))


@pytest.mark.parametrize("quirk", sorted(QUIRKS))
def test_every_quirk_reaches_the_harness_untouched(server: LoopbackServer, quirk: str) -> None:
    scripted = quirk_reply(quirk, tool=False)
    server.push(scripted)
    settings = ModelSettings(base_url=server.url)
    reply = complete(make_backend(SPEC, settings), request(settings, "native"))
    assert reply.text == scripted.text


def test_ollama_host_environment_variable(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    server.push(Reply(text="via OLLAMA_HOST"))
    settings = ModelSettings()
    assert complete(make_backend(SPEC, settings), request(settings, "native")).text == (
        "via OLLAMA_HOST"
    )


def test_an_injected_client_is_used_and_left_open(server: LoopbackServer) -> None:
    client = ollama.AsyncClient(host=server.url)
    server.push(Reply(text="mine"), Reply(text="still mine"))
    settings = ModelSettings()
    backend = make_backend(SPEC, settings, client=client)

    async def go() -> list[str | None]:
        first = await backend.complete(request(settings, "native"))
        await backend.aclose()
        second = await client.chat(model="qwen3:8b", messages=[], stream=False)
        return [first.text, second.message.content]

    assert asyncio.run(go()) == ["mine", "still mine"]
    with pytest.raises(TypeError, match=r"ollama\.AsyncClient"):
        OllamaBackend(SPEC, settings, client=object())  # type: ignore[arg-type]


def test_429_waits_for_retry_after(server: LoopbackServer) -> None:
    server.push(HttpError(429, retry_after=2), Reply(text="ok"))
    sleeps = Sleeps()
    settings = ModelSettings(base_url=server.url)
    reply = complete(
        make_backend(SPEC, settings, retry=sleeps.policy()), request(settings, "native")
    )
    assert reply.text == "ok" and sleeps.waits == [2.0]
    assert [(a.kind, a.status) for a in reply.retries] == [("rate_limit", 429)]


@pytest.mark.parametrize(
    "fault,kind",
    [
        (HttpError(500, message="model runner crashed"), "server"),
        (HttpError(503), "server"),
        (Hang(60), "timeout"),
        (Stall(60), "timeout"),
        (malformed_json(), "protocol"),
        (non_object_json(), "protocol"),
    ],
    ids=["500", "503", "timeout", "stall", "malformed", "non_object"],
)
def test_failures_are_retried(server: LoopbackServer, fault: Any, kind: str) -> None:
    server.push(fault, Reply(text="recovered"))
    # a deadline only the hang reaches: the recovered reply must fit in it on a loaded machine
    settings = ModelSettings(base_url=server.url, timeout_s=3)
    reply = complete(
        make_backend(SPEC, settings, retry=Sleeps().policy()), request(settings, "native")
    )
    assert reply.text == "recovered" and len(server.requests) == 2
    assert [a.kind for a in reply.retries] == [kind]


def test_a_missing_model_is_refused_without_retrying(server: LoopbackServer) -> None:
    server.push(HttpError(404, message="model 'qwen3:8b' not found"))
    settings = ModelSettings(base_url=server.url)
    with pytest.raises(ModelUnavailable, match="ollama pull") as caught:
        complete(make_backend(SPEC, settings, retry=Sleeps().policy()), request(settings, "native"))
    assert caught.value.kind == "refused" and len(server.requests) == 1


def test_persistent_failure_becomes_model_unavailable(server: LoopbackServer) -> None:
    server.extend([HttpError(503)] * 5)
    settings = ModelSettings(base_url=server.url, retries=4)
    with pytest.raises(ModelUnavailable) as caught:
        complete(make_backend(SPEC, settings, retry=Sleeps().policy()), request(settings, "native"))
    assert len(caught.value.attempts) == 5 and len(server.requests) == 5


def test_persistent_timeouts_become_model_timeout(server: LoopbackServer) -> None:
    server.extend([Hang(5)] * 2)
    settings = ModelSettings(base_url=server.url, retries=1, timeout_s=0.2)
    with pytest.raises(ModelTimeout):
        complete(make_backend(SPEC, settings, retry=Sleeps().policy()), request(settings, "native"))


def test_an_unreachable_host_is_a_connection_outage() -> None:
    settings = ModelSettings(base_url="http://127.0.0.1:9", retries=1)
    with pytest.raises(ModelUnavailable) as caught:
        complete(make_backend(SPEC, settings, retry=Sleeps().policy()), request(settings, "native"))
    assert caught.value.kind == "connection"


def test_a_reply_that_filled_the_context_carries_a_notice_not_a_warning(
    server: LoopbackServer,
) -> None:
    server.push(Reply(text="{}", input_tokens=4000, output_tokens=96))
    settings = ModelSettings(base_url=server.url, num_ctx=4096)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on stderr: the journal says it, once per game
        reply = complete(make_backend(SPEC, settings), request(settings, "native"))
    (notice,) = reply.notices
    assert notice["kind"] == "context_warning" and notice["num_ctx"] == 4096
    assert "probably cut" in notice["message"] and notice["used"] == 4096


def test_a_short_prompt_has_no_notice(server: LoopbackServer) -> None:
    server.push(Reply(text="{}"))
    settings = ModelSettings(base_url=server.url)
    assert complete(make_backend(SPEC, settings), request(settings, "native")).notices == ()


def test_json_object_mode_asks_for_json_format(server: LoopbackServer) -> None:
    server.push(Reply(text='{"move": "N"}'))
    settings = ModelSettings(base_url=server.url)
    reply = complete(make_backend(SPEC, settings), request(settings, "json_object"))
    assert reply.text == '{"move": "N"}'
    assert server.requests[-1].body["format"] == "json"


def test_a_fresh_event_loop_per_turn_works(server: LoopbackServer) -> None:
    server.push(Reply(text="1"), Reply(text="2"))
    settings = ModelSettings(base_url=server.url)
    backend = make_backend(SPEC, settings)
    texts = [asyncio.run(backend.complete(request(settings, "native"))).text for _ in range(2)]
    asyncio.run(backend.aclose())
    assert texts == ["1", "2"]


def test_concurrent_requests(server: LoopbackServer) -> None:
    server.respond_with(
        lambda r: Reply(text=json.dumps({"echo": r.body["messages"][-1]["content"]}), delay_s=0.05)
    )
    settings = ModelSettings(base_url=server.url)
    backend = make_backend(SPEC, settings)

    async def go() -> list[Any]:
        try:
            calls = [backend.complete(request(settings, "native", user=f"u{i}")) for i in range(16)]
            return await asyncio.gather(*calls)
        finally:
            await backend.aclose()

    replies = asyncio.run(go())
    assert [json.loads(r.text)["echo"] for r in replies] == [f"u{i}" for i in range(16)]
