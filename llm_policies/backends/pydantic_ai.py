"""Hosted models (and OpenAI-compatible servers) through pydantic-ai's direct request API.

``pydantic_ai.direct.model_request`` sends one request and returns the provider's reply without
validating it as output, so the harness sees what the model really sent (a tool call's raw
arguments, text with fences or trailing prose) and applies its own quirk rules.

* ``tool`` mode: the reply schema is an *output tool* the model must call (``tool_choice``
  required / ``any``);
* ``native`` mode: the provider's JSON-schema output (``response_format`` / ``text.format`` /
  Anthropic ``output_config``);
* ``grammar`` mode (Chat Completions only): ``response_format: {"type": "json_object", "schema":
  ...}``, which llama.cpp's server and llama-cpp-python turn into a grammar that constrains
  decoding to the schema (they reject ``json_schema``); the schema is in the prompt too;
* ``json_object`` mode (Chat Completions only): ``response_format: {"type": "json_object"}``,
  the schema being in the harness's prompt (what most OpenAI-compatible servers honour);
* ``prompted`` mode: plain text (the harness's prompt asks for JSON).

The system prompt goes as instructions, with an Anthropic cache breakpoint on it (also through
OpenRouter for Anthropic models) so the stable prefix is cached, and, for a request whose
messages are a growing history (``ModelRequest.cache_history``), one on the last message too, so
the next step reads the whole earlier conversation from the cache; other providers cache
prefixes by themselves. The SDKs' own retries are off (``max_retries=0``): retries, backoff and
the per-call deadline are :mod:`llm_policies.backends.retry`'s.

Output cap: OpenAI's Chat Completions reads ``max_completion_tokens``, which OpenAI-compatible
servers such as llama.cpp's ignore (replies then run to thousands of tokens), so a Chat
Completions backend sent anywhere but OpenAI sends ``max_tokens``, the field they read.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic_ai import exceptions as pai_errors
from pydantic_ai.direct import model_request
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.messages import ModelRequest as PydanticRequest
from pydantic_ai.models import Model, ModelRequestParameters, infer_model
from pydantic_ai.output import OutputObjectDefinition
from pydantic_ai.settings import ModelSettings as PydanticSettings
from pydantic_ai.tools import ToolDefinition

from llm_policies.accounting import price
from llm_policies.backends.base import (
    ModelError,
    ModelReply,
    ModelRequest,
    context_error,
    parse_spec,
)
from llm_policies.backends.providers import (
    ANTHROPIC_PREFIXES,
    PLACEHOLDER_KEY,
    SHARED_PROVIDERS,
    SharedProviders,
    build_provider,
)
from llm_policies.backends.retry import RETRIED_4XX, RetryPolicy, call_with_retries
from llm_policies.settings import OUTPUT_MODES, ModelSettings, OutputMode, request_values
from maze_envs.policies.interface import Usage

__all__ = [
    "PLACEHOLDER_KEY",
    "SHARED_PROVIDERS",
    "PydanticAIBackend",
    "SharedProviders",
    "build_provider",
    "classify",
    "dropped_by",
    "is_openai_endpoint",
]

#: The request settings as pydantic-ai's model settings name them.
REQUEST_NAMES: Final = {
    "temperature": "temperature",
    "max_output_tokens": "max_tokens",
    "seed": "seed",
    "reasoning_effort": "thinking",
}
# prefixes that speak Chat Completions to a base URL of the user's (json_object, max_tokens)
_CHAT_PREFIXES = frozenset({"openai-chat"})
#: Hosts that are OpenAI itself (they read ``max_completion_tokens``).
OPENAI_HOSTS = frozenset({"api.openai.com"})


def is_openai_endpoint(base_url: str | None) -> bool:
    """Whether requests go to OpenAI itself (no base URL, or OpenAI's own host).

    >>> is_openai_endpoint(None), is_openai_endpoint("http://127.0.0.1:8080/v1")
    (True, False)
    """
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    return not url or urlsplit(url).hostname in OPENAI_HOSTS


def pydantic_settings(
    settings: ModelSettings,
    prefix: str,
    model_name: str,
    *,
    cache_history: bool = False,
    grammar: dict[str, Any] | None = None,
) -> PydanticSettings:
    """pydantic-ai's model settings for ``settings`` (SDK retries off: ours count and wait).

    ``cache_history`` adds a cache breakpoint on the last message (Anthropic, also through
    OpenRouter), so a growing conversation is read from the cache on the next request.
    ``grammar`` (a JSON schema) replaces the request's ``response_format`` by llama.cpp's
    ``{"type": "json_object", "schema": ...}``.
    """
    out: dict[str, Any] = {"max_retries": 0, "timeout": settings.timeout_s}
    out.update(request_values(settings, REQUEST_NAMES))
    if grammar is not None:
        out["extra_body"] = {"response_format": {"type": "json_object", "schema": grammar}}
    if prefix in ANTHROPIC_PREFIXES:
        out["anthropic_cache_instructions"] = True
        if cache_history:
            out["anthropic_cache_messages"] = True
    elif prefix == "openrouter" and model_name.startswith("anthropic/"):
        out["openrouter_cache_instructions"] = True
        if cache_history:
            out["openrouter_cache_messages"] = True
    return PydanticSettings(**out)  # type: ignore[typeddict-item]  # provider keys are extra


def request_parameters(request: ModelRequest) -> ModelRequestParameters:
    """The output part of the request: a forced output tool, a native schema, or text."""
    schema = copy.deepcopy(request.schema)  # the schema transformers must not touch ours
    if request.output_mode == "tool":
        tool = ToolDefinition(
            name=request.schema_name,
            parameters_json_schema=schema,
            description=schema.get("description"),
            kind="output",
        )
        return ModelRequestParameters(
            output_mode="tool", output_tools=[tool], allow_text_output=False
        )
    if request.output_mode == "native":
        output = OutputObjectDefinition(
            json_schema=schema, name=request.schema_name, description=schema.get("description")
        )
        return ModelRequestParameters(output_mode="native", output_object=output)
    if request.output_mode in ("json_object", "grammar"):
        # pydantic-ai's "prompted" mode sends response_format json_object where the model's
        # profile says the server supports it; without an output object it adds no prompt text
        # (the schema is in our system prompt)
        return ModelRequestParameters(output_mode="prompted", allow_text_output=True)
    return ModelRequestParameters()


def conversation(request: ModelRequest) -> list[ModelMessage]:
    """The request's messages in pydantic-ai's form; the system prompt as instructions."""
    messages: list[ModelMessage] = []
    for message in request.messages:
        if message.role == "user":
            messages.append(PydanticRequest(parts=[UserPromptPart(message.content)]))
        else:
            messages.append(ModelResponse(parts=[TextPart(message.content)]))
    last = messages[-1]
    assert isinstance(last, PydanticRequest)  # ModelRequest guarantees a user message last
    last.instructions = request.system or None
    return messages


def classify(error: Exception) -> ModelError | None:
    """A pydantic-ai / SDK failure as a :class:`ModelError` (``None``: not a model failure)."""
    message = f"{type(error).__name__}: {error}"
    if isinstance(error, pai_errors.ModelRequestTimeout | pai_errors.ModelTimeoutError):
        return ModelError(message, kind="timeout", retryable=True)
    if isinstance(error, pai_errors.ModelConnectionError):
        return ModelError(message, kind="connection", retryable=True)
    if isinstance(error, pai_errors.ModelQuotaExceededError):
        status = getattr(error, "status_code", None)
        return ModelError(message, kind="refused", status=status)
    if isinstance(error, pai_errors.ModelAPIError):
        status = getattr(error, "status_code", None)
        retry_after = error.retry_after
        context = context_error(status, message)
        if context is not None:
            return context
        if (
            isinstance(error, pai_errors.ModelRateLimitError)
            or status == HTTPStatus.TOO_MANY_REQUESTS
        ):
            return ModelError(
                message, kind="rate_limit", retryable=True, status=status, retry_after=retry_after
            )
        if isinstance(error, pai_errors.ModelServerError | pai_errors.ModelUnavailableError) or (
            status is not None
            and (status >= HTTPStatus.INTERNAL_SERVER_ERROR or status in RETRIED_4XX)
        ):
            return ModelError(
                message, kind="server", retryable=True, status=status, retry_after=retry_after
            )
        if status is not None or isinstance(error, pai_errors.ModelRequestRejectedError):
            return ModelError(message, kind="refused", status=status)
        # no status: the body could not be read (malformed JSON...)
        return ModelError(message, kind="protocol", retryable=True)
    if isinstance(error, pai_errors.UnexpectedModelBehavior):
        return ModelError(message, kind="protocol", retryable=True)
    if isinstance(error, ValueError | TypeError | AttributeError | KeyError):
        # an SDK tripping over a body that is not the promised object (pydantic-ai lets
        # e.g. a JSON list through to the Responses SDK, which fails on attribute access)
        return ModelError(message, kind="protocol", retryable=True)
    return None


def _tool_arguments(part: ToolCallPart) -> str:
    # OpenAI sends arguments as text (kept verbatim); Anthropic sends an object (its keys kept in
    # the order they arrived)
    if isinstance(part.args, str):
        return part.args
    return json.dumps(part.args if part.args is not None else {}, ensure_ascii=False)


def _chat_model(prefix: str, model: Model, provider: Any, settings: ModelSettings) -> Model:
    """``model``, for a Chat Completions prefix with the profile its endpoint needs."""
    if prefix not in _CHAT_PREFIXES:
        return model
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile

    if type(model) is not OpenAIChatModel:
        return model
    # json_object mode; and the output-cap field the endpoint reads (see the docstring)
    return OpenAIChatModel(
        model.model_name,
        provider=provider,
        profile=OpenAIModelProfile(
            supports_json_object_output=True,
            openai_chat_supports_max_completion_tokens=is_openai_endpoint(settings.base_url),
        ),
    )


#: The request fields each of our settings travels in (one of them, by protocol).
_WIRE_FIELDS: Final = {
    "temperature": ("temperature",),
    "seed": ("seed",),
    "max_output_tokens": ("max_tokens", "max_completion_tokens", "max_output_tokens"),
}
#: What the settings probe's transport answers: a refusal, so nothing is parsed or retried.
_PROBE_REFUSAL: Final = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "settings probe (never sent)"},
}
_PROBED: dict[tuple[str, str], dict[str, str]] = {}
_PROBED_LOCK = threading.Lock()


def dropped_by(spec: str, settings: ModelSettings) -> dict[str, str]:
    """The settings of ``settings`` that requests to ``spec`` go out without, with the reason.

    Found by building one request on pydantic-ai's real path to the wire and reading its body (a
    transport inside the process answers it, so nothing is sent and no key is needed): a setting
    whose field is not in the body was dropped, for the reason pydantic-ai warned of. Known once
    per spec and settings in a process.
    """
    key = (spec, settings.model_dump_json())
    with _PROBED_LOCK:
        known = _PROBED.get(key)
    if known is None:
        # its own thread and event loop: callers may be inside a running loop or not
        with ThreadPoolExecutor(max_workers=1) as pool:
            known = pool.submit(asyncio.run, _probe_dropped(spec, settings)).result()
        with _PROBED_LOCK:
            _PROBED[key] = known
    return dict(known)


async def _probe_dropped(spec: str, settings: ModelSettings) -> dict[str, str]:
    """The probe of :func:`dropped_by`."""
    import httpx2

    bodies: list[dict[str, Any]] = []

    def answer(sent: httpx2.Request) -> httpx2.Response:
        try:
            bodies.append(json.loads(sent.content or b"{}"))
        except ValueError:
            bodies.append({})
        return httpx2.Response(HTTPStatus.BAD_REQUEST, json=_PROBE_REFUSAL)

    prefix, name = parse_spec(spec)
    asked = {
        field: getattr(settings, field)
        for field in _WIRE_FIELDS
        if getattr(settings, field) is not None
    }
    if not asked:
        return {}
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as client:
        provider = build_provider(prefix, settings.base_url, client, keyless=True)
        model = _chat_model(
            prefix, infer_model(spec, provider_factory=lambda _name: provider), provider, settings
        )
        request = [PydanticRequest(parts=[UserPromptPart("settings probe")])]
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            with contextlib.suppress(Exception):  # the refusal (or a provider's own check)
                await model_request(
                    model,
                    request,
                    model_settings=pydantic_settings(settings, prefix, name),
                    model_request_parameters=ModelRequestParameters(),
                )
    if not bodies:
        return {}  # the client refused before sending: nothing known, nothing claimed
    sent = bodies[0]
    notes = [str(w.message) for w in warned]
    dropped: dict[str, str] = {}
    for field in asked:
        if any(wire in sent for wire in _WIRE_FIELDS[field]):
            continue
        wire = _WIRE_FIELDS[field][0]
        why = next((n for n in notes if f"'{wire}'" in n or f"`{wire}`" in n), None)
        dropped[field] = why or f"pydantic-ai sends requests to {spec} without {wire!r}"
    return dropped


class PydanticAIBackend:
    """A hosted model behind one pydantic-ai ``Model``.

    Args:
        spec: the model spec (``"anthropic:claude-sonnet-5-5"``...), also the pricing key.
        settings: the game's model settings (a request's own settings take precedence).
        model: the pydantic-ai model (any, including ``TestModel`` and ``FunctionModel``).
        local: cost 0 and ``"local"`` (a server of your own).
        retry: backoff shape and jitter seed.
        owns_client: the backend built the provider's HTTP client, so ``aclose`` closes it.
    """

    def __init__(
        self,
        spec: str,
        settings: ModelSettings,
        model: Model,
        *,
        local: bool = False,
        retry: RetryPolicy | None = None,
        owns_client: bool = False,
        shared_key: str | None = None,
    ) -> None:
        self.spec = spec
        self._shared_key = shared_key
        self.settings = settings
        self.model = model
        self.local = local
        self.retry = retry or RetryPolicy()
        self._rng = self.retry.rng()
        self._prefix, self._name = parse_spec(spec)
        self._owns_client = owns_client
        self.output_modes: tuple[OutputMode, ...] = tuple(
            m
            for m in OUTPUT_MODES
            if m not in ("json_object", "grammar") or self._prefix in _CHAT_PREFIXES
        )

    @classmethod
    def from_spec(
        cls,
        spec: str,
        settings: ModelSettings,
        *,
        client: Any = None,
        provider: Any = None,
        retry: RetryPolicy | None = None,
        local: bool = False,
    ) -> PydanticAIBackend:
        """The backend of a pydantic-ai model string (see :func:`.make_backend`)."""
        prefix, _ = parse_spec(spec)
        shared_key: str | None = None
        if provider is None and client is None:
            shared_key, provider = SHARED_PROVIDERS.acquire(prefix, settings.base_url)
        elif provider is None:
            provider = build_provider(prefix, settings.base_url, client)
        elif client is not None or settings.base_url is not None:
            raise ValueError(
                "give either provider= or client=/base_url (the provider carries its own client)"
            )
        try:
            model = infer_model(spec, provider_factory=lambda _name: provider)
        except pai_errors.UserError as error:
            if shared_key is not None:
                SHARED_PROVIDERS.release(shared_key)
            raise ValueError(f"cannot make a model of {spec!r}: {error.message}") from error
        return cls(
            spec,
            settings,
            _chat_model(prefix, model, provider, settings),
            local=local,
            retry=retry,
            owns_client=shared_key is not None,
            shared_key=shared_key,
        )

    def dropped_settings(self, settings: ModelSettings) -> dict[str, str]:
        """What requests to this model go out without, of ``settings`` (:func:`dropped_by`)."""
        return dropped_by(self.spec, settings)

    @property
    def owns_transport(self) -> bool:
        """Whether requests go where the settings say (not through a client or provider of the
        caller's, which may send them anywhere)."""
        return self._shared_key is not None

    @property
    def context_window(self) -> int | None:
        """The model's context window as pydantic-ai knows it (genai-prices), or ``None``."""
        try:
            window = self.model.context_window
        except Exception:  # a profile lookup must never fail a game
            return None
        return window if isinstance(window, int) else None

    async def complete(self, request: ModelRequest) -> ModelReply:
        settings = request.settings
        messages = conversation(request)
        params = request_parameters(request)
        model_settings = pydantic_settings(
            settings,
            self._prefix,
            self._name,
            cache_history=request.cache_history,
            grammar=request.schema if request.output_mode == "grammar" else None,
        )
        # A synchronous act() runs each turn on a fresh event loop; connections belong to the
        # loop that opened them, so the provider's own client is replaced when the loop changed
        # (what an agent run does at its start; the direct API leaves it to the caller).
        self.model._refresh_http_client()

        async def attempt() -> tuple[ModelResponse, float]:
            started = time.perf_counter()
            response = await model_request(
                self.model,
                messages,
                model_settings=model_settings,
                model_request_parameters=params,
            )
            return response, time.perf_counter() - started

        (response, latency), failures = await call_with_retries(
            attempt,
            what=self.spec,
            settings=settings,
            policy=self.retry,
            rng=self._rng,
            classify=classify,
        )
        texts = [p.content for p in response.parts if isinstance(p, TextPart)]
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        tokens = response.usage
        usage = price(
            self.spec,
            Usage(
                input_tokens=tokens.input_tokens,
                output_tokens=tokens.output_tokens,
                cache_read_tokens=tokens.cache_read_tokens,
                cache_write_tokens=tokens.cache_write_tokens,
                requests=1,
                latency_s=latency,
            ),
            local=self.local,
            reported_model=response.model_name,
        )
        raw: dict[str, Any] = ModelMessagesTypeAdapter.dump_python([response], mode="json")[0]
        return ModelReply(
            text="".join(texts) if texts else None,
            tool_arguments=_tool_arguments(calls[0]) if calls else None,
            usage=usage,
            model=response.model_name or self._name,
            latency_s=latency,
            raw=raw,
            retries=failures,
            finish_reason=response.finish_reason,
        )

    async def aclose(self) -> None:
        if self._shared_key is not None:
            key, self._shared_key = self._shared_key, None
            if not SHARED_PROVIDERS.release(key):
                return  # other backends still send through this provider
        elif not self._owns_client:
            return  # a client or provider of the caller's: theirs to close
        self._owns_client = False
        # entering and leaving the model's context closes the HTTP client its provider made
        await self.model.__aenter__()
        await self.model.__aexit__(None, None, None)
