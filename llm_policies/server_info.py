"""What a local model server says about itself over HTTP: whether it answers, which model it
serves, its context size, how many requests it serves at once, its tokenizer.

Where each server tells it (asked once per run, :mod:`llm_policies.capabilities`):

| server | model served | context size | requests at once |
|---|---|---|---|
| llama.cpp (``llama-server``) | ``GET /props`` ``model_path`` | ``/props`` ``n_ctx`` | ``/props`` ``total_slots`` (or ``GET /slots``, one entry per slot) |
| llama-cpp-python | ``GET /v1/models`` ``id`` (the model file, or its alias) | not told | one: a lock serves one request at a time (its ``/extras/tokenize/count`` route gives it away) |
| vLLM | ``/v1/models`` ``root`` | ``/v1/models`` ``max_model_len`` | ``GET /server_info?config_format=json``: ``vllm_config.scheduler_config.max_num_seqs`` (``--max-num-seqs``; the route exists when the server runs with ``VLLM_SERVER_DEV_MODE=1``); otherwise not told (``/metrics``' ``cache_config_info`` holds the KV cache's settings only): vLLM batches continuously and queues the rest, so no limit is set |
| LM Studio | ``/v1/models`` ``id`` | ``max_context_length`` | not told |
| Ollama | ``GET /api/tags`` ``digest`` of the model | the request's ``num_ctx`` (``/api/ps`` ``context_length`` of a loaded model) | not told: ``OLLAMA_NUM_PARALLEL`` is read by the server at start and exposed by no route (``/api/ps`` lists models, sizes, digests, expiry and context length only), so 1, its default |

Each question has a short deadline and any failure is "no answer": a server that does not know a
route is the common case, never an error. One failure is different: no connection at all
(refused, unresolvable, no handshake within the deadline) is :class:`ServerInfo` ``reachable =
False``: the run's decisions are then outages at once instead of each spending the retry budget
(``maze-envs bench`` exit 4 within seconds).

    >>> server_root("http://127.0.0.1:8080/v1")
    'http://127.0.0.1:8080'
    >>> first_int({"data": [{"id": "m", "max_model_len": 16384}]}, ("max_model_len",))
    16384
"""  # noqa: E501

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
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
#: Ollama's default number of parallel requests (``OLLAMA_NUM_PARALLEL`` unset).
OLLAMA_DEFAULT_SLOTS: Final = 1
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


@dataclass(frozen=True)
class Answer:
    """One HTTP question's answer: its status and JSON (``None`` when not JSON, or when the
    server took the connection but did not answer in time), or the connection's ``error`` (no
    connection at all: refused, unresolvable, no handshake within the deadline)."""

    status: int | None = None
    data: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == HTTPStatus.OK and self.data is not None


async def ask(method: str, url: str, body: Any = None) -> Answer:
    """Ask ``url`` once with a short deadline (never raises)."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=INFO_TIMEOUT_S) as client:
            response = await client.request(method, url, json=body)
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol, OSError) as error:
        return Answer(error=f"{type(error).__name__}: {error or 'no connection'}")
    except httpx.HTTPError:  # connected, but no answer in time (a busy server): no answer
        return Answer()
    try:
        data = response.json()
    except ValueError:
        data = None
    return Answer(response.status_code, data)


async def get_json(method: str, url: str, body: Any = None) -> Any:
    """The JSON answer of one request, or ``None`` (no route, an error, no server)."""
    answer = await ask(method, url, body)
    return answer.data if answer.ok else None


@dataclass
class ServerInfo:
    """What one local server told (see the module docstring); ``None``: not told.

    ``window`` and ``slots`` are ``(value, where it came from)``; ``identity`` names the model
    the server serves (its file, digest or id), so that a response cache keyed on it hits on
    another port and never for another model.
    """

    reachable: bool = True
    error: str | None = None
    kind: str | None = None
    identity: str | None = None
    window: tuple[int, str] | None = None
    slots: tuple[int | None, str] | None = None
    tokenizer: Tokenizer | None = None


def _mine(entries: Any, model: str) -> dict[str, Any] | None:
    """The model list's entry of ``model`` (or its only entry)."""
    if not isinstance(entries, list):
        return None
    models = [e for e in entries if isinstance(e, dict)]
    named = [e for e in models if e.get("id") == model or e.get("name") == model]
    if named:
        return named[0]
    return models[0] if len(models) == 1 else None


