"""A response cache: replies stored in SQLite under the exact request that produced them.

``CachedBackend(backend, path)`` wraps any backend. The key is the SHA-256 of the request as
canonical JSON: the model, the settings that can change a reply (all but the transport-only
``timeout_s``, ``retries``, ``keep_alive``, ``slots``, and ``base_url`` and ``context_window``),
the system prompt, the messages, the output mode, the schema *with its key order* (a reordered
schema is a different request), the schema name and ``cache_key_extra``.

The model is the one that answers. For a hosted model it is the spec (the same model and
request behind another port or proxy is the same request). A local server may serve anything
under any name (``openai-chat:local``), so for a server declared local the key names the model
the server says it serves (:attr:`llm_policies.capabilities.Endpoint.identity`: llama.cpp's
model file, Ollama's digest, vLLM's model; :meth:`CachedBackend.identify`): a rerun on another
port still hits, and a different model served under the same name never does. A local server
that says nothing about its model is keyed by its base URL too (another port misses: the
cache cannot tell it serves the same model). The identity seen at each base URL is stored in
the cache file, so a ``read_only`` replay with the server gone uses the one recorded there.
Modes:

* ``"read_write"``: a hit returns the stored reply and sends nothing; a miss calls the model and
  stores its reply. Rerunning a benchmark reuses every recorded reply at no cost.
* ``"read_only"``: a miss raises :class:`CacheMiss` (an outage of kind ``"refused"``) instead of
  calling the model: an exact offline reproduction of a run, or a clear record of where it
  departs from the recording.
* ``"off"``: every request goes to the model; nothing is read or written.

A hit is the stored reply with ``cached=True`` and ``usage.requests == 0`` (tokens, cost and
latency as recorded, so a reproduced run's tables equal the original's). With the cache on,
identical requests get identical replies, whatever the temperature; ``distinct_repeats=True``
keys the n-th repeat of a request separately (repeats are then new samples, replayed in order).
Credentials are never part of a request, so never in the cache.

Where the file is: the process that opens a :class:`CachedBackend` reads and writes the SQLite
file itself (:class:`ReplyFile`), except in a Ray worker of a benchmark run, whose node may not
see the driver's disk: there every lookup and store goes to the one :class:`ReplyFile` the
driver's node holds for the run (:class:`DriverReplies`, through
:func:`maze_envs.policies.driver.adriver_call`), so a run on a cluster fills the driver's cache
file and a rerun on any cluster sends nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal, get_args

from llm_policies.backends.base import (
    ModelBackend,
    ModelReply,
    ModelRequest,
    ModelUnavailable,
    dropped_settings,
)
from llm_policies.settings import ModelSettings, OutputMode
from maze_envs.policies.interface import Usage

CacheMode = Literal["off", "read_write", "read_only"]
CACHE_MODES: tuple[CacheMode, ...] = get_args(CacheMode)
KEY_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    request TEXT NOT NULL,
    reply TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS served (
    spec TEXT NOT NULL,
    base_url TEXT NOT NULL,
    identity TEXT NOT NULL,
    PRIMARY KEY (spec, base_url)
)
"""


class CacheMiss(ModelUnavailable):
    """A read-only cache has no reply for a request."""


