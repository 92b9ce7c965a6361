"""A :class:`~llm_policies.backends.base.ModelBackend` on a verifiers interaction: one request,
one turn of the seat's rollout.

The LLM policies keep everything that is theirs (prompts, reply schema, quirk-tolerant parsing,
re-asks, fallbacks, caps, decision records); verifiers makes the call, through the seat's harness
(:mod:`~llm_policies.apps.verifiers.harness`), and records it in the seat's trace. A turn that
comes back without a reply (the rollout ended: a verifiers limit such as ``max_turns``, or a call
that failed after its retries) is an outage (:class:`~llm_policies.backends.base.
ModelUnavailable`), never the model's play; :attr:`Seat.ended` then says why, and the game stops
(:mod:`~llm_policies.apps.verifiers.policy`).

Usage follows this library's convention (``input_tokens`` counts cache reads too); the cost is
the provider's when verifiers got one, 0 for a model declared ``local``, else unknown (never 0).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Final

import verifiers.v1 as vf

from llm_policies.apps.verifiers.wire import CURRENT, SERVED_MODES, reply_parts, turn_messages
from llm_policies.backends.base import ErrorKind, ModelReply, ModelRequest, ModelUnavailable
from llm_policies.settings import OutputMode
from maze_envs.policies.interface import Usage

#: The stop conditions of verifiers' own limits (``--env.<seat>.max-turns``, token caps, stage
#: deadlines: any ``*_timeout``): the rollout ended because the run said so, not the model.
LIMITS: Final = frozenset(
    {"max_turns", "max_input_tokens", "max_output_tokens", "max_total_tokens"}
)


def is_limit(stop_condition: str | None) -> bool:
    """Whether a rollout stopped at one of verifiers' limits (:data:`LIMITS`, a deadline)."""
    return stop_condition in LIMITS or str(stop_condition).endswith("_timeout")


@dataclass
class Seat:
    """One player of the game and its open verifiers interaction.

    ``ended`` is why the rollout can take no more turns (None while it can); ``limited`` that it
    ended at a verifiers limit (a cap of the run, as the harness's own caps: the game stops and
    is scored as it stood), not because a call failed (an outage).
    """

    name: str
    interaction: Any  # a verifiers Interaction (vf.Interaction)
    ended: str | None = None
    limited: bool = False

    @property
    def trace(self) -> vf.Trace:
        trace: vf.Trace = self.interaction.trace
        return trace


def why_over(trace: vf.Trace) -> str:
    """Why a seat's rollout ended: its stop condition and last error, as verifiers recorded them."""
    error = trace.last_error
    detail = f": {error.type}: {error.message}" if error is not None else ""
    return f"the verifiers rollout ended ({trace.stop_condition or 'no reply'}){detail}"


def to_usage(call: vf.ModelCall | None, latency_s: float, local: bool) -> Usage:
    """A call's usage as verifiers recorded it, in this library's convention, with its cost."""
    tokens = call.usage if call is not None else None
    if tokens is None:
        return Usage(requests=1, latency_s=latency_s)
    cached = tokens.cached_input_tokens or 0
    usage = Usage(
        input_tokens=tokens.prompt_tokens + cached,
        output_tokens=tokens.completion_tokens,
        cache_read_tokens=cached,
        requests=1,
        latency_s=latency_s,
    )
    if tokens.cost is not None:
        return replace(usage, cost_usd=float(tokens.cost), cost_status="priced")
    if local:
        return replace(usage, cost_usd=0.0, cost_status="local")
    return usage  # priced later by the harness when genai-prices is there, else unknown


class InteractionBackend:
    """Sends the policy's requests as turns of one seat's verifiers interaction.

    Args:
        model: the model verifiers plays the seat with (``-m``, or the seat's pin).
        local: the model runs on your own hardware (its calls cost 0).
    """

    output_modes: tuple[OutputMode, ...] = SERVED_MODES

    def __init__(self, model: str, *, local: bool = False) -> None:
        self.model = model
        self.spec = f"verifiers:{model}"
        self.local = local
        self.seat: Seat | None = None

    def bind(self, seat: Seat) -> None:
        """Play through ``seat`` from now on (the policy's reset does it)."""
        self.seat = seat

    async def complete(self, request: ModelRequest) -> ModelReply:
        seat = self.seat
        if seat is None:
            raise ModelUnavailable(
                "no verifiers seat: the policy was not reset into a verifiers episode",
                kind="refused",
            )
        if seat.ended is not None:
            raise ModelUnavailable(seat.ended, kind="refused")
        trace = seat.trace
        calls_before = len(trace.calls)
        started = time.perf_counter()
        token = CURRENT.set(request)
        try:
            segment = await seat.interaction.turn(turn_messages(request))
        except RuntimeError as error:  # the interaction is closed or over
            seat.ended = f"the verifiers interaction cannot take a turn: {error}"
            raise ModelUnavailable(seat.ended, kind="refused") from error
        finally:
            CURRENT.reset(token)
        latency = time.perf_counter() - started
        if segment.terminated:
            seat.ended = why_over(trace)
            seat.limited = is_limit(trace.stop_condition)
            last = trace.last_error
            status = last.status_code if last is not None else None
            kind: ErrorKind = "refused" if seat.limited else "server"
            raise ModelUnavailable(seat.ended, kind=kind, status=status)
        text, arguments = reply_parts(segment.messages)
        calls = trace.calls[calls_before:]
        call = calls[-1] if calls else None
        if call is not None and call.time.end and call.time.start:
            latency = call.time.end - call.time.start
        raw: dict[str, Any] = {"messages": [m.model_dump(mode="json") for m in segment.messages]}
        if call is not None:
            raw["call"] = call.model_dump(mode="json", exclude_none=True)
        return ModelReply(
            text=text,
            tool_arguments=arguments,
            usage=to_usage(call, latency, self.local),
            model=(call.model if call is not None and call.model else self.model),
            latency_s=latency,
            raw=raw,
        )

    async def aclose(self) -> None:
        """Nothing to close: verifiers owns the interaction and its connections."""
        return None
