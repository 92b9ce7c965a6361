"""What every model backend takes and gives: requests, replies, errors (``make_backend``, which
chooses a backend for a spec, is :mod:`~llm_policies.backends.make`, above the backends).

A backend sends one :class:`ModelRequest` (a stable system prompt, the conversation, an output
mode and the JSON schema of the reply object) and returns the provider's *raw* reply as a
:class:`ModelReply`: the text and the first tool call's arguments exactly as sent, usage, cost,
latency and the provider's reply as JSON. Backends never parse actions: the harness does that
with its own named quirk rules.

A backend retries rate limits (429, honouring ``Retry-After``), server errors (5xx), timeouts,
unreadable bodies and stalled replies itself, with exponential backoff and jitter, within
``settings.retries``; after that it raises :class:`ModelUnavailable` (an outage, never the
model's play).

    >>> request = ModelRequest(
    ...     system="You play a maze.",
    ...     messages=(ChatMessage("user", "Your move?"),),
    ...     output_mode="native",
    ...     schema={"type": "object", "properties": {"move": {"type": "string"}}},
    ...     schema_name="maze_action",
    ...     settings=ModelSettings(),
    ... )
    >>> request.messages[-1].role
    'user'
    >>> parse_spec("ollama:qwen3:8b")
    ('ollama', 'qwen3:8b')
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Final, Literal, Protocol, get_args, runtime_checkable

from llm_policies.settings import OUTPUT_MODES, ModelSettings, OutputMode
from maze_envs.policies.interface import Usage

ErrorKind = Literal[
    "rate_limit", "server", "timeout", "connection", "protocol", "refused", "context", "config"
]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)

_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ChatMessage:
    """One message of the conversation (the system prompt travels separately)."""

    role: Literal["user", "assistant"]
    content: str

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"ChatMessage.role must be 'user' or 'assistant', got {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"ChatMessage.content must be a str, got {type(self.content).__name__}")


@dataclass(frozen=True)
class ModelRequest:
    """One request to a model.

    Attributes:
        system: the stable part (rules, legend, schema text, prompt version), byte-identical from
            turn to turn so provider prompt caches hit.
        messages: the history (if any) then the changing part; the last message is the user's.
        output_mode: ``"tool"`` (a forced call of the tool ``schema_name``), ``"native"`` (the
            provider's JSON-schema output) or ``"prompted"`` (plain text; the prompt asks for JSON).
        schema: JSON schema of the reply object; its key order is sent as given.
        schema_name: the tool's / schema's name, e.g. ``"maze_action"``.
        settings: the model settings of this game.
        cache_key_extra: anything else that changes the request (a prompt version...), for the
            response cache.
        cache_history: the messages are a history that grows at its end (AGI Maze), so a
            provider cache breakpoint on the last message pays off on the next request
            (Anthropic); without one only the system prompt is marked.
    """

    system: str
    messages: tuple[ChatMessage, ...]
    output_mode: OutputMode
    schema: dict[str, Any]
    schema_name: str
    settings: ModelSettings
    cache_key_extra: str = ""
    cache_history: bool = False

    def __post_init__(self) -> None:
        if self.output_mode not in OUTPUT_MODES:
            raise ValueError(
                f"output_mode must be one of {', '.join(OUTPUT_MODES)}, got {self.output_mode!r}"
            )
        if not self.messages:
            raise ValueError("a ModelRequest needs at least one message (the user's turn)")
        if self.messages[-1].role != "user":
            raise ValueError("the last message of a ModelRequest must be the user's")
        if not isinstance(self.schema, Mapping):
            raise TypeError(f"schema must be a JSON-schema dict, got {type(self.schema).__name__}")
        if not _SCHEMA_NAME.match(self.schema_name):
            raise ValueError(
                "schema_name must be 1 to 64 letters, digits, '_' or '-' (providers' tool-name "
                f"rule), got {self.schema_name!r}"
            )
        if not isinstance(self.settings, ModelSettings):
            raise TypeError("settings must be an llm_policies.settings.ModelSettings")

    def prompt_chars(self) -> int:
        """Characters of everything the model reads (system, messages, schema)."""
        import json

        return (
            len(self.system)
            + sum(len(m.content) for m in self.messages)
            + len(json.dumps(self.schema, ensure_ascii=False))
        )


@dataclass(frozen=True)
class Attempt:
    """One failed attempt at a call: why it failed and how long the backend waited after it."""

    kind: ErrorKind
    message: str
    status: int | None = None
    waited_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "status": self.status,
            "waited_s": round(self.waited_s, 6),
        }


@dataclass(frozen=True)
class ModelReply:
    """The raw reply of one call.

    Attributes:
        text: the reply's text (prompted mode, native JSON, or text sent instead of a tool call).
        tool_arguments: the first tool call's arguments as sent (JSON text), or ``None``.
        usage: tokens (``input_tokens`` counts every input token, cache reads and writes
            included), one request, latency and cost (:func:`llm_policies.accounting.price`).
        model: the model name the provider reports.
        latency_s: wall time of the successful attempt.
        raw: the provider's reply as JSON, for the journal (never credentials).
        cached: served from the response cache (no request was sent).
        retries: the failed attempts before this reply (rate limits, 5xx, timeouts...).
        notices: what the backend noticed about this call that the game's record should say
            once (``{"kind": "context_warning", ...}``: Ollama may have cut the prompt).
        finish_reason: why the model stopped writing as the provider says it: ``"length"``
            when the reply was cut at the output cap (OpenAI ``finish_reason``, Anthropic
            ``stop_reason`` ``max_tokens``, Ollama ``done_reason``), ``None`` when not told.
    """

    text: str | None
    tool_arguments: str | None
    usage: Usage
    model: str
    latency_s: float
    raw: dict[str, Any]
    cached: bool = False
    retries: tuple[Attempt, ...] = field(default=())
    notices: tuple[dict[str, Any], ...] = field(default=())
    finish_reason: str | None = None

    def truncated(self, cap: int | None) -> bool:
        """Whether the reply was cut at the output cap ``cap`` (the provider said so, or it
        used the whole cap).

        >>> reply = ModelReply("{", None, Usage(output_tokens=48), "m", 0.0, {})
        >>> reply.truncated(48), reply.truncated(100), reply.truncated(None)
        (True, False, False)
        """
        if self.finish_reason == "length":
            return True
        return cap is not None and self.usage.output_tokens >= cap


class ModelError(Exception):
    """A call to a model failed.

    Attributes:
        kind: ``"rate_limit"``, ``"server"``, ``"timeout"``, ``"connection"``, ``"protocol"``
            (an unreadable, non-object or stalled reply) or ``"refused"`` (the provider rejected
            the request: bad key, unknown model, invalid request; retrying will not help).
        retryable: whether trying again may succeed.
        status: the HTTP status, when there was one.
        retry_after: seconds the provider asked to wait, when it said.
        attempts: the failed attempts that led here (for :class:`ModelUnavailable`).
        permanent: the reply itself says retrying will not help (a request validation error).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: tuple[Attempt, ...] = (),
        permanent: bool = False,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"kind must be one of {', '.join(ERROR_KINDS)}, got {kind!r}")
        super().__init__(message)
        self.message = message
        self.kind: ErrorKind = kind
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts
        self.permanent = permanent

    def to_json(self) -> dict[str, Any]:
        """Plain data for the journal (an outage record)."""
        return {
            "error": type(self).__name__,
            "kind": self.kind,
            "message": self.message,
            "status": self.status,
            "permanent": self.permanent,
            "attempts": [a.to_json() for a in self.attempts],
        }


