"""The four wire protocols: a scripted :class:`Reply` or error as each provider sends it.

Shapes follow the providers' own SDK types (``openai.types.chat.ChatCompletion``,
``openai.types.responses.Response``, ``anthropic.types.Message``, ``ollama.ChatResponse``) and
their documented error bodies.
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.llm.servers.script import Reply

_ids = itertools.count(1)
CREATED = 1_700_000_000


def _first_tool_name(protocol: str, body: Any) -> str:
    tools = body.get("tools") if isinstance(body, dict) else None
    if tools:
        tool = tools[0]
        if protocol in ("openai-chat", "ollama"):
            return str(tool.get("function", {}).get("name", "maze_action"))
        return str(tool.get("name", "maze_action"))
    return "maze_action"


def _model(reply: Reply, body: Any) -> str:
    if reply.model is not None:
        return reply.model
    return str(body.get("model", "loopback-model")) if isinstance(body, dict) else "loopback-model"


def render_reply(protocol: str, reply: Reply, body: Any) -> dict[str, Any]:
    """The provider's JSON for a good reply."""
    n = next(_ids)
    model = _model(reply, body)
    name = reply.tool_name or _first_tool_name(protocol, body)
    if protocol == "openai-chat":
        message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
        if reply.tool_arguments is not None:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": reply.tool_arguments},
                }
            ]
        details: dict[str, int] = {"cached_tokens": reply.cache_read_tokens}
        if reply.cache_write_tokens:
            details["cache_write_tokens"] = reply.cache_write_tokens
        # OpenRouter (models named "<vendor>/<model>") adds the downstream provider
        routed = {"provider": model.split("/")[0]} if "/" in model else {}
        return {
            **routed,
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": CREATED,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": reply.finish_reason
                    or ("tool_calls" if reply.tool_arguments is not None else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
                "prompt_tokens_details": details,
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
            "system_fingerprint": "fp_loopback",
        }
    if protocol == "openai-responses":
        output: list[dict[str, Any]] = []
        if reply.text is not None:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        if reply.tool_arguments is not None:
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n}",
                    "call_id": f"call_{n}",
                    "name": name,
                    "arguments": reply.tool_arguments,
                    "status": "completed",
                }
            )
        return {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": CREATED,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions") if isinstance(body, dict) else None,
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "temperature": body.get("temperature") if isinstance(body, dict) else None,
            "tool_choice": body.get("tool_choice", "auto") if isinstance(body, dict) else "auto",
            "tools": body.get("tools", []) if isinstance(body, dict) else [],
            "top_p": None,
            "usage": {
                "input_tokens": reply.input_tokens,
                "input_tokens_details": {
                    "cached_tokens": reply.cache_read_tokens,
                    "cache_write_tokens": reply.cache_write_tokens,
                },
                "output_tokens": reply.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": reply.input_tokens + reply.output_tokens,
            },
        }
    if protocol == "anthropic":
        content: list[dict[str, Any]] = []
        if reply.text is not None:
            content.append({"type": "text", "text": reply.text})
        if reply.tool_arguments is not None:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}",
                    "name": name,
                    "input": reply.tool_input_object(),
                }
            )
        return {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.tool_arguments is not None else "end_turn",
            "stop_sequence": None,
            "usage": {
                # Anthropic's input_tokens are the uncached ones; cache reads/writes come apart
                "input_tokens": reply.input_tokens
                - reply.cache_read_tokens
                - reply.cache_write_tokens,
                "cache_creation_input_tokens": reply.cache_write_tokens,
                "cache_read_input_tokens": reply.cache_read_tokens,
                "output_tokens": reply.output_tokens,
            },
        }
    if protocol == "ollama":
        ollama_message: dict[str, Any] = {"role": "assistant", "content": reply.text or ""}
        if reply.tool_arguments is not None:
            ollama_message["tool_calls"] = [
                {"function": {"name": name, "arguments": reply.tool_input_object()}}
            ]
        return {
            "model": model,
            "created_at": "2023-11-14T22:13:20.000000Z",
            "message": ollama_message,
            "done": True,
            "done_reason": "stop",
            "total_duration": 250_000_000,
            "load_duration": 1_000_000,
            "prompt_eval_count": reply.input_tokens,
            "prompt_eval_duration": 100_000_000,
            "eval_count": reply.output_tokens,
            "eval_duration": 140_000_000,
        }
    raise ValueError(f"unknown protocol {protocol!r}")


_OPENAI_ERRORS = {
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    502: ("server_error", None),
    503: ("server_error", None),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def render_error(
    protocol: str, status: int, message: str, code: str | None = None
) -> dict[str, Any]:
    """The provider's error body for ``status`` (``code``: the OpenAI error code to send)."""
    if protocol in ("openai-chat", "openai-responses"):
        kind, default = _OPENAI_ERRORS.get(status, ("invalid_request_error", None))
        body = {"message": message, "type": kind, "param": None, "code": code or default}
        return {"error": body}
    if protocol == "anthropic":
        kind = _ANTHROPIC_ERRORS.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": message}
