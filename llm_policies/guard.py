"""What is checked before each request is sent: the context window and the game's caps.

:class:`Guard` belongs to one decision's calls. :meth:`Guard.check` counts the request's prompt
tokens (:mod:`llm_policies.tokens`: the server's tokenizer when it has one and the count matters,
else a calibrated or byte-based estimate) and

* refuses a request that cannot fit the context window with room for the reply (the output cap,
  else :data:`~llm_policies.accounting.DEFAULT_REPLY_RESERVE`): :class:`NoRoom` says so, and the
  policy trims (AGI Maze) or stops the game (Maze Escape). Only a prompt whose *optimistic*
  count is over is refused unsent; a prompt that may fit is sent, and a context-length error
  from the server then has the same effect;
* reserves its tokens and estimated cost in the game's budget (and the run's, across every
  worker of a ``maze-envs bench`` run), so a cap holds when several agents and games ask at
  once: a request that would take a budget over its cap is not sent (:class:`Capped`). The
  reservation is sized from what this game's calls cost so far: the prompt's count (calibrated
  on the endpoint's reported usage once a reply came back) plus the longest reply of the game so
  far (before the first reply: the output cap, else
  :data:`~llm_policies.accounting.DEFAULT_REPLY_RESERVE`). A reservation of the output cap every
  time stopped games at 45-83 % of their cap; this one can fall short by what a reply writes
  beyond the game's longest so far, which is all a cap can be overshot by.

After the reply, :meth:`Guard.settle` charges the real usage, releases the reservation, learns
the endpoint's tokens per byte and checks the reply against the output cap (a longer reply is a
*cap breach*, recorded: the server ignored the cap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llm_policies.accounting import Budget, Reservation, price
from llm_policies.backends.base import ModelBackend, ModelReply, ModelRequest
from llm_policies.capabilities import Endpoint
from llm_policies.tokens import (
    TokenCount,
    count_tokens,
    counted_text,
    estimate_count,
    prompt_bytes,
    reply_reserve,
)
from maze_envs.policies.interface import Usage


@dataclass(frozen=True)
class NoRoom:
    """The request cannot fit the context window."""

    count: TokenCount
    window: int
    reserve: int
    source: str | None

    @property
    def message(self) -> str:
        how = {"tokenizer": "counted by the server's tokenizer", "calibrated": "estimated"}
        return (
            f"context: the prompt needs {'at least ' if self.count.how == 'estimate' else ''}"
            f"{self.count.low if self.count.how == 'estimate' else self.count.tokens} tokens "
            f"({how.get(self.count.how, 'estimated from its size')}) and the reply "
            f"{self.reserve}, but the context window is {self.window} tokens "
            f"({self.source or 'known'}): raise the server's context size (llama.cpp "
            "--ctx-size, Ollama num_ctx, vLLM --max-model-len) and the context_window option, "
            "lower max_output_tokens, or play a smaller setup"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count.to_json(),
            "window": self.window,
            "reserve": self.reserve,
            "source": self.source,
        }


@dataclass(frozen=True)
class Capped:
    """The request would take a budget over its cap; ``reason`` says which."""

    reason: str


@dataclass
class Cleared:
    """The request may go: its count, its size and the reservation to settle after the reply."""

    count: TokenCount | None
    reservation: Reservation | None
    size: int = 0


class Guard:
    """The checks of one policy's requests (see the module docstring).

    Args:
        backend: the backend (its spec and ``local`` decide the cost estimate).
        budget: the game's budget (a child of the run's), or ``None``.
        endpoint: what is known about the server (context window, tokenizer, token rate).
    """

    def __init__(
        self, backend: ModelBackend, budget: Budget | None, endpoint: Endpoint | None
    ) -> None:
        self.backend = backend
        self.budget = budget
        self.endpoint = endpoint

    def reserve_for_reply(self, request: ModelRequest) -> int:
        return reply_reserve(request.settings.max_output_tokens)

    def available(self, request: ModelRequest) -> int | None:
        """Prompt tokens the context window leaves after the reply's share (``None``: unknown)."""
        window = self.endpoint.context_window if self.endpoint else None
        return None if window is None else window - self.reserve_for_reply(request)

    async def check(self, request: ModelRequest) -> Cleared | NoRoom | Capped:
        """Count, fit and reserve ``request`` (see the module docstring)."""
        endpoint = self.endpoint
        size = prompt_bytes(request)
        count = estimate_count(size, len(request.messages), endpoint.rate if endpoint else None)
        available = self.available(request)
        if endpoint is not None and available is not None and count.high > available:
            exact = await endpoint.count_exact(counted_text(request))
            if exact is not None:
                count = count_tokens(request, exact=exact)
            if (count.how == "estimate" and count.low > available) or (
                count.how != "estimate" and count.tokens > available
            ):
                window = endpoint.context_window or 0
                return NoRoom(
                    count, window, self.reserve_for_reply(request), endpoint.context_source
                )
        reservation = None
        if self.budget is not None:
            out = self.budget.typical_reply(request.settings.max_output_tokens)
            held = self.budget.reserve(count.tokens + out, self._cost(count.tokens, out))
            if isinstance(held, str):
                return Capped(held)
            reservation = held
        return Cleared(count, reservation, size)

    def _cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.backend.local:
            return 0.0
        usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, requests=1)
        try:
            return price(self.backend.spec, usage).cost_usd
        except ImportError:  # no price table: the cost cannot be estimated
            return None

    def settle(
        self, request: ModelRequest, cleared: Cleared, reply: ModelReply | None, usage: Usage
    ) -> dict[str, Any] | None:
        """Charge ``usage``, release the reservation, learn from the reply; the cap breach."""
        if self.budget is not None and usage.requests + usage.input_tokens + usage.output_tokens:
            self.budget.charge(usage)
        if cleared.reservation is not None:
            cleared.reservation.release()
        if reply is None:
            return None
        if self.endpoint is not None and not reply.cached:
            size = cleared.size or prompt_bytes(request)
            self.endpoint.rate.learn(size, reply.usage.input_tokens)
        cap = request.settings.max_output_tokens
        if cap is not None and reply.usage.output_tokens > cap:
            return {"output_tokens": reply.usage.output_tokens, "cap": cap}
        return None
