"""The backend of a model spec: :func:`make_backend`, above the backends it chooses among
(scripted, Ollama, pydantic-ai), which import only :mod:`~llm_policies.backends.base` below them.
"""

from __future__ import annotations

from typing import Any

from llm_policies.backends.base import ModelBackend, parse_spec
from llm_policies.settings import ModelSettings

INSTALL_HINT = "install the LLM extra: pip install 'maze-envs[llm]'"


def make_backend(
    spec: str,
    settings: ModelSettings | None = None,
    *,
    client: Any = None,
    provider: Any = None,
    local: bool | None = None,
    retry: Any = None,
) -> ModelBackend:
    """The backend for ``spec``.

    Args:
        spec: ``"anthropic:<model>"``, ``"openai:<model>"`` (OpenAI's Responses API),
            ``"openai-chat:<model>"`` (Chat Completions, what most OpenAI-compatible servers
            speak), ``"openrouter:<vendor>/<model>"``, any other pydantic-ai provider prefix,
            ``"ollama:<model>"`` (Ollama's native ``/api/chat``) or ``"scripted:<name>"`` (a
            stand-in model of :mod:`llm_policies.backends.stand_in` such as
            ``scripted:wall-follower``, or, with ``client=``, a script of your own).
        settings: the model settings (defaults when ``None``).
        client: an SDK client to send through (an ``openai.AsyncOpenAI``,
            ``anthropic.AsyncAnthropic``, ``ollama.AsyncClient``, or an ``httpx2``/``httpx``
            ``AsyncClient``); for ``scripted:`` the script (see
            :class:`~llm_policies.backends.scripted.ScriptedBackend`; without one, the named
            stand-in model).
        provider: a pydantic-ai ``Provider`` instance (proxies, OpenRouter through a gateway...).
        local: count the model as local (cost 0, ``"local"``), e.g. a vLLM server of your own;
            ``None``: only Ollama and scripted backends are local.
        retry: a :class:`~llm_policies.backends.retry.RetryPolicy` (backoff shape, seeded jitter).
    """
    settings = settings if settings is not None else ModelSettings()
    prefix, _ = parse_spec(spec)
    if prefix in ("scripted", "stand-in"):  # stand-in:NAME is always a named stand-in
        from llm_policies.backends.scripted import ScriptedBackend

        if client is None:  # a named stand-in model (scripted:wall-follower), or an error
            from llm_policies.backends.stand_in import stand_in_script

            client = stand_in_script(spec)
        return ScriptedBackend(client, spec=spec, settings=settings)
    if prefix == "ollama":
        try:
            from llm_policies.backends.ollama import OllamaBackend
        except ImportError as error:  # the ollama client is an optional dependency
            raise ImportError(
                f"the ollama: backend needs the ollama client; {INSTALL_HINT}"
            ) from error
        return OllamaBackend(
            spec, settings, client=client, retry=retry, local=True if local is None else local
        )
    try:
        from llm_policies.backends.pydantic_ai import PydanticAIBackend
    except ImportError as error:  # pydantic-ai is an optional dependency
        raise ImportError(f"hosted models go through pydantic-ai; {INSTALL_HINT}") from error
    return PydanticAIBackend.from_spec(
        spec, settings, client=client, provider=provider, retry=retry, local=bool(local)
    )
