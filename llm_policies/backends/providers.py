"""pydantic-ai providers: built for a prefix, a base URL and/or a client; shared by backends.

:func:`build_provider` makes the provider of a model prefix sent to a base URL or through a
client of the caller's; :data:`SHARED_PROVIDERS` lets every backend of one prefix, base URL and
environment send through a few shared providers (one connection pool each) instead of building
one per agent per game.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import threading
from typing import Any

from pydantic_ai.providers import Provider, infer_provider_class

from maze_envs.policies.providers import unknown_prefix

# OpenAI-compatible servers that need no key still need a non-empty one in the SDK
PLACEHOLDER_KEY = "api-key-not-set"
# prefixes whose model is pydantic-ai's Anthropic model (a proxy of it may need no key)
ANTHROPIC_PREFIXES = frozenset({"anthropic", "gateway/anthropic"})


def _is_http_client(client: object) -> bool:
    module = type(client).__module__.split(".")[0]
    return module in {"httpx", "httpx2"} and type(client).__name__ == "AsyncClient"


def _env_key(prefix: str) -> str:
    """The usual key variable of a provider prefix (``openai-chat`` -> ``OPENAI_API_KEY``)."""
    return prefix.split("/")[-1].split("-")[0].upper() + "_API_KEY"


def build_provider(
    prefix: str, base_url: str | None, client: Any = None, *, keyless: bool = False
) -> Provider[Any]:
    """The pydantic-ai provider of ``prefix``, sent to ``base_url`` and/or through ``client``.

    ``client`` is an ``httpx2``/``httpx`` ``AsyncClient`` (proxies, test transports) or an SDK
    client (``openai.AsyncOpenAI``, ``anthropic.AsyncAnthropic``). Providers that take no base
    URL (OpenRouter) are redirected through an ``AsyncOpenAI`` client built for ``base_url``.
    ``keyless``: a placeholder key where the provider's key variable is unset (a provider whose
    requests never leave the process, as the settings probe's).
    """
    try:
        cls = infer_provider_class(prefix)
    except ValueError:
        raise ValueError(
            f"{unknown_prefix(prefix)}, scripted: (tests) or another pydantic-ai provider "
            "prefix (google-gla:, groq:, mistral:, deepseek:...)"
        ) from None
    accepts = set(inspect.signature(cls.__init__).parameters)
    kwargs: dict[str, Any] = {}
    if client is not None:
        if _is_http_client(client):
            kwargs["http_client"] = client
        elif "openai_client" in accepts and type(client).__module__.startswith("openai"):
            kwargs["openai_client"] = client
        elif "anthropic_client" in accepts and type(client).__module__.startswith("anthropic"):
            kwargs["anthropic_client"] = client
        else:
            raise TypeError(
                f"client for {prefix}: must be an httpx2/httpx AsyncClient or the provider's SDK "
                f"client, got {type(client).__module__}.{type(client).__name__}"
            )
    if keyless and "api_key" in accepts and not os.environ.get(_env_key(prefix)):
        kwargs["api_key"] = PLACEHOLDER_KEY
    if base_url is not None:
        if "openai_client" in kwargs or "anthropic_client" in kwargs:
            raise ValueError(
                "base_url and an SDK client were both given: set the base URL on the client"
            )
        key = os.environ.get(_env_key(prefix))
        if "base_url" in accepts:
            kwargs["base_url"] = base_url
            if prefix in ANTHROPIC_PREFIXES and not key:
                kwargs["api_key"] = PLACEHOLDER_KEY  # a proxy that needs no key
        elif "openai_client" in accepts:
            from openai import AsyncOpenAI

            http_client = kwargs.pop("http_client", None)
            kwargs["openai_client"] = AsyncOpenAI(
                base_url=base_url, api_key=key or PLACEHOLDER_KEY, http_client=http_client
            )
        else:
            raise ValueError(
                f"the {prefix}: provider cannot be sent to another base URL; pass a "
                "pydantic-ai provider instead: make_backend(spec, settings, provider=...)"
            )
    return cls(**kwargs)


class SharedProviders:
    """Providers shared by every backend of the same prefix, base URL and environment.

    Building a provider builds an SDK client and an HTTP client (with its TLS context: tens of
    milliseconds of CPU), and each client keeps its own connection pool. A benchmark builds one
    backend per agent per game, so the backends that :meth:`PydanticAIBackend.from_spec` makes
    without a client or provider of the caller's share one provider (one connection pool),
    counted: the last backend to close closes it. The key holds the environment's key and base
    URL variables (as a digest), so a changed key builds a new provider.

    >>> shared = SharedProviders(slots=2)
    >>> key, provider = shared.acquire("openai-chat", "http://localhost:8000/v1")
    >>> len(shared), shared.release(key), len(shared)
    (1, True, 0)
    """

    def __init__(self, slots: int = 8) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[Provider[Any], int]] = {}
        self.slots = slots
        self._next = 0

    @staticmethod
    def key(prefix: str, base_url: str | None) -> str:
        env = sorted(
            (name, value)
            for name, value in os.environ.items()
            if name.endswith(("_API_KEY", "_BASE_URL", "_HOST"))
        )
        digest = hashlib.sha256(json.dumps(env).encode()).hexdigest()[:16]
        return f"{prefix}|{base_url}|{digest}"

    def acquire(self, prefix: str, base_url: str | None) -> tuple[str, Provider[Any]]:
        """The shared provider of ``prefix`` at ``base_url`` (built on first use) and its key."""
        with self._lock:
            # a few pools, not one: httpcore scans every connection of a pool for each request
            # it places, which costs more than a new pool's TLS set-up once 48 are in flight
            key = f"{self.key(prefix, base_url)}|{self._next % self.slots}"
            self._next += 1
            entry = self._entries.get(key)
            if entry is None:
                entry = (build_provider(prefix, base_url), 0)
            self._entries[key] = (entry[0], entry[1] + 1)
            return key, entry[0]

    def release(self, key: str) -> bool:
        """One user fewer; True when it was the last (the caller then closes the client)."""
        with self._lock:
            provider, users = self._entries[key]
            if users > 1:
                self._entries[key] = (provider, users - 1)
                return False
            del self._entries[key]
            return True

    def __len__(self) -> int:
        return len(self._entries)


#: The providers shared by the backends of this process (see :class:`SharedProviders`).
SHARED_PROVIDERS = SharedProviders()
