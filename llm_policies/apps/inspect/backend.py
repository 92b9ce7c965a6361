"""A :class:`~llm_policies.backends.base.ModelBackend` on Inspect AI's model API.

The LLM policies send :class:`~llm_policies.backends.base.ModelRequest` objects and read raw
:class:`~llm_policies.backends.base.ModelReply` objects; this backend turns each request into one
``inspect_ai.model.Model.generate`` call, so the prompts, the schema, the quirk-tolerant parsing,
the re-asks and the decision records are the harness's own, and the provider, retries, rate
limits, concurrency and logging are Inspect's:

* ``tool`` mode: the reply schema is the one tool offered (a :class:`~inspect_ai.tool.ToolInfo`
  with the schema's properties in their order), forced with ``ToolFunction``;
* ``native`` mode: ``GenerateConfig(response_schema=...)`` (providers that support it);
* ``prompted`` mode: plain text (the system prompt holds the schema).

Inspect retries rate limits, server errors and timeouts itself (``--max-retries``,
``--timeout``, ``--attempt-timeout``, ``--max-connections``), so this backend never retries: a
call that still fails is a :class:`~llm_policies.backends.base.ModelUnavailable` (an outage,
never the model's play). An Inspect sample limit reached inside ``generate`` (``--token-limit``,
``--message-limit``, ``--cost-limit``) is kept in :attr:`InspectBackend.control` so the game
stops cleanly and the solver hands the limit back to Inspect.

Usage follows this library's convention: ``input_tokens`` counts every input token, cache reads
and writes included (Inspect's ``ModelUsage.input_tokens`` excludes them). The cost is Inspect's
own (``total_cost``) when it computed one, else genai-prices' for the provider and model, 0 for
models that run locally (``ollama``, ``vllm``, ``hf``, ``mockllm``...).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any, Final

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelName,
    ModelOutput,
    ModelUsage,
    ResponseSchema,
)
from inspect_ai.tool import ToolCall, ToolFunction, ToolInfo, ToolParams
from inspect_ai.util import JSONSchema, LimitExceededError

from llm_policies.accounting import price
from llm_policies.backends.base import (
    ModelReply,
    ModelRequest,
    ModelTimeout,
    ModelUnavailable,
)
from llm_policies.backends.retry import RETRIED_4XX
from llm_policies.settings import (
    OPENAI_NAMES,
    OUTPUT_MODES,
    ModelSettings,
    OutputMode,
    request_values,
    settings_values,
)
from maze_envs.policies.interface import Usage

#: Inspect providers whose models run on your own hardware: cost 0, marked ``local``.
LOCAL_PROVIDERS: Final = frozenset(
    {"mockllm", "ollama", "vllm", "sglang", "hf", "llama-cpp-python", "transformer_lens", "none"}
)
#: Inspect's text before and after the raw arguments in a tool call's ``parse_error``.
_PARSE_ERROR_HEAD: Final = "Error parsing the following tool call arguments:\n\n"
_PARSE_ERROR_TAIL: Final = "\n\nError details:"


@dataclass
class GameControl:
    """What the Inspect side of one game shares between its backends, policies and solver.

    ``limit``: the first Inspect sample limit a model call ran into (the game then stops and
    the solver raises it again, so Inspect records the limit and scores the game).
    """

    limit: LimitExceededError | None = None

    @property
    def stop_reason(self) -> str | None:
        """Why the game must stop, or None."""
        if self.limit is None:
            return None
        return f"Inspect {self.limit.type} limit reached: {limit_message(self.limit)}"


def limit_message(error: LimitExceededError) -> str:
    """The limit's own message, or its numbers when it has none."""
    return error.message or f"{error.value_str} of {error.limit_str}"


def provider_of(model: Model) -> str:
    """The Inspect provider of ``model`` (``anthropic``, ``openai``, ``mockllm``...)."""
    return ModelName(model).api


def inspect_spec(model: Model) -> str:
    """Our spec of an Inspect model: ``inspect:<provider>/<name>`` (``inspect:mockllm/model``)."""
    return f"inspect:{model}"