async def describe_compatible(base_url: str, model: str) -> ServerInfo:
    """An OpenAI-compatible server (llama.cpp, llama-cpp-python, vLLM, LM Studio)."""
    root = server_root(base_url)
    listed = await ask("GET", f"{base_url.rstrip('/')}/models")
    if listed.error is not None:
        return ServerInfo(reachable=False, error=listed.error)
    info = ServerInfo()
    entries = listed.data.get("data") if listed.ok and isinstance(listed.data, dict) else None
    entry = _mine(entries, model)
    if entry is not None:
        owner = str(entry.get("owned_by") or "")
        info.kind = "vllm" if owner == "vllm" else "llama.cpp" if owner == "llamacpp" else None
        root_name = entry.get("root") if isinstance(entry.get("root"), str) else None
        identity = root_name or entry.get("id")
        info.identity = str(identity) if identity else None
        window = first_int(entry, WINDOW_KEYS)
        if window is not None:
            info.window = (window, "models")
    props = await ask("GET", f"{root}/props")
    if props.ok:
        n_ctx = first_int(props.data, ("n_ctx",))
        if n_ctx is not None:
            info.window = (n_ctx, "props")
        path = props.data.get("model_path") if isinstance(props.data, dict) else None
        if isinstance(path, str) and path:
            info.identity = path
        info.kind = "llama.cpp"
        slots = first_int(props.data, ("total_slots",))
        if slots is None:
            listed_slots = await ask("GET", f"{root}/slots")
            if listed_slots.ok and isinstance(listed_slots.data, list) and listed_slots.data:
                slots = len(listed_slots.data)
        if slots is not None:
            info.slots = (slots, "props" if first_int(props.data, ("total_slots",)) else "slots")
    info.tokenizer = await find_tokenizer(base_url)
    if info.tokenizer is not None and info.tokenizer[0] == "llama-cpp-python":
        info.kind = "llama-cpp-python"
        info.slots = (1, "llama-cpp-python serves one request at a time")
    if info.kind == "vllm" and info.slots is None:
        info.slots = await vllm_slots(root)
    return info


async def vllm_slots(root: str) -> tuple[int | None, str]:
    """vLLM's ``--max-num-seqs`` from ``/server_info`` (a development route: present when the
    server runs with ``VLLM_SERVER_DEV_MODE=1``), else no limit (vLLM queues what it cannot
    batch)."""
    answer = await ask("GET", f"{root}/server_info?config_format=json")
    config = answer.data.get("vllm_config") if answer.ok and isinstance(answer.data, dict) else None
    if isinstance(config, str):  # older servers send the configuration as JSON text, or as repr
        try:
            config = json.loads(config)
        except ValueError:
            found = re.search(r"max_num_seqs[\"']?\s*[:=]\s*(\d+)", config)
            config = {"max_num_seqs": int(found.group(1))} if found else None
    seqs = first_int(config, ("max_num_seqs",))
    if seqs is not None:
        return (seqs, "server_info")
    return (None, "vLLM batches requests itself (--max-num-seqs is not told without /server_info)")


async def describe_ollama(host: str | None, model: str) -> ServerInfo:
    """An Ollama server: the model's digest (``/api/tags``); its parallel requests are not told
    over HTTP, so Ollama's default (see the module docstring)."""
    root = (host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434").rstrip("/")
    if "://" not in root:
        root = f"http://{root}"
    tags = await ask("GET", f"{root}/api/tags")
    if tags.error is not None:
        return ServerInfo(reachable=False, error=tags.error)
    info = ServerInfo(kind="ollama")
    models = tags.data.get("models") if tags.ok and isinstance(tags.data, dict) else None
    wanted = model if ":" in model else f"{model}:latest"
    for entry in models if isinstance(models, list) else []:
        if isinstance(entry, dict) and wanted in (entry.get("name"), entry.get("model")):
            digest = entry.get("digest")
            info.identity = f"sha256:{digest}" if isinstance(digest, str) and digest else None
    info.slots = (
        OLLAMA_DEFAULT_SLOTS,
        "Ollama's default (OLLAMA_NUM_PARALLEL is not told over HTTP; set slots= to yours)",
    )
    return info


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
