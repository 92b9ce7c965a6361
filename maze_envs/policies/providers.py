"""The language-model providers a policy spec can name (``anthropic:claude-sonnet-5-5``),
defined once.

:data:`MODEL_PROVIDERS` is the one table: the prefixes registered in the ``maze_envs.policies``
entry-point group (``pyproject.toml``; a test keeps the two equal), the local-cost rule
(``local``: the model runs on your own hardware and costs 0, :mod:`llm_policies.accounting`), the
prefixes :mod:`llm_policies.registry` serves, and the error a spec with an unknown prefix gets
(:func:`unknown_prefix`) all derive from it. It lives below the LLM policies so the registry can
name the prefixes even when the ``llm`` extra is not installed.

Example:
    >>> LLM_PREFIXES
    ('anthropic', 'openai', 'openai-chat', 'openrouter', 'ollama', 'scripted', 'stand-in')
    >>> sorted(LOCAL_PREFIXES)
    ['ollama', 'scripted', 'stand-in']
    >>> print(unknown_prefix("antropic:claude-sonnet-5-5"))  # doctest: +NORMALIZE_WHITESPACE
    unknown model provider prefix 'antropic' in 'antropic:claude-sonnet-5-5'; did you mean
    'anthropic'? Language-model prefixes: anthropic:, openai:, openai-chat:, openrouter:, ollama:,
    scripted:, stand-in:
"""

from __future__ import annotations

import difflib
from typing import Final, NamedTuple


class ModelProvider(NamedTuple):
    """One provider prefix of an LLM policy spec."""

    prefix: str
    about: str
    #: the model runs on your own hardware: it costs 0 and its cost is marked ``"local"``
    local: bool = False
    #: registered in the ``maze_envs.policies`` entry-point group (``scripted:`` is for tests)
    entry_point: bool = True


#: Every provider prefix of the LLM policies, in the order messages list them.
MODEL_PROVIDERS: Final = (
    ModelProvider("anthropic", "Anthropic's Messages API"),
    ModelProvider("openai", "OpenAI's Responses API"),
    ModelProvider("openai-chat", "Chat Completions, what most OpenAI-compatible servers speak"),
    ModelProvider("openrouter", "OpenRouter"),
    ModelProvider("ollama", "Ollama's native /api/chat", local=True),
    ModelProvider("scripted", "scripted replies; a stand-in model without a script", local=True),
    ModelProvider("stand-in", "offline stand-ins, such as stand-in:wall-follower", local=True),
)
#: The prefixes registered as ``maze_envs.policies`` entry points (the ``llm`` extra).
LLM_PREFIXES: Final = tuple(p.prefix for p in MODEL_PROVIDERS if p.entry_point)
#: The prefixes whose models are local (cost 0).
LOCAL_PREFIXES: Final = frozenset(p.prefix for p in MODEL_PROVIDERS if p.local)


def listed() -> str:
    """The registered prefixes as a spec writes them: ``anthropic:, openai:, ...``."""
    return ", ".join(f"{prefix}:" for prefix in LLM_PREFIXES)


def bare_prefix(spec: str) -> str | None:
    """The error of a spec that is a provider prefix with no model (``"scripted"``), or None
    when ``spec`` is not one.

    >>> print(bare_prefix("ollama"))  # doctest: +NORMALIZE_WHITESPACE
    'ollama' names a model provider (Ollama's native /api/chat), not a model: name the model
    after it, as ollama:<model>; offline, with no model at all: stand-in:wall-follower
    """
    provider = next((p for p in MODEL_PROVIDERS if p.prefix == spec.strip()), None)
    if provider is None:
        return None
    return (
        f"{provider.prefix!r} names a model provider ({provider.about}), not a model: name the "
        f"model after it, as {provider.prefix}:<model>; offline, with no model at all: "
        "stand-in:wall-follower"
    )


def unknown_prefix(spec: str) -> str:
    """The error of a spec (or a bare prefix) that names no provider: the prefixes allowed, and
    the closest one when the prefix looks misspelt."""
    prefix, _, model = spec.partition(":")
    close = difflib.get_close_matches(prefix, LLM_PREFIXES, n=1)
    where = f" in {spec!r}" if model else ""
    hint = f"; did you mean {close[0]!r}?" if close else "."
    return (
        f"unknown model provider prefix {prefix!r}{where}{hint} Language-model prefixes: {listed()}"
    )