@functools.lru_cache(maxsize=64)
def _schema(text: str) -> JSONSchema:
    schema = JSONSchema.model_validate_json(text)
    sent = schema.model_dump(exclude_none=True)
    if sent != json.loads(text):
        raise ValueError(
            "the reply schema uses JSON-schema keywords Inspect's JSONSchema does not carry, so "
            f"the model would get another schema than the harness built: sent {sent}, built {text}"
        )
    return schema


def inspect_schema(schema: Mapping[str, Any]) -> JSONSchema:
    """``schema`` as Inspect's ``JSONSchema``, exactly (keys in their order); else ValueError.

    Inspect's model keeps only the keywords it knows, so a schema using others would silently
    reach the model changed: refused instead (one harness, the same schema on both front ends).
    """
    return _schema(json.dumps(schema, ensure_ascii=False))


#: The request settings as Inspect's ``GenerateConfig`` names them (the OpenAI API's names).
CONFIG_NAMES: Final = OPENAI_NAMES


def generate_config(request: ModelRequest) -> GenerateConfig:
    """The per-call Inspect config: the sampling settings of the request and the output mode.

    Transport settings (deadline, retries) are Inspect's and are not sent from here.
    """
    values: dict[str, Any] = request_values(request.settings, CONFIG_NAMES)
    if request.output_mode == "native":
        values["response_schema"] = ResponseSchema(
            name=request.schema_name,
            json_schema=inspect_schema(request.schema),
            description=request.schema.get("description"),
        )
    return GenerateConfig(**values)


def reply_tool(request: ModelRequest) -> ToolInfo:
    """The one tool of ``tool`` mode: the reply schema, its properties in the schema's order."""
    schema = request.schema
    properties = dict(inspect_schema(schema).properties or {})
    return ToolInfo(
        name=request.schema_name,
        description=schema.get("description") or "Your reply for this turn.",
        parameters=ToolParams(
            properties=properties,
            required=list(schema.get("required") or []),
            additionalProperties=bool(schema.get("additionalProperties", False)),
        ),
    )


def conversation(request: ModelRequest) -> list[ChatMessage]:
    """The request as Inspect messages: the system prompt first, then the conversation."""
    messages: list[ChatMessage] = [ChatMessageSystem(content=request.system)]
    for message in request.messages:
        if message.role == "user":
            messages.append(ChatMessageUser(content=message.content))
        else:
            messages.append(ChatMessageAssistant(content=message.content))
    return messages


def tool_arguments(call: ToolCall) -> str:
    """A tool call's arguments as text, as near to what the model sent as Inspect keeps.

    Inspect parses the arguments itself; when that failed, its ``parse_error`` quotes the raw
    text, which is given back so the harness's quirk rules see it (a Python literal...).
    """
    error = call.parse_error
    if error and error.startswith(_PARSE_ERROR_HEAD) and _PARSE_ERROR_TAIL in error:
        return error[len(_PARSE_ERROR_HEAD) : error.rindex(_PARSE_ERROR_TAIL)]
    return json.dumps(call.arguments, ensure_ascii=False)


def to_usage(model: Model, output: ModelOutput, latency_s: float) -> Usage:
    """Inspect's usage of one call in this library's convention, with its cost."""
    tokens = output.usage or ModelUsage()
    read = tokens.input_tokens_cache_read or 0
    write = tokens.input_tokens_cache_write or 0
    usage = Usage(
        input_tokens=tokens.input_tokens + read + write,
        output_tokens=tokens.output_tokens,
        cache_read_tokens=read,
        cache_write_tokens=write,
        requests=1,
        latency_s=latency_s,
    )
    if tokens.total_cost is not None:  # priced by Inspect (a model cost config)
        return replace(usage, cost_usd=float(tokens.total_cost), cost_status="priced")
    provider = provider_of(model)
    local = provider in LOCAL_PROVIDERS
    try:
        return price(f"{provider}:{model.name}", usage, local=local, reported_model=output.model)
    except ImportError:  # genai-prices missing: the cost stays unknown, never 0
        if local:
            return replace(usage, cost_usd=0.0, cost_status="local")
        return replace(usage, cost_usd=None, cost_status="unknown")


