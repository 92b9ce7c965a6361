"""The policy-spec prefixes (``anthropic:claude-sonnet-5-5``, ``learned:escape-ppo``), defined once:
the language-model providers and the trained policies.

:data:`MODEL_PROVIDERS` is the one table: the prefixes registered in the ``maze_envs.policies``
entry-point group (``pyproject.toml``; a test keeps the two equal), the local-cost rule
(``local``: the model runs on your own hardware and costs 0, :mod:`llm_policies.accounting`), the
prefixes :mod:`llm_policies.registry` serves, and the error a spec with an unknown prefix gets
(:func:`unknown_prefix`) all derive from it. It lives below the LLM policies so the registry can
name the prefixes even when the ``llm`` extra is not installed.

:data:`TRAINED_PREFIXES` are the prefixes of trained policies (:mod:`maze_envs.policies.learned`:
``learned:`` shipped or saved weights, ``sb3:`` a Stable-Baselines3 model file), registered in
the same entry-point group; :data:`ENTRY_POINTS` is the whole group, prefix -> factory.

Example:
    >>> LLM_PREFIXES
    ('anthropic', 'openai', 'openai-chat', 'openrouter', 'ollama', 'scripted', 'stand-in')
    >>> sorted(LOCAL_PREFIXES)
    ['ollama', 'scripted', 'stand-in']
    >>> [p.prefix for p in TRAINED_PREFIXES]
    ['learned', 'sb3']
    >>> print(unknown_prefix("antropic:claude-sonnet-5-5"))  # doctest: +NORMALIZE_WHITESPACE
    unknown model provider prefix 'antropic' in 'antropic:claude-sonnet-5-5'; did you mean
    'anthropic'? Language-model prefixes: anthropic:, openai:, openai-chat:, openrouter:, ollama:,
    scripted:, stand-in: (trained policies: learned:, sb3:)
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


class TrainedPrefix(NamedTuple):
    """One prefix of a trained policy's spec."""

    prefix: str
    about: str


#: The prefixes of trained policies, in the order messages list them.
TRAINED_PREFIXES: Final = (
    TrainedPrefix("learned", "weights shipped or saved as .npz (learned:escape-ppo)"),
    TrainedPrefix("sb3", "a Stable-Baselines3 model file (sb3:path/to/model.zip)"),
)
#: The factory of each prefix's policies (LLM prefixes: the ``llm`` extra's registry).
LLM_FACTORY: Final = "llm_policies.registry:make_llm_policy"
TRAINED_FACTORY: Final = "maze_envs.policies.learned:make_learned_policy"
#: The entry points of the group ``maze_envs.policies`` (``pyproject.toml``; a test keeps the
#: two equal), prefix -> factory.
ENTRY_POINTS: Final = {
    **dict.fromkeys(LLM_PREFIXES, LLM_FACTORY),
    **dict.fromkeys((p.prefix for p in TRAINED_PREFIXES), TRAINED_FACTORY),
}


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
    known = (*LLM_PREFIXES, *(p.prefix for p in TRAINED_PREFIXES))
    close = difflib.get_close_matches(prefix, known, n=1)
    where = f" in {spec!r}" if model else ""
    hint = f"; did you mean {close[0]!r}?" if close else "."
    trained = ", ".join(f"{p.prefix}:" for p in TRAINED_PREFIXES)
    return (
        f"unknown model provider prefix {prefix!r}{where}{hint} Language-model prefixes: {listed()}"
        f" (trained policies: {trained})"
    )
