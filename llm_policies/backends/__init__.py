"""Model backends: hosted models through pydantic-ai, local ones through Ollama, scripted ones.

Start with :func:`make_backend`; every backend follows :class:`ModelBackend`.
"""

from llm_policies.backends.base import (
    Attempt,
    ChatMessage,
    ContextLengthExceeded,
    ModelBackend,
    ModelError,
    ModelReply,
    ModelRequest,
    ModelTimeout,
    ModelUnavailable,
    check_output_mode,
    context_error,
    dropped_settings,
    parse_spec,
)
from llm_policies.backends.make import make_backend
from llm_policies.backends.retry import RetryPolicy
from llm_policies.backends.scripted import ScriptedBackend, ScriptedReply

__all__ = [
    "Attempt",
    "ChatMessage",
    "ContextLengthExceeded",
    "ModelBackend",
    "ModelError",
    "ModelReply",
    "ModelRequest",
    "ModelTimeout",
    "ModelUnavailable",
    "RetryPolicy",
    "ScriptedBackend",
    "ScriptedReply",
    "check_output_mode",
    "context_error",
    "dropped_settings",
    "make_backend",
    "parse_spec",
]