def unavailable(model: Model, error: Exception) -> ModelUnavailable:
    """A call that failed after Inspect's own retries, as an outage with a kind."""
    message = f"{model}: {type(error).__name__}: {error}"
    name = type(error).__name__.lower()
    if isinstance(error, TimeoutError) or "timeout" in name:
        return ModelTimeout(message, kind="timeout")
    status = getattr(error, "status_code", None)
    status = status if isinstance(status, int) else getattr(error, "status", None)
    if isinstance(status, int):
        if status == HTTPStatus.TOO_MANY_REQUESTS:
            return ModelUnavailable(message, kind="rate_limit", status=status)
        if status >= HTTPStatus.INTERNAL_SERVER_ERROR or status in RETRIED_4XX:
            return ModelUnavailable(message, kind="server", status=status)
        return ModelUnavailable(message, kind="refused", status=status)
    if "connect" in name:
        return ModelUnavailable(message, kind="connection")
    return ModelUnavailable(message, kind="server")


class InspectBackend:
    """Sends the harness's requests through an Inspect AI model (see the module docstring).

    Args:
        model: the Inspect model (``inspect_ai.model.get_model()`` inside an eval: the model
            under evaluation).
        control: shared with the game's other backends, its policies and the solver; a fresh
            one when None.
    """

    output_modes: tuple[OutputMode, ...] = OUTPUT_MODES

    def __init__(self, model: Model, control: GameControl | None = None) -> None:
        self.model = model
        self.control = control if control is not None else GameControl()
        self.spec = inspect_spec(model)
        self.local = provider_of(model) in LOCAL_PROVIDERS

    def effective_settings(self, settings: ModelSettings) -> ModelSettings:
        """``settings`` with the sampling values the Inspect model was configured with filled in.

        ``inspect eval --temperature 0.2`` (or ``-M``/``get_model(config=...)``) sets the model's
        own config; the game records what the model actually sampled with. A value given to the
        policy takes precedence (it is sent with every call).
        """
        config = self.model.config
        given = settings_values(config.model_dump(), CONFIG_NAMES)
        update = {name: value for name, value in given.items() if getattr(settings, name) is None}
        return settings.model_copy(update=update) if update else settings

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self.control.limit is not None:  # the sample is over its limit: do not call again
            raise ModelUnavailable(self.control.stop_reason or "limit", kind="refused")
        tools: list[ToolInfo] = []
        choice: ToolFunction | None = None
        if request.output_mode == "tool":
            tools, choice = [reply_tool(request)], ToolFunction(name=request.schema_name)
        started = time.perf_counter()
        try:
            output = await self.model.generate(
                conversation(request),
                tools=tools,
                tool_choice=choice,
                config=generate_config(request),
            )
        except LimitExceededError as error:
            if self.control.limit is None:
                self.control.limit = error
            raise ModelUnavailable(
                f"Inspect {error.type} limit reached: {limit_message(error)}", kind="refused"
            ) from error
        except Exception as error:  # after Inspect's retries: an outage, never a crash
            raise unavailable(self.model, error) from error
        latency = output.time if output.time is not None else time.perf_counter() - started
        calls = [] if output.empty else list(output.message.tool_calls or [])
        text = output.completion or None
        if calls and text == f"tool call for tool {calls[0].function}":
            text = None  # the placeholder text Inspect gives a bare tool call
        return ModelReply(
            text=text,
            tool_arguments=tool_arguments(calls[0]) if calls else None,
            usage=to_usage(self.model, output, latency),
            model=output.model or self.model.name,
            latency_s=latency,
            raw=output.model_dump(mode="json", exclude_none=True),
        )

    async def aclose(self) -> None:
        """Nothing to close: Inspect owns the model and its connections."""
        return None
