"""What a loopback model server answers: scripted steps, and the record of what it received.

A step is a good reply (:class:`Reply`) or a fault: an HTTP error (429 with ``Retry-After``, 5xx,
400...), a reply that never comes (:class:`Hang`), a reply held until the test lets it go
(:class:`Held`), a body that stops half-way (:class:`Stall`), or
a body that is not what the protocol promises (:class:`RawBody`: malformed JSON, JSON that is not
an object). ``Reply.input_tokens`` counts every input token, cache reads and writes included; each
protocol module splits it the way its provider reports usage.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A good reply: text, and/or a tool call whose arguments are sent exactly as given."""

    text: str | None = None
    tool_arguments: str | None = None
    tool_name: str | None = None  # default: the first tool of the request (or the schema's name)
    input_tokens: int = 120
    output_tokens: int = 18
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model: str | None = None  # default: the model the request named
    delay_s: float = 0.0
    finish_reason: str | None = None  # default: what the protocol says for the reply's parts

    def tool_input_object(self) -> dict[str, Any]:
        """The tool arguments as a JSON object (Anthropic and Ollama send objects, not text)."""
        assert self.tool_arguments is not None
        value = json.loads(self.tool_arguments)
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object for this protocol")
        return value


@dataclass(frozen=True)
class HttpError:
    """An error status with the protocol's error body (and ``Retry-After`` when given)."""

    status: int
    retry_after: float | str | None = None
    message: str = "scripted failure"
    code: str | None = None  # the OpenAI error code, e.g. "context_length_exceeded"


@dataclass(frozen=True)
class Hang:
    """No answer for ``seconds`` (the client's deadline should fire first), then ``then``."""

    seconds: float
    then: Reply | None = None


@dataclass(frozen=True)
class Held:
    """No answer until ``gate`` is set (by the test), then ``then``: a model call the test keeps
    in flight for as long as it needs (a reply to a client that is gone by then is dropped)."""

    gate: threading.Event
    then: Reply


@dataclass(frozen=True)
class Stall:
    """Status 200 and the first half of ``reply``'s body, then nothing for ``seconds``."""

    seconds: float
    reply: Reply = field(default_factory=lambda: Reply(text='{"move": "N"}'))


@dataclass(frozen=True)
class RawBody:
    """A body sent verbatim (malformed JSON, JSON that is not an object...)."""

    body: str
    status: int = 200
    content_type: str = "application/json"


def malformed_json() -> RawBody:
    """A JSON body cut off in the middle (a proxy dropped the connection's tail)."""
    return RawBody('{"id": "cut-off", "object": "chat.completion", "choices": [{"index": 0, "mess')


def non_object_json() -> RawBody:
    """Valid JSON that is not an object."""
    return RawBody('["not", "an", "object"]')


Step = Reply | HttpError | Hang | Held | Stall | RawBody
Responder = Callable[["RecordedRequest"], Step]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: method, path, lower-cased headers, body."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any  # the parsed JSON body (None when it was not JSON)

    @property
    def protocol(self) -> str:
        return protocol_of(self.path)


def protocol_of(path: str) -> str:
    """The wire protocol of a request path."""
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/api/chat"):
        return "ollama"
    return "unknown"


class Script:
    """A queue of steps, then a responder (or a loud 400 when nothing is left to say)."""

    def __init__(self) -> None:
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self.responder: Responder | None = None
        self.requests: list[RecordedRequest] = []

    def push(self, steps: Iterable[Step]) -> None:
        with self._lock:
            self._steps.extend(steps)

    def clear(self) -> None:
        with self._lock:
            self._steps.clear()
            self.requests.clear()
            self.responder = None

    def remaining(self) -> int:
        with self._lock:
            return len(self._steps)

    def record(self, request: RecordedRequest) -> None:
        """Log ``request`` without answering it from the script (a server-side refusal)."""
        with self._lock:
            self.requests.append(request)

    def next_step(self, request: RecordedRequest, seen: RecordedRequest | None = None) -> Step:
        """The step answering ``request`` (recorded); a responder gets ``seen`` when given
        (the request as the model sees it, e.g. without the tools a server drops)."""
        with self._lock:
            self.requests.append(request)
            if self._steps:
                return self._steps.popleft()
            responder = self.responder
        if responder is not None:
            return responder(seen or request)
        return HttpError(
            400, message="loopback server: the script has no step left for this request"
        )
