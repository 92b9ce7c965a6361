"""Counting a request's prompt tokens before it is sent, without the model's tokenizer.

The harness keeps prompts inside the server's context window and reserves a game's token budget
before each call, so it needs the prompt's size in tokens before the server counts it. Three
sources, best first:

* the server's own tokenizer (llama.cpp ``/tokenize``, llama-cpp-python
  ``/extras/tokenize/count``), found by :mod:`llm_policies.capabilities`: exact for the text,
  plus a small allowance per message for the chat template;
* a calibrated estimate: the largest ratio of reported prompt tokens to prompt bytes seen on
  this endpoint (:class:`TokenRate`, learnt from each reply's usage), with a margin;
* an estimate from the prompt's UTF-8 bytes: tokenizers of current models average 3.5 to 4.5
  bytes per token on English and JSON, so bytes / 4 is the best guess, bytes / 3 a conservative
  one (used where too many tokens is the safe side: trimming a history to fit) and bytes / 5 an
  optimistic one (a prompt that does not fit even so cannot fit).

Counts include what the model reads: the system prompt, every message, and the schema where it
travels beside the prompt (tool and native modes; in json_object and prompted modes it is part of
the system prompt already).

    >>> from llm_policies.backends.base import ChatMessage, ModelRequest
    >>> from llm_policies.settings import ModelSettings
    >>> request = ModelRequest("x" * 3000, (ChatMessage("user", "y" * 300),), "prompted", {},
    ...                        "a", ModelSettings())
    >>> prompt_bytes(request)
    3300
    >>> rate = TokenRate()
    >>> rate.learn(3300, 800)
    >>> rate.estimate(3300)
    880
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from llm_policies.accounting import DEFAULT_REPLY_RESERVE
from llm_policies.backends.base import ModelRequest

#: Bytes per token of the best guess without a tokenizer or calibration.
TYPICAL_BYTES_PER_TOKEN: Final = 4.0
#: Bytes per token of the conservative estimate (an overestimate of real tokenizers' counts).
CONSERVATIVE_BYTES_PER_TOKEN: Final = 3.0
#: Bytes per token of an optimistic estimate: a prompt this one says does not fit cannot fit.
OPTIMISTIC_BYTES_PER_TOKEN: Final = 5.0
#: Tokens a chat template adds around each message (role markers, separators).
MESSAGE_OVERHEAD_TOKENS: Final = 8
#: Margin on a calibrated estimate (replies are counted on other prompts than this one).
CALIBRATION_MARGIN: Final = 1.1
#: Prompts shorter than this do not calibrate (template overhead dominates them).
CALIBRATION_MIN_BYTES: Final = 512


@lru_cache(maxsize=1024)
def utf8_len(text: str) -> int:
    """UTF-8 bytes of ``text`` (cached: a game's system prompt and history repeat every turn)."""
    return len(text.encode())


# a game's schema is the same dict every turn: its size by identity (the dict kept alive with it)
_SCHEMA_SIZES: dict[int, tuple[Any, int]] = {}


def schema_bytes(schema: dict[str, Any]) -> int:
    """UTF-8 bytes of ``schema`` as JSON."""
    known = _SCHEMA_SIZES.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    size = len(json.dumps(schema, ensure_ascii=False).encode())
    if len(_SCHEMA_SIZES) > 256:
        _SCHEMA_SIZES.clear()
    _SCHEMA_SIZES[id(schema)] = (schema, size)
    return size


def prompt_bytes(request: ModelRequest) -> int:
    """UTF-8 bytes of everything the model reads in ``request``."""
    size = utf8_len(request.system) + sum(utf8_len(m.content) for m in request.messages)
    if request.output_mode in ("tool", "native"):
        size += schema_bytes(request.schema)
    return size


def counted_text(request: ModelRequest) -> str:
    """The text a tokenizer should count for ``request`` (what :func:`prompt_bytes` measures)."""
    parts = [request.system, *(m.content for m in request.messages)]
    if request.output_mode in ("tool", "native"):
        parts.append(json.dumps(request.schema, ensure_ascii=False))
    return "\n\n".join(parts)


def overhead(request: ModelRequest) -> int:
    """The chat template's tokens around the messages (system included)."""
    return MESSAGE_OVERHEAD_TOKENS * (len(request.messages) + 1)


@dataclass
class TokenRate:
    """Prompt tokens per byte as an endpoint reports them (the largest ratio seen)."""

    tokens_per_byte: float | None = None
    samples: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def learn(self, prompt_size: int, input_tokens: int) -> None:
        """One reply's usage: ``input_tokens`` for a prompt of ``prompt_size`` bytes."""
        if prompt_size < CALIBRATION_MIN_BYTES or input_tokens <= 0:
            return
        ratio = input_tokens / prompt_size
        with self._lock:
            self.samples += 1
            if self.tokens_per_byte is None or ratio > self.tokens_per_byte:
                self.tokens_per_byte = ratio

    def learn_ratio(self, tokens_per_byte: float) -> None:
        """A ratio learnt elsewhere (another process of the run)."""
        with self._lock:
            self.samples += 1
            if self.tokens_per_byte is None or tokens_per_byte > self.tokens_per_byte:
                self.tokens_per_byte = tokens_per_byte

    def estimate(self, prompt_size: int) -> int | None:
        """The calibrated estimate for ``prompt_size`` bytes (with the margin), or ``None``."""
        if self.tokens_per_byte is None:
            return None
        return int(prompt_size * self.tokens_per_byte * CALIBRATION_MARGIN + 0.5)


@dataclass(frozen=True)
class TokenCount:
    """A prompt's size in tokens and how it was known.

    ``how``: ``"tokenizer"`` (the server's), ``"calibrated"`` (from earlier replies' usage) or
    ``"estimate"`` (from the bytes). ``tokens`` is the best guess, ``high`` a count the prompt
    stays under, ``low`` one it stays over (all three equal for a tokenizer's count): a prompt
    whose ``low`` exceeds the window cannot fit.
    """

    tokens: int
    how: str
    low: int
    high: int

    def to_json(self) -> dict[str, object]:
        return {"tokens": self.tokens, "how": self.how, "low": self.low, "high": self.high}


def count_tokens(
    request: ModelRequest, rate: TokenRate | None = None, exact: int | None = None
) -> TokenCount:
    """The best count available: ``exact`` (a tokenizer's), calibrated by ``rate``, or estimated.

    >>> from llm_policies.backends.base import ChatMessage, ModelRequest
    >>> from llm_policies.settings import ModelSettings
    >>> request = ModelRequest("rules", (ChatMessage("user", "hi"),), "prompted", {}, "a",
    ...                        ModelSettings())
    >>> count_tokens(request).how, count_tokens(request, exact=5).tokens
    ('estimate', 21)
    """
    if exact is not None:
        tokens = exact + overhead(request)
        return TokenCount(tokens, "tokenizer", tokens, tokens)
    return estimate_count(prompt_bytes(request), len(request.messages), rate)


def estimate_count(size: int, messages: int, rate: TokenRate | None = None) -> TokenCount:
    """The count of a prompt of ``size`` bytes in ``messages`` messages (plus the system's).

    >>> estimate_count(4000, 3).to_json()
    {'tokens': 1032, 'how': 'estimate', 'low': 832, 'high': 1365}
    """
    extra = MESSAGE_OVERHEAD_TOKENS * (messages + 1)
    calibrated = rate.estimate(size) if rate is not None else None
    if calibrated is not None:
        tokens = calibrated + extra
        return TokenCount(tokens, "calibrated", int(tokens / CALIBRATION_MARGIN**2), tokens)
    return TokenCount(
        int(size / TYPICAL_BYTES_PER_TOKEN) + extra,
        "estimate",
        int(size / OPTIMISTIC_BYTES_PER_TOKEN) + extra,
        int(size / CONSERVATIVE_BYTES_PER_TOKEN) + extra,
    )


def reply_reserve(max_output_tokens: int | None) -> int:
    """Tokens to keep free for the reply: the output cap, else :data:`DEFAULT_REPLY_RESERVE`."""
    return max_output_tokens if max_output_tokens is not None else DEFAULT_REPLY_RESERVE
