"""The loopback servers speak the protocols as the providers' own SDK types define them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import ollama
import openai
import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from tests.llm.backend_support import module_server, server
from tests.llm.servers import HttpError, LoopbackServer, Reply, quirk_payload
from tests.llm.servers.protocols import render_reply
from tests.llm.servers.quirks import QUIRKS

__all__ = ["module_server", "server"]  # fixtures used below

TOOL_BODY: dict[str, Any] = {
    "model": "m",
    "tools": [
        {
            "type": "function",
            "name": "maze_action",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ],
}
REPLY = Reply(text="thinking aloud", tool_arguments='{"move": "N"}', input_tokens=50)


def test_non_streamed_replies_validate_against_the_sdk_types() -> None:
    chat = ChatCompletion.model_validate(
        render_reply("openai-chat", REPLY, {"model": "m", "tools": [{"function": {"name": "t"}}]})
    )
    assert chat.choices[0].message.tool_calls[0].function.arguments == '{"move": "N"}'  # type: ignore[index, union-attr]
    assert chat.usage is not None and chat.usage.prompt_tokens == 50
    response = Response.model_validate(render_reply("openai-responses", REPLY, TOOL_BODY))
    assert [item.type for item in response.output] == ["message", "function_call"]
    message = Message.model_validate(render_reply("anthropic", REPLY, TOOL_BODY))
    assert [block.type for block in message.content] == ["text", "tool_use"]
    chat_response = ollama.ChatResponse.model_validate(
        render_reply("ollama", REPLY, {"model": "m"})
    )
    assert chat_response.message.tool_calls is not None and chat_response.prompt_eval_count == 50


def test_openai_sdk_streams_chat_completions(server: LoopbackServer) -> None:
    server.push(Reply(text="hello there", tool_arguments='{"move": "S", "radio": null}'))

    async def go() -> tuple[str, str]:
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k")
        stream = await client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        text, args = "", ""
        async for chunk in stream:
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    args += (call.function.arguments or "") if call.function else ""
        await client.close()
        return text, args

    assert asyncio.run(go()) == ("hello there", '{"move": "S", "radio": null}')


def test_openai_sdk_streams_responses(server: LoopbackServer) -> None:
    server.push(Reply(text="streamed words"))

    async def go() -> str:
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k")
        async with client.responses.stream(model="gpt-4o-mini", input="hi") as stream:
            final = await stream.get_final_response()
        await client.close()
        return final.output_text

    assert asyncio.run(go()) == "streamed words"


def test_anthropic_sdk_streams_messages(server: LoopbackServer) -> None:
    server.push(Reply(text="a", tool_arguments='{"move": "W", "notebook": "x"}'))

    async def go() -> Any:
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="k")
        async with client.messages.stream(
            model="claude-haiku-4-5", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            final = await stream.get_final_message()
        await client.close()
        return final

    final = asyncio.run(go())
    assert final.content[1].input == {"move": "W", "notebook": "x"}
    assert final.stop_reason == "tool_use" and final.usage.output_tokens == 18


def test_ollama_client_streams_chat(server: LoopbackServer) -> None:
    server.push(Reply(text="one two three"))

    async def go() -> str:
        client = ollama.AsyncClient(host=server.url)
        parts = [
            part.message.content or "" async for part in await client.chat(model="m", stream=True)
        ]
        return "".join(parts)

    assert asyncio.run(go()) == "one two three"


def test_errors_carry_the_protocols_bodies_and_retry_after(server: LoopbackServer) -> None:
    server.push(HttpError(429, retry_after=4))

    async def go() -> Any:
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)
        try:
            await client.chat.completions.create(model="m", messages=[])
        except openai.RateLimitError as error:
            return error
        finally:
            await client.close()

    error = asyncio.run(go())
    assert error.response.headers["retry-after"] == "4"
    assert error.body["code"] == "rate_limit_exceeded"  # type: ignore[index]


def test_requests_are_recorded_with_headers_and_bodies(server: LoopbackServer) -> None:
    server.push(Reply(text="x"))

    async def go() -> None:
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="the-key")
        await client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()

    asyncio.run(go())
    (sent,) = server.requests
    assert sent.protocol == "anthropic" and sent.body["max_tokens"] == 5
    assert "the-key" in sent.headers.get("x-api-key", "") + sent.headers.get("authorization", "")
    assert json.loads(sent.raw) == sent.body


def test_an_exhausted_script_fails_loudly(server: LoopbackServer) -> None:
    async def go() -> int:
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0)
        try:
            await client.chat.completions.create(model="m", messages=[])
        except openai.BadRequestError as error:
            return error.status_code
        finally:
            await client.close()
        return 200

    assert asyncio.run(go()) == 400


@pytest.mark.parametrize("name", sorted(QUIRKS))
def test_every_quirk_has_a_raw_form(name: str) -> None:
    raw = quirk_payload(name)
    assert raw and raw != json.dumps({"move": "N"})
    with pytest.raises(KeyError, match="unknown quirk"):
        quirk_payload("not-a-quirk")
