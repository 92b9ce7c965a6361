"""The LLM policies with a verifiers seat as their model, as policy-registry factories.

:func:`escape_policy` and :func:`agimaze_policy` build the ordinary
:class:`~llm_policies.policy.EscapeLLMPolicy` / :class:`~llm_policies.policy.AgiMazeLLMPolicy`
over an :class:`~llm_policies.apps.verifiers.backend.InteractionBackend`. They are reached by
import path (:data:`ESCAPE_POLICY`, :data:`AGIMAZE_POLICY`), so a game task of the benchmark
runner names them like any other policy and the runner's rollout plays and journals the game.
They work inside a verifiers episode only (:func:`playing`): that is where the seats are; each
policy takes its agent's seat when the runner resets it.

Options are the LLM policies' harness settings (``prompt_version``, ``output_mode``, ``check``,
``order``, ``history``, ``window``, ``parse_retries``, caps...), ``context_window``, ``local``
and the run caps. The output mode is ``prompted`` unless asked (plain chat, which every
OpenAI-compatible server and verifiers' trainers take; the schema is in the prompt). What
verifiers owns is refused, naming its option: sampling (``--sampling.*``), the endpoint
(``--client.*``), retries and deadlines (``--env.<seat>.harness.*``); the response cache too,
since a cached reply would never reach verifiers' trace. The sampling settings the game records
are those verifiers plays the seat with.

Example:
    >>> split_policy_options({"mode": "native", "check": "required", "local": "true"})
    ({}, {'output_mode': 'native', 'check': 'required'}, {'local': 'true'})
    >>> split_policy_options({"temperature": 0.2})
    Traceback (most recent call last):
    ...
    ValueError: option 'temperature' is verifiers' here: use vf-eval --sampling.temperature T
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final

from llm_policies.apps.front import (
    FrontOptions,
    FrontPolicy,
    check_built,
    front_run_budget,
    policy_class,
    settings_of,
)
from llm_policies.apps.verifiers.backend import InteractionBackend, Seat
from llm_policies.harness import HarnessSettings
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from llm_policies.settings import OPENAI_NAMES, ModelSettings, settings_values
from maze_envs.bench.policyspec import parse_value
from maze_envs.policies.interface import Decision, as_decision

#: Import paths of the factories, as policy specs of the runner (``maze_envs.bench``).
ESCAPE_POLICY: Final = "llm_policies.apps.verifiers.policy:escape_policy"
AGIMAZE_POLICY: Final = "llm_policies.apps.verifiers.policy:agimaze_policy"
#: The output mode of a verifiers seat unless asked.
DEFAULT_OUTPUT_MODE: Final = "prompted"

#: Settings verifiers owns in this front end, with the option that sets them.
VERIFIERS_OWNED: Final[dict[str, str]] = {
    "temperature": "vf-eval --sampling.temperature T",
    "max_output_tokens": "vf-eval --sampling.max-tokens N",
    "seed": "vf-eval --sampling.seed N (passed to the provider)",
    "reasoning_effort": "vf-eval --sampling.reasoning-effort LEVEL",
    "timeout_s": "--env.<seat>.harness.timeout-s S (the seat is team or player)",
    "retries": "--env.<seat>.harness.max-retries N (the seat is team or player)",
    "base_url": "vf-eval --client.base-url URL",
    "num_ctx": "the provider's own setting (vf-eval --sampling.<key> passes it through)",
    "keep_alive": "the provider's own setting (vf-eval --sampling.<key> passes it through)",
    "think": "vf-eval --sampling.reasoning-effort LEVEL",
    "client": "nothing: verifiers makes the client",
    "provider": "nothing: verifiers makes the client",
    "cache": "nothing: a cached reply would never reach verifiers' trace",
    "cache_mode": "nothing: a cached reply would never reach verifiers' trace",
}
#: Where the verifiers policies' options go.
OPTIONS: Final = FrontOptions(
    "verifiers'",
    VERIFIERS_OWNED,
    frozenset({"local", "max_tokens_per_run", "max_cost_per_run", "run"}),
)


#: Every option the verifiers policies take (aliases included), sorted.
policy_option_names = OPTIONS.names
#: ``options`` as (model settings, harness settings, others), aliases resolved; ValueError for
#: an option verifiers owns (naming its option) or an unknown one.
split_policy_options = OPTIONS.split


def validated(
    options: Mapping[str, Any], sampling: Mapping[str, Any] | None = None
) -> tuple[ModelSettings, HarnessSettings, dict[str, Any]]:
    """The model settings (the seat's ``sampling`` filled in), harness settings and others of
    ``options``; ValueError naming what is wrong."""
    model, harness, other = split_policy_options(options)
    harness.setdefault("output_mode", DEFAULT_OUTPUT_MODE)
    if harness["output_mode"] == "auto":
        raise ValueError(
            "output_mode 'auto' probes the server with extra calls, which verifiers would record "
            "as turns; name a mode: tool, native, grammar, json_object or prompted"
        )
    return (*settings_of({**model, **sampling_settings(sampling or {})}, harness), other)


def sampling_settings(sampling: Mapping[str, Any]) -> dict[str, Any]:
    """The model settings that verifiers' sampling config sets (what the game records)."""
    return settings_values(sampling, OPENAI_NAMES)


def check_policy_options(env_kind: str, options: Mapping[str, Any]) -> None:
    """Raise ValueError now for options the policy would refuse when the game starts (the
    policy is built over a stand-in backend, so its own checks run before any model call)."""
    settings, harness, _ = validated(options)
    check_built(env_kind, settings, harness)


@dataclass
class Episode:
    """What the policies of one verifiers episode share: the seats by agent, and how verifiers
    plays them (``model``, ``sampling``: the seat's resolved config; ``harness`` and ``seat``
    name the harness and the env's agent field)."""

    seats: dict[str, Seat]
    model: str
    sampling: dict[str, Any] = field(default_factory=dict)
    harness: str = ""
    seat: str = ""

    def stop_reason(self) -> str | None:
        """Why the game must stop: the first seat whose rollout ended, or None."""
        return next((f"{s.name}: {s.ended}" for s in self.seats.values() if s.ended), None)


_EPISODE: ContextVar[Episode | None] = ContextVar("maze_envs_verifiers_episode", default=None)


@contextlib.contextmanager
def playing(episode: Episode) -> Iterator[Episode]:
    """The policies built inside this block play ``episode``'s seats."""
    token = _EPISODE.set(episode)
    try:
        yield episode
    finally:
        _EPISODE.reset(token)


class VerifiersPolicy(FrontPolicy):
    """An LLM policy whose model is a verifiers seat; it stops the game when a seat's rollout
    ends, and reports how verifiers plays the seat in its harness report (the settings
    verifiers owns are left out of ``settings``: its own values are under ``verifiers``)."""

    owned: ClassVar[Mapping[str, str]] = VERIFIERS_OWNED
    report_key: ClassVar[str] = "verifiers"

    def __init__(
        self,
        policy: EscapeLLMPolicy | AgiMazeLLMPolicy,
        backend: InteractionBackend,
        episode: Episode,
    ) -> None:
        super().__init__(policy)
        self.backend = backend
        self.control = episode

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        seat = self.control.seats.get(agent)
        if seat is None:
            seats = sorted(self.control.seats)
            raise ValueError(f"no verifiers seat for agent {agent!r}; the episode has {seats}")
        self.backend.bind(seat)
        super().reset(agent, seed, episode)
        self.policy.reset(agent, seed, episode)

    async def aact(self, observation: Any) -> Decision[Any]:
        result: Any = await self.policy.aact(observation)
        decision: Decision[Any] = as_decision(result)
        seat = self.backend.seat
        if seat is not None and seat.limited and decision.status == "outage":
            decision = at_limit(decision, str(seat.ended))
        reason = self.control.stop_reason()
        if reason is not None and decision.stop is None:
            decision = replace(decision, stop=reason)
        return decision

    def framework(self) -> dict[str, Any]:
        """How verifiers plays the seat: its model, sampling, harness and seat field."""
        episode = self.control
        return {
            "model": episode.model,
            "sampling": dict(episode.sampling),
            "harness": episode.harness,
            "seat": episode.seat,
        }


def at_limit(decision: Decision[Any], reason: str) -> Decision[Any]:
    """A decision whose turn a verifiers limit refused: not an outage but a cap, as the harness
    records a request its own caps keep from being sent (``fallback``, reason ``cap``); the
    game stops there and is scored as it stood."""
    record = dict(decision.record or {})
    record.pop("outage", None)
    record.update(status="fallback", fallback_reason="cap", error=reason)
    return replace(decision, status="fallback", record=record, stop=reason)


def make_verifiers_policy(env_kind: str, **options: Any) -> VerifiersPolicy:
    """The LLM policy of ``env_kind`` on the current verifiers episode's seats."""
    episode = _EPISODE.get()
    if episode is None:
        raise ValueError(
            "the verifiers policies play inside a verifiers episode only (vf-eval "
            "maze_envs_escape or maze_envs_agimaze); elsewhere use a model spec such as "
            "openai-chat:<model>"
        )
    settings, harness, other = validated(options, episode.sampling)
    local = other.get("local", False)
    backend = InteractionBackend(
        episode.model, local=bool(parse_value(local) if isinstance(local, str) else local)
    )
    budget = front_run_budget(other, "verifiers")
    policy = policy_class(env_kind)(backend, settings=settings, harness=harness, run_budget=budget)
    return VerifiersPolicy(policy, backend, episode)


def escape_policy(**options: Any) -> VerifiersPolicy:
    """A Maze Escape agent on its verifiers seat (``...verifiers.policy:escape_policy``)."""
    return make_verifiers_policy("escape", **options)


def agimaze_policy(**options: Any) -> VerifiersPolicy:
    """The AGI Maze player on its verifiers seat (``...verifiers.policy:agimaze_policy``)."""
    return make_verifiers_policy("agimaze", **options)