class ModelUnavailable(ModelError):
    """The model could not give a reply within the retry budget: an outage, not the model's play."""


class ModelTimeout(ModelUnavailable):
    """Every attempt (or the last one) ran past the per-call deadline."""


class ContextLengthExceeded(ModelError):
    """The server refused the request because it does not fit its context window.

    Not an outage: the same request fails the same way every time, so it is never retried; the
    harness trims (AGI Maze history) or stops the game (Maze Escape) instead. ``window`` is the
    server's context size when its message says it (``"maximum context length is 2048"``).
    """

    def __init__(
        self,
        message: str,
        *,
        window: int | None = None,
        status: int | None = None,
        attempts: tuple[Attempt, ...] = (),
    ) -> None:
        super().__init__(message, kind="context", status=status, attempts=attempts, permanent=True)
        self.window = window

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "window": self.window}


# what servers say when a prompt does not fit: OpenAI / vLLM / llama-cpp-python ("maximum
# context length is N tokens", code context_length_exceeded), llama.cpp ("exceeds the available
# context size", exceed_context_size_error, "n_ctx": N), LM Studio / Ollama-like wordings
#: Statuses a context-length refusal comes with (its body tells it apart).
_CONTEXT_STATUSES: Final = frozenset(
    {HTTPStatus.BAD_REQUEST, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, HTTPStatus.UNPROCESSABLE_ENTITY}
)
_CONTEXT_ERROR = re.compile(
    r"context_length_exceeded|exceed_context_size|maximum context length|context size|"
    r"context window|context length|too many tokens|prompt is too long",
    re.IGNORECASE,
)
_CONTEXT_WINDOW = re.compile(
    r'(?:maximum context length is|context size \(|context window of|"n_ctx"\s*:|n_ctx\s*[=:])'
    r"\s*(\d+)",
    re.IGNORECASE,
)


