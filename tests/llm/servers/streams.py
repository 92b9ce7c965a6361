"""Streamed replies in each protocol: SSE events (OpenAI, Anthropic) or NDJSON lines (Ollama).

A streamed reply is a list of byte chunks, so a :class:`~tests.llm.servers.script.Stall` can send
the first half of them and then go quiet. The final state of each stream equals the non-streamed
reply of :func:`~tests.llm.servers.protocols.render_reply` (usage included).
"""

from __future__ import annotations

import json
from typing import Any

from tests.llm.servers.protocols import render_reply
from tests.llm.servers.script import Reply


def _pieces(text: str, n: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _openai_chat(reply: Reply, full: dict[str, Any]) -> list[bytes]:
    keys = ("id", "created", "model", "system_fingerprint", "provider")
    base = {k: full[k] for k in keys if k in full}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": piece}) for piece in _pieces(reply.text or "")]
    message = full["choices"][0]["message"]
    for call in message.get("tool_calls") or []:
        head = {"index": 0, "id": call["id"], "type": "function"}
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {**head, "function": {"name": call["function"]["name"], "arguments": ""}}
                    ]
                }
            )
        )
        for piece in _pieces(call["function"]["arguments"]):
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    out.append(chunk({}, full["choices"][0]["finish_reason"]))
    out.append(_sse({**base, "choices": [], "usage": full["usage"]}))
    out.append(b"data: [DONE]\n\n")
    return out


def _openai_responses(reply: Reply, full: dict[str, Any]) -> list[bytes]:
    seq = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> bytes:
        return _sse({"type": kind, "sequence_number": next(seq), **data}, kind)

    started = {**full, "status": "in_progress", "output": [], "usage": None}
    out = [
        event("response.created", response=started),
        event("response.in_progress", response=started),
    ]
    for index, item in enumerate(full["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            out.append(
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "status": "in_progress", "content": []},
                )
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
            out.append(event("response.content_part.added", **ids, part=part))
            for piece in _pieces(text):
                out.append(event("response.output_text.delta", **ids, delta=piece, logprobs=[]))
            out.append(event("response.output_text.done", **ids, text=text, logprobs=[]))
            out.append(event("response.content_part.done", **ids, part={**part, "text": text}))
        else:
            out.append(
                event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
            )
            ids = {"item_id": item["id"], "output_index": index}
            for piece in _pieces(item["arguments"]):
                out.append(event("response.function_call_arguments.delta", **ids, delta=piece))
            out.append(
                event(
                    "response.function_call_arguments.done",
                    **ids,
                    arguments=item["arguments"],
                    name=item["name"],
                )
            )
        out.append(event("response.output_item.done", output_index=index, item=item))
    out.append(event("response.completed", response=full))
    return out


def _anthropic(reply: Reply, full: dict[str, Any]) -> list[bytes]:
    def event(kind: str, **data: Any) -> bytes:
        return _sse({"type": kind, **data}, kind)

    usage = full["usage"]
    start_usage = {**usage, "output_tokens": 1}
    message = {**full, "content": [], "stop_reason": None, "usage": start_usage}
    out = [event("message_start", message=message)]
    for index, block in enumerate(full["content"]):
        if block["type"] == "text":
            out.append(
                event(
                    "content_block_start", index=index, content_block={"type": "text", "text": ""}
                )
            )
            for piece in _pieces(block["text"]):
                out.append(
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "text_delta", "text": piece},
                    )
                )
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            out.append(event("content_block_start", index=index, content_block=head))
            for piece in _pieces(json.dumps(block["input"], ensure_ascii=False)):
                out.append(
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": piece},
                    )
                )
        out.append(event("content_block_stop", index=index))
    out.append(
        event(
            "message_delta",
            delta={"stop_reason": full["stop_reason"], "stop_sequence": None},
            usage={"output_tokens": usage["output_tokens"]},
        )
    )
    out.append(event("message_stop"))
    return out


def _ollama(reply: Reply, full: dict[str, Any]) -> list[bytes]:
    head = {"model": full["model"], "created_at": full["created_at"]}

    def line(data: dict[str, Any]) -> bytes:
        return (json.dumps(data) + "\n").encode()

    out = [
        line({**head, "message": {"role": "assistant", "content": p}, "done": False})
        for p in _pieces(reply.text or "")
    ]
    calls = full["message"].get("tool_calls")
    if calls:
        out.append(
            line(
                {
                    **head,
                    "message": {"role": "assistant", "content": "", "tool_calls": calls},
                    "done": False,
                }
            )
        )
    out.append(line({**full, "message": {"role": "assistant", "content": ""}}))
    return out


STREAM_MEDIA_TYPES = {
    "openai-chat": "text/event-stream",
    "openai-responses": "text/event-stream",
    "anthropic": "text/event-stream",
    "ollama": "application/x-ndjson",
}


def render_stream(protocol: str, reply: Reply, body: Any) -> list[bytes]:
    """The chunks of a streamed reply."""
    full = render_reply(protocol, reply, body)
    render = {
        "openai-chat": _openai_chat,
        "openai-responses": _openai_responses,
        "anthropic": _anthropic,
        "ollama": _ollama,
    }[protocol]
    return render(reply, full)
