"""Usage and cost of model calls, and caps on tokens and money per game and per run.

:func:`price` fills the cost of a :class:`~maze_envs.policies.interface.Usage` from
genai-prices' price table: local models (Ollama, scripted, or a server you declared local) cost 0
and are marked ``"local"``; a hosted model genai-prices does not know is marked ``"unknown"`` with
cost ``None``, never counted as 0. Token counts follow genai-prices' (and pydantic-ai's)
convention: ``input_tokens`` counts every input token, cache reads and cache writes included.

:class:`Budget` caps tokens and US dollars; a per-game budget is a child of the per-run budget, so
one charge counts against both. Before a request is sent, the harness *reserves* what it may
cost (the prompt's tokens counted beforehand plus the reply's cap): a request that would take a
budget over its cap is not sent, so a cap holds even when several agents of a game ask at once.

    >>> run = Budget(max_cost_usd=1.00, name="run")
    >>> game = run.child(max_tokens=1_000, name="game")
    >>> game.charge(Usage(input_tokens=900, output_tokens=200, cost_usd=0.01, cost_status="priced"))
    >>> game.exceeded()
    'token cap of the game reached: 1100 tokens used, cap 1000'
    >>> run.exceeded() is None
    True
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from maze_envs.policies.interface import Usage
from maze_envs.policies.providers import LOCAL_PREFIXES  # the table of providers

#: Tokens reserved for a reply when no output cap is set and no reply was seen yet.
DEFAULT_REPLY_RESERVE = 256

__all__ = [
    "DEFAULT_REPLY_RESERVE",
    "LOCAL_PREFIXES",
    "Budget",
    "BudgetLimits",
    "BudgetNode",
    "Reservation",
    "price",
]


# pydantic-ai provider prefixes whose genai-prices provider id differs from the prefix
_PRICE_PROVIDER = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "google-gla": "google",
    "google-vertex": "google",
    "google-cloud": "google",
    "grok": "x-ai",
    "xai": "x-ai",
    "bedrock": "aws",
}


@functools.lru_cache(maxsize=64)
def _price_provider(prefix: str) -> str | None:
    from genai_prices import data_snapshot

    wanted = _PRICE_PROVIDER.get(prefix, prefix)
    known = {provider.id for provider in data_snapshot.get_snapshot().providers}
    return wanted if wanted in known else None


def price(
    model_spec: str,
    usage: Usage,
    *,
    local: bool = False,
    reported_model: str | None = None,
    at: datetime | None = None,
) -> Usage:
    """``usage`` with its cost filled in.

    Args:
        model_spec: ``"<provider>:<model>"``, e.g. ``"anthropic:claude-sonnet-5-5"``.
        usage: the tokens of the call(s).
        local: the model runs on your own hardware (cost 0, ``"local"``).
        reported_model: the model name the provider reported, tried when the spec's is unknown.
        at: when the call was made (prices change over time); ``None``: now.

    >>> price("ollama:qwen3:8b", Usage(input_tokens=5000, output_tokens=40)).cost_status
    'local'
    >>> price("openai:no-such-model-xyz", Usage(input_tokens=10)).cost_usd is None
    True
    """
    prefix, _, name = model_spec.partition(":")
    if local or prefix in LOCAL_PREFIXES:
        return dataclasses.replace(usage, cost_usd=0.0, cost_status="local")
    try:
        from genai_prices import calc_price
        from genai_prices.types import Usage as PriceUsage
    except ImportError as error:  # genai-prices is in the llm extra
        raise ImportError(
            "pricing model calls needs genai-prices; install the LLM extra: "
            "pip install 'maze-envs[llm]'"
        ) from error
    tokens = PriceUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    provider_id = _price_provider(prefix)
    for candidate in dict.fromkeys(n for n in (name, reported_model) if n):
        try:
            calculation = calc_price(
                tokens, candidate, provider_id=provider_id, genai_request_timestamp=at
            )
        except LookupError:
            continue
        return dataclasses.replace(
            usage, cost_usd=float(calculation.total_price), cost_status="priced"
        )
    return dataclasses.replace(usage, cost_usd=None, cost_status="unknown")


UnknownCost = Literal["stop", "ignore"]


@dataclasses.dataclass(frozen=True)
class BudgetLimits:
    """Caps of one budget: total tokens (input + output) and US dollars; ``None`` is no cap.

    ``on_unknown_cost``: what a dollar cap does when a call's cost is unknown: ``"stop"`` (the
    cap cannot be guaranteed, so the game stops and says why) or ``"ignore"`` (count it as 0).
    """

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    on_unknown_cost: UnknownCost = "stop"

    def __post_init__(self) -> None:
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int)
        ):
            raise TypeError(f"max_tokens must be an int or None, got {self.max_tokens!r}")
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError(
                f"max_tokens must be positive (or None for no cap), got {self.max_tokens}"
            )
        if self.max_cost_usd is not None and not self.max_cost_usd > 0:
            raise ValueError(
                f"max_cost_usd must be positive (or None for no cap), got {self.max_cost_usd}"
            )
        if self.on_unknown_cost not in ("stop", "ignore"):
            raise ValueError(
                f"on_unknown_cost must be 'stop' or 'ignore', got {self.on_unknown_cost!r}"
            )


@runtime_checkable
class BudgetNode(Protocol):
    """What a budget a game budget charges must do: the interface of a run's budget.

    :class:`Budget` is one (in this process). A budget shared by every worker of a process pool
    or a Ray run is another: give it as ``run_budget=`` (the option of
    :func:`llm_policies.registry.make_llm_policy`), and each game's budget holds, charges and
    checks through it. ``hold`` sets aside what one request may cost, or says why it must not
    be sent; ``unhold`` gives it back; ``charge`` counts what a request cost; ``exceeded`` says
    why play must stop. ``parent`` is the budget above (``None`` at the top).
    """

    parent: BudgetNode | None

    def hold(self, tokens: int, cost_usd: float | None) -> str | None: ...

    def unhold(self, tokens: int, cost_usd: float) -> None: ...

    def charge(self, usage: Usage | None) -> None: ...

    def exceeded(self) -> str | None: ...


@dataclasses.dataclass
class Reservation:
    """Tokens and dollars set aside for one request in a budget and its parents.

    ``release()`` gives them back (after the reply was charged, or when the call failed).
    """

    budgets: tuple[BudgetNode, ...]
    tokens: int
    cost_usd: float
    released: bool = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        for budget in self.budgets:
            budget.unhold(self.tokens, self.cost_usd)


class Budget:
    """Running totals of usage against caps; children (games) also charge their parent (run).

    Args:
        max_tokens: cap on input + output tokens.
        max_cost_usd: cap on cost in US dollars.
        name: what the budget covers, used in the stop reason (``"game"``, ``"run"``).
        parent: the budget this one is part of (a :class:`BudgetNode`: another
            :class:`Budget`, or a run budget shared across processes).
        on_unknown_cost: see :class:`BudgetLimits`.
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
        *,
        name: str = "run",
        parent: BudgetNode | None = None,
        on_unknown_cost: UnknownCost = "stop",
    ) -> None:
        self.limits = BudgetLimits(max_tokens, max_cost_usd, on_unknown_cost)
        self.name = name
        self.parent = parent
        self._used = Usage()
        self._unknown_calls = 0
        self._known_cost = 0.0  # priced calls only (Usage sums drop to None once one is unknown)
        self._reserved_tokens = 0
        self._reserved_cost = 0.0
        #: the most output tokens one call charged here wrote (reservations are sized from it)
        self.longest_reply: int | None = None
        self._lock = threading.Lock()

    def child(
        self,
        max_tokens: int | None = None,
        max_cost_usd: float | None = None,
        *,
        name: str = "game",
        on_unknown_cost: UnknownCost | None = None,
    ) -> Budget:
        """A budget inside this one (a game inside a run)."""
        return Budget(
            max_tokens,
            max_cost_usd,
            name=name,
            parent=self,
            on_unknown_cost=on_unknown_cost or self.limits.on_unknown_cost,
        )

    @property
    def used(self) -> Usage:
        """Everything charged so far."""
        return self._used

    def charge(self, usage: Usage | None) -> None:
        """Count ``usage`` against this budget and its parents."""
        if usage is None:
            return
        with self._lock:
            self._used = self._used + usage
            if usage.requests == 1 and (
                self.longest_reply is None or usage.output_tokens > self.longest_reply
            ):
                self.longest_reply = usage.output_tokens
            if usage.cost_status == "unknown":
                self._unknown_calls += 1
            else:
                self._known_cost += usage.cost_usd or 0.0
        if self.parent is not None:
            self.parent.charge(usage)

    def typical_reply(self, max_output_tokens: int | None) -> int:
        """Output tokens to reserve for the next call: the longest reply charged here so far,
        else the output cap, else :data:`DEFAULT_REPLY_RESERVE`; never
        more than the output cap.

        >>> game = Budget(max_tokens=1_000, name="game")
        >>> game.typical_reply(48), game.typical_reply(None)
        (48, 256)
        >>> game.charge(Usage(input_tokens=300, output_tokens=21, requests=1))
        >>> game.typical_reply(48)
        21
        """
        cap = DEFAULT_REPLY_RESERVE if max_output_tokens is None else max_output_tokens
        return cap if self.longest_reply is None else min(cap, self.longest_reply)

    def reserve(self, tokens: int, cost_usd: float | None) -> Reservation | str:
        """Set aside ``tokens`` and ``cost_usd`` (``None``: unknown) for one request.

        Returns the :class:`Reservation`, or the reason the request must not be sent: it would
        take this budget or a parent over a cap (counting what is used and what other requests
        in flight have reserved), or the cost cannot be checked.

        >>> game = Budget(max_tokens=1_000, name="game")
        >>> held = game.reserve(600, 0.0)
        >>> game.reserve(600, 0.0)
        'token cap of the game reached: 0 tokens used and 600 reserved; the next request needs
        up to 600, cap 1000'
        >>> held.release()
        >>> isinstance(game.reserve(600, 0.0), Reservation)
        True
        """
        chain: list[BudgetNode] = []
        node: BudgetNode | None = self
        while node is not None:
            reason = node.hold(tokens, cost_usd)
            if reason is not None:
                for held in chain:
                    held.unhold(tokens, cost_usd or 0.0)
                return reason
            chain.append(node)
            node = node.parent
        return Reservation(tuple(chain), tokens, cost_usd or 0.0)

    def hold(self, tokens: int, cost_usd: float | None) -> str | None:
        """Set ``tokens`` and ``cost_usd`` aside in this budget alone, or say why not."""
        limits = self.limits
        with self._lock:
            used = self._used.input_tokens + self._used.output_tokens
            if limits.max_tokens is not None and (
                used + self._reserved_tokens + tokens > limits.max_tokens
            ):
                return (
                    f"token cap of the {self.name} reached: {used} tokens used and "
                    f"{self._reserved_tokens} reserved; the next request needs up to {tokens}, "
                    f"cap {limits.max_tokens}"
                )
            if limits.max_cost_usd is not None:
                if cost_usd is None and limits.on_unknown_cost == "stop":
                    return (
                        f"cost cap of the {self.name} cannot be checked: the price of the model "
                        "is unknown (set a token cap instead, or on_unknown_cost='ignore')"
                    )
                spent = self._known_cost + self._reserved_cost + (cost_usd or 0.0)
                if spent > limits.max_cost_usd:
                    return (
                        f"cost cap of the {self.name} reached: ${self._known_cost:.6f} spent and "
                        f"${self._reserved_cost:.6f} reserved; the next request may cost up to "
                        f"${cost_usd or 0.0:.6f}, cap ${limits.max_cost_usd:.6f}"
                    )
            self._reserved_tokens += tokens
            self._reserved_cost += cost_usd or 0.0
        return None

    def unhold(self, tokens: int, cost_usd: float) -> None:
        """Give back what :meth:`hold` set aside."""
        with self._lock:
            self._reserved_tokens -= tokens
            self._reserved_cost -= cost_usd

    def exceeded(self) -> str | None:
        """Why the game must stop (a cap of this budget or a parent reached), or ``None``."""
        limits, used = self.limits, self._used
        tokens = used.input_tokens + used.output_tokens
        if limits.max_tokens is not None and tokens >= limits.max_tokens:
            return (
                f"token cap of the {self.name} reached: {tokens} tokens used, "
                f"cap {limits.max_tokens}"
            )
        if limits.max_cost_usd is not None:
            if self._unknown_calls and limits.on_unknown_cost == "stop":
                return (
                    f"cost cap of the {self.name} cannot be checked: {self._unknown_calls} "
                    "call(s) of a model whose price is unknown (set a token cap instead, or "
                    "on_unknown_cost='ignore')"
                )
            cost = self._known_cost
            if cost >= limits.max_cost_usd:
                return (
                    f"cost cap of the {self.name} reached: ${cost:.4f} spent, "
                    f"cap ${limits.max_cost_usd:.4f}"
                )
        return self.parent.exceeded() if self.parent is not None else None

    def to_json(self) -> dict[str, Any]:
        """Caps and totals, for the results and the journal."""
        return {
            "name": self.name,
            "max_tokens": self.limits.max_tokens,
            "max_cost_usd": self.limits.max_cost_usd,
            "on_unknown_cost": self.limits.on_unknown_cost,
            "used": self._used.to_json(),
            "known_cost_usd": self._known_cost,
            "unknown_cost_calls": self._unknown_calls,
        }