def context_error(status: int | None, text: str) -> ContextLengthExceeded | None:
    """The context-length refusal in an error ``text`` of HTTP ``status``, or ``None``.

    >>> error = context_error(400, "This model's maximum context length is 2048 tokens. However, "
    ...                       "you requested 2141 tokens (context_length_exceeded)")
    >>> error.kind, error.window
    ('context', 2048)
    >>> context_error(500, "internal error") is None
    True
    """
    if status not in _CONTEXT_STATUSES or not _CONTEXT_ERROR.search(text):
        return None
    found = _CONTEXT_WINDOW.search(text)
    return ContextLengthExceeded(
        f"the request does not fit the server's context window: {text[:400]}",
        window=int(found.group(1)) if found else None,
        status=status,
    )


@runtime_checkable
class ModelBackend(Protocol):
    """Sends requests to one model.

    ``spec`` names it (``"anthropic:claude-sonnet-5-5"``, ``"ollama:qwen3:8b"``); ``local`` is
    true for models that cost nothing per token (their cost is 0 and marked ``"local"``);
    ``output_modes`` lists the output modes it can serve.
    """

    @property
    def spec(self) -> str: ...

    @property
    def local(self) -> bool: ...

    @property
    def output_modes(self) -> tuple[OutputMode, ...]: ...

    async def complete(self, request: ModelRequest) -> ModelReply:
        """One reply to ``request`` (retried within the budget), or :class:`ModelUnavailable`."""
        ...

    async def aclose(self) -> None:
        """Close connections the backend opened."""
        ...


def dropped_settings(backend: ModelBackend, settings: ModelSettings) -> dict[str, str]:
    """The settings of ``settings`` that ``backend``'s requests go out without, with the reason.

    A provider's client may leave a setting out of the request it sends (pydantic-ai drops
    ``temperature`` for Anthropic models and API versions that reject it, sampling parameters
    while an OpenAI model reasons, ``seed`` where the API has none), so the game records what was
    really sent: ``{"temperature": "<why>"}``. A backend that can tell has a
    ``dropped_settings(settings)`` method; any other sends every setting it is given.

    >>> from llm_policies.backends.scripted import ScriptedBackend
    >>> dropped_settings(ScriptedBackend([]), ModelSettings(temperature=0.2))
    {}
    """
    probe = getattr(backend, "dropped_settings", None)
    if not callable(probe):
        return {}
    return {str(name): str(why) for name, why in probe(settings).items()}


def check_output_mode(backend: ModelBackend, mode: str) -> None:
    """Raise a clear ``ValueError`` when ``backend`` cannot serve output ``mode``.

    >>> from llm_policies.backends.scripted import ScriptedBackend
    >>> check_output_mode(ScriptedBackend([]), "tool")
    >>> check_output_mode(ScriptedBackend([]), "xml")
    Traceback (most recent call last):
    ...
    ValueError: output mode 'xml' is not served by scripted:test; use one of tool, native, ...
    """
    if mode not in backend.output_modes:
        raise ValueError(
            f"output mode {mode!r} is not served by {backend.spec}; use one of "
            f"{', '.join(backend.output_modes)}"
        )


def parse_spec(spec: str) -> tuple[str, str]:
    """``"prefix:model"`` split at the first colon, both parts non-empty."""
    if not isinstance(spec, str):
        raise TypeError(
            f"a model spec is a string such as 'anthropic:claude-sonnet-5-5', got {spec!r}"
        )
    prefix, sep, name = spec.partition(":")
    if not sep or not prefix or not name:
        raise ValueError(
            f"model spec {spec!r} must look like '<provider>:<model>', for example "
            "'anthropic:claude-sonnet-5-5', 'openai:gpt-4o-mini', 'openai-chat:<model>', "
            "'openrouter:<vendor>/<model>', 'ollama:qwen3:8b' or 'scripted:<name>'"
        )
    return prefix, name


def __getattr__(name: str) -> Any:
    """``make_backend``, deprecated here: it moved above the backends it chooses among
    (:mod:`llm_policies.backends.make`; import it from ``llm_policies.backends``)."""
    if name == "make_backend":
        warnings.warn(
            "llm_policies.backends.base.make_backend moved to llm_policies.backends.make "
            "(import it from llm_policies.backends)",
            DeprecationWarning,
            stacklevel=2,
        )
        # by name: the protocol's module never imports the backends (backend-layers contract)
        return importlib.import_module("llm_policies.backends.make").make_backend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