def request_json(spec: str, request: ModelRequest, served: str | None = None) -> str:
    """The canonical JSON of what makes a reply (the schema's key order kept as given).

    ``served``: the model a local server serves (its identity, or ``spec@base_url`` when it
    says nothing), which replaces the spec's model name in the key.
    """
    model: dict[str, str] = {"spec": spec}
    if served is not None:
        model = {"spec": spec.partition(":")[0], "served": served}
    return json.dumps(
        {
            "v": KEY_VERSION,
            **model,
            "settings": request.settings.cache_fields(),
            "system": request.system,
            "messages": [[m.role, m.content] for m in request.messages],
            "output_mode": request.output_mode,
            "schema": request.schema,
            "schema_name": request.schema_name,
            "extra": request.cache_key_extra,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def request_key(spec: str, request: ModelRequest, served: str | None = None) -> str:
    """SHA-256 hex of :func:`request_json`.

    >>> from llm_policies.backends.base import ChatMessage
    >>> from llm_policies.settings import ModelSettings
    >>> def req(schema):
    ...     return ModelRequest("rules", (ChatMessage("user", "hi"),), "native", schema, "a",
    ...                         ModelSettings())
    >>> a = {"properties": {"check": {}, "move": {}}}
    >>> b = {"properties": {"move": {}, "check": {}}}
    >>> request_key("openai:x", req(a)) == request_key("openai:x", req(b))
    False
    """
    return hashlib.sha256(request_json(spec, request, served).encode()).hexdigest()


def _reply_json(reply: ModelReply) -> str:
    return json.dumps(
        {
            "text": reply.text,
            "tool_arguments": reply.tool_arguments,
            "usage": reply.usage.to_json(),
            "model": reply.model,
            "latency_s": reply.latency_s,
            "raw": reply.raw,
            "finish_reason": reply.finish_reason,
        },
        ensure_ascii=False,
    )


def _reply_from_json(text: str) -> ModelReply:
    data: dict[str, Any] = json.loads(text)
    usage = Usage(**{**data["usage"], "requests": 0})
    return ModelReply(
        text=data["text"],
        tool_arguments=data["tool_arguments"],
        usage=usage,
        model=data["model"],
        latency_s=data["latency_s"],
        raw=data["raw"],
        cached=True,
        finish_reason=data.get("finish_reason"),
    )


class ReplyFile:
    """The replies of one cache file, read and written by this process (see the module's
    docstring): the stored reply text under a key, and storing one."""

    def __init__(self, path: str | Path, mode: CacheMode) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        if mode == "read_only" and not self.path.exists():
            raise FileNotFoundError(
                f"read-only response cache {self.path} does not exist (record it first with "
                "mode='read_write')"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db: sqlite3.Connection | None = sqlite3.connect(
            self.path, check_same_thread=False, timeout=30.0
        )
        if mode == "read_write":
            self._db.execute("PRAGMA journal_mode=WAL")  # several workers may share it
            self._db.executescript(_SCHEMA)
            self._db.commit()

    def lookup(self, key: str) -> str | None:
        """The stored reply (JSON text) under ``key``, if any."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            except sqlite3.OperationalError:  # a read-only file without the table
                row = None
        return None if row is None else str(row[0])

    def store(self, key: str, spec: str, request: str, reply: str) -> None:
        """Store ``reply`` (JSON text) under ``key``, with the request it answers."""
        with self._lock:
            if self._db is None:
                raise RuntimeError(f"the response cache {self.path} is closed")
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, spec, request, reply, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, spec, request, reply, time.time()),
            )
            self._db.commit()

    def served(self, spec: str, base_url: str) -> str | None:
        """The model the server at ``base_url`` said it served for ``spec``, when recorded."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT identity FROM served WHERE spec = ? AND base_url = ?",
                    (spec, base_url),
                ).fetchone()
            except sqlite3.OperationalError:  # a file written before identities were kept
                row = None
        return None if row is None else str(row[0])

    def remember_served(self, spec: str, base_url: str, identity: str) -> None:
        """Record the model the server at ``base_url`` serves for ``spec``."""
        with self._lock:
            if self._db is None:
                return
            self._db.execute(
                "INSERT OR REPLACE INTO served (spec, base_url, identity) VALUES (?, ?, ?)",
                (spec, base_url, identity),
            )
            self._db.commit()

    async def alookup(self, key: str) -> str | None:
        return self.lookup(key)

    async def astore(self, key: str, spec: str, request: str, reply: str) -> None:
        self.store(key, spec, request, reply)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
            self._db = None


class DriverReplies:
    """The replies of the cache file ``path`` of a Ray run's driver, from one of its workers:
    every lookup and store runs in the one :class:`ReplyFile` of that file the driver's node
    holds for the run (:func:`maze_envs.policies.driver.adriver_call`)."""

    def __init__(self, path: str, mode: CacheMode) -> None:
        from maze_envs.policies.driver import driver_path

        self.path = Path(driver_path(path))
        self._key = (str(self.path), mode)

    def lookup(self, key: str) -> str | None:
        from maze_envs.policies.driver import driver_call

        found: str | None = driver_call(ReplyFile, self._key, "lookup", key)
        return found

    async def alookup(self, key: str) -> str | None:
        from maze_envs.policies.driver import adriver_call

        found: str | None = await adriver_call(ReplyFile, self._key, "lookup", key)
        return found

    def served(self, spec: str, base_url: str) -> str | None:
        from maze_envs.policies.driver import driver_call

        found: str | None = driver_call(ReplyFile, self._key, "served", spec, base_url)
        return found

    def remember_served(self, spec: str, base_url: str, identity: str) -> None:
        from maze_envs.policies.driver import driver_call

        driver_call(ReplyFile, self._key, "remember_served", spec, base_url, identity)

    async def astore(self, key: str, spec: str, request: str, reply: str) -> None:
        from maze_envs.policies.driver import adriver_call

        await adriver_call(ReplyFile, self._key, "store", key, spec, request, reply)

    def close(self) -> None:
        """Nothing to close here: the driver's node owns the file."""


def _open_replies(path: Path, mode: CacheMode) -> ReplyFile | DriverReplies:
    """The replies of the cache file ``path``: this process's own, or the driver's (a Ray
    worker of a benchmark run, see the module's docstring)."""
    from maze_envs.policies.driver import driver_link

    if driver_link() is not None:
        return DriverReplies(str(path), mode)
    return ReplyFile(path, mode)


class CachedBackend:
    """``backend`` behind a SQLite response cache at ``path`` (see the module's docstring).

    Counters ``hits``, ``misses`` and ``stored`` say what the cache did.
    """

    def __init__(
        self,
        backend: ModelBackend,
        path: str | Path,
        *,
        mode: CacheMode = "read_write",
        distinct_repeats: bool = False,
    ) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, got {mode!r}")
        self.backend = backend
        self.path = Path(path)
        self.mode: CacheMode = mode
        self.distinct_repeats = distinct_repeats
        self.hits = self.misses = self.stored = 0
        self._repeats: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._replies = None if mode == "off" else _open_replies(self.path, mode)
        #: the model the server says it serves (:meth:`identify`)
        self.identity: str | None = None
        self._recorded: tuple[str | None] | None = None  # the file's record of it

    @property
    def spec(self) -> str:
        return self.backend.spec

    @property
    def local(self) -> bool:
        return self.backend.local

    @property
    def output_modes(self) -> tuple[OutputMode, ...]:
        return self.backend.output_modes

    def dropped_settings(self, settings: ModelSettings) -> dict[str, str]:
        """The wrapped backend's dropped settings (a cached reply was asked with them too)."""
        return dropped_settings(self.backend, settings)

    @property
    def owns_transport(self) -> bool:
        """The wrapped backend's (see :mod:`llm_policies.capabilities`)."""
        return bool(getattr(self.backend, "owns_transport", True))

    def identify(self, identity: str | None) -> None:
        """The model the server serves, as it says (``None``: it does not say); see the module
        docstring. Recorded in the cache file against the spec and base URL."""
        if identity == self.identity:
            return
        self.identity = identity
        base_url = self._base_url
        if identity is None or base_url is None or self._replies is None:
            return
        if self.mode == "read_write":
            self._replies.remember_served(self.spec, base_url, identity)

    @property
    def _base_url(self) -> str | None:
        settings = getattr(self.backend, "settings", None)
        return getattr(settings, "base_url", None)

    def served(self) -> str | None:
        """What names the model in the keys (module docstring): ``None`` for a hosted model."""
        base_url = self._base_url
        if not self.local or base_url is None:
            return None
        if self.identity is not None:
            return self.identity
        if self.mode == "read_only" and self._replies is not None:
            if self._recorded is None:  # asked once: a replay's file does not change
                self._recorded = (self._replies.served(self.spec, base_url),)
            if self._recorded[0] is not None:
                return self._recorded[0]
        return f"{self.spec}@{base_url}"

    @property
    def context_window(self) -> int | None:
        """The wrapped backend's known context window, if it knows one."""
        window = getattr(self.backend, "context_window", None)
        return window if isinstance(window, int) else None

    def key(self, request: ModelRequest) -> str:
        """The cache key of ``request`` (with its repeat number when ``distinct_repeats``)."""
        key = request_key(self.spec, request, self.served())
        if self.distinct_repeats:
            with self._lock:
                n = self._repeats[key]
                self._repeats[key] += 1
            key = f"{key}:{n}"
        return key

    def lookup(self, key: str) -> ModelReply | None:
        """The stored reply under ``key``, if any."""
        if self._replies is None:
            return None
        text = self._replies.lookup(key)
        return None if text is None else _reply_from_json(text)

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self._replies is None:
            return await self.backend.complete(request)
        key = self.key(request)
        text = await self._replies.alookup(key)
        if text is not None:
            self.hits += 1
            return _reply_from_json(text)
        self.misses += 1
        if self.mode == "read_only":
            raise CacheMiss(
                f"{self.spec}: the read-only response cache {self.path} has no reply for this "
                f"request (key {key[:16]}...): the run departs from the recorded one here",
                kind="refused",
            )
        reply = await self.backend.complete(request)
        await self._replies.astore(
            key, self.spec, request_json(self.spec, request, self.served()), _reply_json(reply)
        )
        self.stored += 1
        return reply

    def stats(self) -> dict[str, Any]:
        """What the cache did (for the results)."""
        return {
            "path": str(self.path),
            "mode": self.mode,
            "hits": self.hits,
            "misses": self.misses,
            "stored": self.stored,
        }

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self._replies is not None:
            self._replies.close()
        self._replies = None
