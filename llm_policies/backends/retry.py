"""Retries of model calls: a deadline per call, exponential backoff with jitter, ``Retry-After``.

Every backend sends each attempt through :func:`call_with_retries`, so 429s, 5xx, timeouts,
unreadable bodies and stalled replies are handled the same way for every provider (the provider
SDKs' own retries are turned off: theirs are neither counted, seeded nor bounded by our deadline).

Transient or permanent is decided from what the reply says, its status and its body, never
from how often it came: a 5xx whose body reports a validation error of the request
(llama-cpp-python: "1 validation error ... Input should be 'text' or 'json_object'") is a
permanent rejection at once (retrying sends the same invalid request again), while any other
5xx (a 500 with the same "internal error" body every time included) is retried to the budget: a
server that fails the same way twice may still answer the third time. Overload and gateway
statuses (502, 503, 504, 529) are retried whatever their body. A context-length refusal
(:class:`~llm_policies.backends.base.ContextLengthExceeded`) is never retried.

The wait after failed attempt ``n`` (0-based) is ``min(max_delay, base * 2**n)`` scaled by a
jitter factor drawn uniformly from [0.5, 1) by a seeded ``numpy.random.Generator``; when the
provider sent ``Retry-After``, the wait is at least that long, and a ``Retry-After`` beyond
``max_retry_after_s`` ends the call at once (waiting that long would stall the game).

    >>> import numpy as np
    >>> policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    >>> rng = np.random.default_rng(0)
    >>> [round(policy.delay(n, None, rng), 3) for n in range(5)]
    [0.818, 1.27, 2.082, 4.066, 7.253]
    >>> policy.delay(0, 2.5, rng)
    2.5
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Final, TypeVar

import numpy as np

from llm_policies.backends.base import (
    Attempt,
    ContextLengthExceeded,
    ModelError,
    ModelTimeout,
    ModelUnavailable,
)
from llm_policies.settings import ModelSettings

T = TypeVar("T")

#: 5xx statuses that say "try later" (overload, gateways): retried whatever their body.
#: Anthropic's "overloaded" status (not in :class:`http.HTTPStatus`).
OVERLOADED: Final = 529
TRANSIENT_STATUSES: Final = frozenset(
    {HTTPStatus.BAD_GATEWAY, HTTPStatus.SERVICE_UNAVAILABLE, HTTPStatus.GATEWAY_TIMEOUT, OVERLOADED}
)
#: 4xx statuses that mean "try again" (a timed-out request, a conflict).
RETRIED_4XX: Final = frozenset({HTTPStatus.REQUEST_TIMEOUT, HTTPStatus.CONFLICT})
#: A body that reports an invalid request, whatever the status it came with.
_VALIDATION_BODY = re.compile(
    r"validation error|Input should be|unrecognized request argument|invalid request|"
    r"not supported|unsupported (?:value|parameter)",
    re.IGNORECASE,
)


def is_permanent(error: ModelError) -> bool:
    """Whether server error ``error`` is a permanent rejection: a 5xx (not an overload or
    gateway status) whose body reports a validation error of the request. Decided from this
    reply alone (see the module docstring): the same body twice is no reason to stop.

    >>> is_permanent(ModelError("scripted failure", kind="server", retryable=True, status=500))
    False
    >>> is_permanent(ModelError("1 validation error: Input should be 'text' or 'json_object'",
    ...                         kind="server", retryable=True, status=500))
    True
    >>> is_permanent(ModelError("not supported", kind="server", retryable=True, status=503))
    False
    """
    if error.kind != "server" or error.status is None or error.status in TRANSIENT_STATUSES:
        return False
    return bool(_VALIDATION_BODY.search(error.message))


Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """The shape of the backoff (the number of retries and the deadline are model settings).

    Attributes:
        base_delay_s: the first wait before jitter.
        max_delay_s: the longest wait before jitter.
        max_retry_after_s: the longest ``Retry-After`` honoured; a longer one ends the call.
        seed: seed of the jitter (``None``: fresh entropy; jitter changes timing, never play).
        sleep: the coroutine that waits (tests pass a recorder).
    """

    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    max_retry_after_s: float = 120.0
    seed: int | None = None
    sleep: Sleep = field(default=asyncio.sleep, compare=False)

    def __post_init__(self) -> None:
        if self.base_delay_s < 0 or self.max_delay_s < self.base_delay_s:
            raise ValueError(
                "RetryPolicy needs 0 <= base_delay_s <= max_delay_s, got "
                f"base_delay_s={self.base_delay_s}, max_delay_s={self.max_delay_s}"
            )
        if self.max_retry_after_s < 0:
            raise ValueError(f"max_retry_after_s must be >= 0, got {self.max_retry_after_s}")

    def rng(self) -> np.random.Generator:
        """A fresh jitter generator for one backend."""
        return np.random.default_rng(self.seed)

    def delay(self, failures: int, retry_after: float | None, rng: np.random.Generator) -> float:
        """Seconds to wait after ``failures + 1`` failed attempts."""
        exponential = min(self.max_delay_s, self.base_delay_s * 2.0**failures)
        jittered = exponential * (0.5 + 0.5 * float(rng.random()))
        if retry_after is not None:
            return max(float(retry_after), jittered)
        return jittered


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    what: str,
    settings: ModelSettings,
    policy: RetryPolicy,
    rng: np.random.Generator,
    classify: Callable[[Exception], ModelError | None],
) -> tuple[T, tuple[Attempt, ...]]:
    """``await attempt()`` within the deadline and retry budget of ``settings``.

    ``classify`` turns an exception of the attempt into a :class:`ModelError` (or ``None`` for
    one that is not about the model, which propagates unchanged). Returns the result and the
    failed attempts before it; raises :class:`ModelUnavailable` (:class:`ModelTimeout` when the
    last attempt timed out) once the budget is spent or the failure cannot be retried.
    """
    failures: list[Attempt] = []
    last: ModelError | None = None
    for n in range(settings.retries + 1):
        try:
            async with asyncio.timeout(settings.timeout_s):
                result = await attempt()
            return result, tuple(failures)
        except TimeoutError:
            last = ModelError(
                f"no complete reply within {settings.timeout_s:g} s", kind="timeout", retryable=True
            )
        except Exception as exc:
            error = classify(exc)
            if error is None:
                raise
            last = error
        if isinstance(last, ContextLengthExceeded):
            failures.append(Attempt(last.kind, last.message, last.status))
            last.attempts = tuple(failures)
            raise last
        if is_permanent(last):
            failures.append(Attempt(last.kind, last.message, last.status))
            raise ModelUnavailable(
                f"{what}: the server rejected the request permanently (HTTP {last.status}, "
                f"a request validation error): {last.message}",
                kind="refused",
                status=last.status,
                attempts=tuple(failures),
                permanent=True,
            ) from last
        if not last.retryable:
            failures.append(Attempt(last.kind, last.message, last.status))
            raise ModelUnavailable(
                f"{what}: the provider refused the request ({last.message})",
                kind=last.kind,
                status=last.status,
                attempts=tuple(failures),
            ) from last
        if n == settings.retries:
            failures.append(Attempt(last.kind, last.message, last.status))
            break
        if last.retry_after is not None and last.retry_after > policy.max_retry_after_s:
            failures.append(Attempt(last.kind, last.message, last.status))
            raise ModelUnavailable(
                f"{what}: the provider asked to wait {last.retry_after:g} s (Retry-After), more "
                f"than the {policy.max_retry_after_s:g} s allowed",
                kind=last.kind,
                status=last.status,
                retry_after=last.retry_after,
                attempts=tuple(failures),
            ) from last
        wait = policy.delay(n, last.retry_after, rng)
        failures.append(Attempt(last.kind, last.message, last.status, wait))
        await policy.sleep(wait)
    assert last is not None  # the loop ran at least once and did not return
    unavailable = ModelTimeout if last.kind == "timeout" else ModelUnavailable
    raise unavailable(
        f"{what}: no reply after {len(failures)} attempt(s); last error ({last.kind}): "
        f"{last.message}",
        kind=last.kind,
        status=last.status,
        attempts=tuple(failures),
    ) from last
