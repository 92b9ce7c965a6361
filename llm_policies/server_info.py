"""What an OpenAI-compatible server says about itself over HTTP: its context size, its tokenizer.

Beside the chat endpoint, llama.cpp's server answers ``GET /props`` (``n_ctx`` among its
generation settings) and ``POST /tokenize``; llama-cpp-python answers ``POST
/extras/tokenize/count``; vLLM's ``GET /v1/models`` gives each model's ``max_model_len`` and LM
Studio's its ``max_context_length``. Each question has a short deadline and any failure is "no
answer": a server that does not know a route is the common case, never an error.

    >>> server_root("http://127.0.0.1:8080/v1")
    'http://127.0.0.1:8080'
    >>> first_int({"data": [{"id": "m", "max_model_len": 16384}]}, ("max_model_len",))
    16384
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

#: Seconds allowed to each question (props, models, tokenizer).
INFO_TIMEOUT_S: Final = 5.0
#: Where a model list says a model's context size (vLLM, LM Studio, OpenRouter...).
WINDOW_KEYS: Final = (
    "max_model_len",
    "loaded_context_length",
    "max_context_length",
    "context_length",
)
#: A server's tokenizer: its kind and its URL.
Tokenizer = tuple[str, str]


def server_root(base_url: str) -> str:
    """The server's root (``http://host:8080/v1`` -> ``http://host:8080``)."""
    parts = urlsplit(base_url)
    path = re.sub(r"/v1/?$", "", parts.path.rstrip("/"))
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def first_int(data: Any, keys: tuple[str, ...]) -> int | None:
    """The first positive integer under one of ``keys`` anywhere in ``data`` (breadth first)."""
    queue = [data]
    while queue:
        node = queue.pop(0)
        if isinstance(node, dict):
            for key in keys:
                value = node.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return None


async def get_json(method: str, url: str, body: Any = None) -> Any:
    """The JSON answer of one request, or ``None`` (no route, an error, no server)."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=INFO_TIMEOUT_S) as client:
            response = await client.request(method, url, json=body)
        if response.status_code != HTTPStatus.OK:
            return None
        return response.json()
    except (httpx.HTTPError, ValueError, OSError):
        return None


async def context_window(base_url: str, model: str) -> tuple[int, str] | None:
    """The server's context size for ``model`` and where it came from (``props``, ``models``)."""
    props = await get_json("GET", f"{server_root(base_url)}/props")
    n_ctx = first_int(props, ("n_ctx",)) if props is not None else None
    if n_ctx is not None:
        return n_ctx, "props"
    models = await get_json("GET", f"{base_url.rstrip('/')}/models")
    entries = models.get("data") if isinstance(models, dict) else None
    if isinstance(entries, list):
        mine = [e for e in entries if isinstance(e, dict) and e.get("id") == model]
        window = first_int(mine or entries, WINDOW_KEYS)
        if window is not None:
            return window, "models"
    return None


async def find_tokenizer(base_url: str) -> Tokenizer | None:
    """The server's tokenizer route, if it has one."""
    root = server_root(base_url)
    counted = await get_json("POST", f"{root}/extras/tokenize/count", {"input": "a b"})
    if isinstance(counted, dict) and isinstance(counted.get("count"), int):
        return "llama-cpp-python", f"{root}/extras/tokenize/count"
    tokens = await get_json("POST", f"{root}/tokenize", {"content": "a b"})
    if isinstance(tokens, dict) and isinstance(tokens.get("tokens"), list):
        return "llama.cpp", f"{root}/tokenize"
    return None


async def count_tokens_with(tokenizer: Tokenizer, text: str) -> int | None:
    """Tokens of ``text`` by the server's tokenizer (``None`` on failure)."""
    kind, url = tokenizer
    if kind == "llama-cpp-python":
        data = await get_json("POST", url, {"input": text})
        count = data.get("count") if isinstance(data, dict) else None
        return count if isinstance(count, int) else None
    data = await get_json("POST", url, {"content": text})
    tokens = data.get("tokens") if isinstance(data, dict) else None
    return len(tokens) if isinstance(tokens, list) else None
