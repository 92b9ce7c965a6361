"""The loopback server behaving like llama.cpp's OpenAI-compatible server (and its Python port).

What llama.cpp's server (and ``python -m llama_cpp.server``) do differently from OpenAI, as seen
against the real llama-cpp-python 0.3.36 server (tests/llm/test_real_server.py):

* ``tools`` and ``tool_choice: "required"`` are ignored: the model never sees the tools and writes
  prose (a scripted tool call comes back as its text, or as prose when it has none);
* ``response_format: {"type": "json_schema", ...}`` is rejected with HTTP 500 and a pydantic
  validation error ("Input should be 'text' or 'json_object'"); ``json_object`` is accepted,
  and with a ``schema`` beside it the schema becomes a grammar: the reply always follows it (a
  scripted reply that does not is replaced by the schema's simplest instance);
* ``max_completion_tokens`` is ignored, ``max_tokens`` honoured (a scripted reply longer than
  ``max_tokens`` is cut to it, ``finish_reason: "length"``);
* a prompt that with ``max_tokens`` does not fit ``n_ctx`` is refused with HTTP 400
  ``context_length_exceeded`` ("This model's maximum context length is N tokens...");
* ``GET /props`` tells ``n_ctx`` (llama.cpp's own server; off for llama-cpp-python, which has no
  such route) and ``POST /tokenize`` counts tokens (llama.cpp) / ``POST
  /extras/tokenize/count`` (llama-cpp-python).

Tokens are counted as UTF-8 bytes / :data:`BYTES_PER_TOKEN` of the prompt's text (system, every
message), which is what ``usage.prompt_tokens`` reports too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any, Final

from tests.llm.servers.script import HttpError, Reply, Step

BYTES_PER_TOKEN: Final = 4.0
PROSE: Final = "Sure! Let me think about the maze and where to go from here."
SCHEMA_REJECTION: Final = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}"
)


@dataclass(frozen=True)
class LlamaCpp:
    """How the llama.cpp-like server behaves (see the module docstring).

    ``props``: answer ``GET /props`` (llama.cpp); ``tokenizer``: ``"llama.cpp"``,
    ``"llama-cpp-python"`` or ``None``; ``model``: the model file it serves (``/props``
    ``model_path``, ``/v1/models`` ``id``); ``slots``: ``/props`` ``total_slots``.
    """

    n_ctx: int = 2048
    props: bool = True
    tokenizer: str | None = "llama.cpp"
    model: str = "/models/model.gguf"
    slots: int = 1


def text_tokens(text: str) -> int:
    """The server's token count of ``text``."""
    return math.ceil(len(text.encode()) / BYTES_PER_TOKEN)


def prompt_tokens(body: dict[str, Any]) -> int:
    """The server's token count of a chat request's prompt."""
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [c.get("text", "") for c in content if isinstance(c, dict)]
    return sum(text_tokens(p) for p in parts) + 4 * len(parts)


def without_tools(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the model sees it: no tools (llama.cpp does not render them)."""
    return {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}


def refusal(body: dict[str, Any], server: LlamaCpp) -> Step | None:
    """The error llama.cpp answers ``body`` with, or ``None`` when it takes the request."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        return HttpError(500, message=SCHEMA_REJECTION)
    prompt = prompt_tokens(body)
    reply = body.get("max_tokens") or 0
    if prompt + reply > server.n_ctx:
        return HttpError(
            400,
            message=(
                f"This model's maximum context length is {server.n_ctx} tokens. However, you "
                f"requested {prompt + reply} tokens ({prompt} in the messages, {reply} in the "
                "completion). Please reduce the length of the messages or completion."
            ),
            code="context_length_exceeded",
        )
    return None


def simplest(schema: Any) -> Any:
    """The simplest value a JSON schema allows (what a grammar leaves a model that wanders)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("anyOf"):
        return simplest(schema["anyOf"][-1])
    kind = schema.get("type")
    if kind == "object":
        return {k: simplest(v) for k, v in (schema.get("properties") or {}).items()}
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}.get(str(kind))


def follows(text: str | None, schema: dict[str, Any]) -> bool:
    """Whether ``text`` is an object with the schema's required keys and enum values."""
    try:
        value = json.loads(text or "")
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    properties = schema.get("properties") or {}
    if any(key not in value for key in schema.get("required") or ()):
        return False
    return all(value[k] in p["enum"] for k, p in properties.items() if "enum" in p and k in value)


def as_served(reply: Reply, body: dict[str, Any]) -> Reply:
    """``reply`` as llama.cpp would send it: no tool call, a grammar's schema followed, the
    output cap applied, its usage."""
    text = reply.text
    if reply.tool_arguments is not None:
        text = text if text is not None else PROSE  # the model never saw the tool
    response_format = body.get("response_format")
    grammar = response_format.get("schema") if isinstance(response_format, dict) else None
    if isinstance(grammar, dict) and not follows(text, grammar):
        text = json.dumps(simplest(grammar))
    text = text if text is not None else ""
    output = reply.output_tokens
    cap = body.get("max_tokens")
    truncated = isinstance(cap, int) and output > cap
    if truncated:
        output = cap
        text = text.encode()[: int(cap * BYTES_PER_TOKEN)].decode(errors="ignore")
    return replace(
        reply,
        text=text,
        tool_arguments=None,
        output_tokens=output,
        input_tokens=prompt_tokens(body),
        cache_read_tokens=0,
        cache_write_tokens=0,
        finish_reason="length" if truncated else None,
    )


def props(server: LlamaCpp) -> dict[str, Any]:
    """llama.cpp's ``GET /props``."""
    return {
        "default_generation_settings": {"n_ctx": server.n_ctx},
        "total_slots": server.slots,
        "model_path": server.model,
    }


def models(server: LlamaCpp) -> dict[str, Any]:
    """``GET /v1/models``: llama.cpp names the model file (llama-cpp-python too, or its alias)."""
    owner = "llamacpp" if server.props else "me"
    return {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": owner}]}


def tokenize(server: LlamaCpp, path: str, body: Any) -> dict[str, Any] | None:
    """The tokenizer routes' answers (``None``: not a route of this server)."""
    if not isinstance(body, dict):
        return None
    if server.tokenizer == "llama.cpp" and path == "/tokenize":
        return {"tokens": list(range(text_tokens(str(body.get("content", "")))))}
    if server.tokenizer == "llama-cpp-python" and path == "/extras/tokenize/count":
        return {"count": text_tokens(str(body.get("input", "")))}
    return None
