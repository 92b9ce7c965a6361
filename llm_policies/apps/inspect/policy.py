"""The LLM policies with Inspect AI's model behind them, as policy-registry factories.

:func:`escape_policy` and :func:`agimaze_policy` build the ordinary
:class:`~llm_policies.policy.EscapeLLMPolicy` / :class:`~llm_policies.policy.AgiMazeLLMPolicy`
over an :class:`~llm_policies.apps.inspect.backend.InspectBackend`: one harness (prompts, schema,
parsing, re-asks, decision records), Inspect's model API underneath. They are reached by import
path (``llm_policies.apps.inspect.policy:escape_policy``), so a game task of the benchmark runner
names them like any other policy and the runner's rollout plays and journals the game; the
model is the one Inspect is evaluating (``inspect_ai.model.get_model()``), or ``model=`` names
one (``model=openai/gpt-4o-mini``, usable from ``maze-envs bench`` too).

Options are the LLM policies' (:func:`policy_option_names`): the harness settings
(``prompt_version``, ``output_mode``, ``check``, ``order``, ``history``, ``window``,
``parse_retries``, caps...), the sampling settings (``temperature``, ``max_output_tokens``,
``seed``, ``reasoning_effort``; unset ones come from the Inspect model's own config, so
``inspect eval --temperature 0.2`` is recorded as 0.2), the response cache and run caps. The
transport settings belong to Inspect and are refused with the Inspect option to use instead.

Example:
    >>> split_policy_options({"temperature": "0.2", "mode": "native", "check": "required"})
    ({'temperature': '0.2'}, {'output_mode': 'native', 'check': 'required'}, {})
    >>> split_policy_options({"retries": 3})
    Traceback (most recent call last):
    ...
    ValueError: option 'retries' is Inspect's here: use inspect eval --max-retries N
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, ClassVar, Final

from inspect_ai.model import Model, get_model

from llm_policies.apps.front import (
    FrontOptions,
    FrontPolicy,
    check_built,
    front_run_budget,
    policy_class,
)
from llm_policies.apps.inspect.backend import GameControl, InspectBackend
from llm_policies.backends.base import ModelBackend
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from maze_envs.policies.interface import Decision, as_decision

#: Import paths of the factories, as policy specs of the runner (``maze_envs.bench``).
ESCAPE_POLICY: Final = "llm_policies.apps.inspect.policy:escape_policy"
AGIMAZE_POLICY: Final = "llm_policies.apps.inspect.policy:agimaze_policy"

#: Settings Inspect owns in this front end, with the Inspect option that sets them.
INSPECT_OWNED: Final[dict[str, str]] = {
    "timeout_s": "inspect eval --timeout S (per call, retries included) or --attempt-timeout S",
    "timeout": "inspect eval --timeout S (per call, retries included) or --attempt-timeout S",
    "retries": "inspect eval --max-retries N",
    "base_url": "inspect eval --model-base-url URL",
    "num_ctx": "the provider's own model args (inspect eval -M key=value), where it has one",
    "keep_alive": "the provider's own model args (inspect eval -M key=value), where it has one",
    "think": "inspect eval --reasoning-effort ...",
    "local": "nothing: local providers (ollama, vllm, hf, mockllm...) are known by name",
    "client": "nothing: Inspect makes the provider's client",
    "provider": "nothing: Inspect makes the provider's client",
}
#: Where the Inspect policies' options go.
OPTIONS: Final = FrontOptions(
    "Inspect's",
    INSPECT_OWNED,
    frozenset({"cache", "cache_mode", "max_tokens_per_run", "max_cost_per_run", "run"}),
)

#: The game's control (shared by its backends, policies and the solver); set by the solver.
_CONTROL: ContextVar[GameControl | None] = ContextVar("maze_envs_inspect_control", default=None)


@contextlib.contextmanager
def game_control() -> Iterator[GameControl]:
    """A fresh :class:`GameControl` for the policies built inside this block (one game)."""
    control = GameControl()
    token = _CONTROL.set(control)
    try:
        yield control
    finally:
        _CONTROL.reset(token)


#: Every option the Inspect policies take (aliases included), sorted.
policy_option_names = OPTIONS.names
#: ``options`` as (model settings, harness settings, cache and run caps), aliases resolved;
#: ValueError for an option Inspect owns (naming the Inspect option) or an unknown one.
split_policy_options = OPTIONS.split


def check_policy_options(env_kind: str, options: Mapping[str, Any]) -> None:
    """Raise ValueError now for options the policy would refuse when the game starts.

    Builds the policy over a stand-in backend, so the policy's own checks run (prompt
    version, output mode, history...) before any model is called.
    """
    settings, harness, _ = OPTIONS.validated(options)
    check_built(env_kind, settings, harness)


class InspectPolicy(FrontPolicy):
    """An LLM policy whose backend is Inspect's model; it ends the game at an Inspect limit.

    Everything is the wrapped policy's (reset, decisions, records); this adds the stop request
    when the sample ran into an Inspect limit, and the Inspect model and its config to the
    harness report (the transport settings Inspect owns, deadline and retries, are left out of
    ``settings``: Inspect's values, when set, are in ``inspect.generate_config``).
    """

    owned: ClassVar[Mapping[str, str]] = INSPECT_OWNED
    report_key: ClassVar[str] = "inspect"

    def __init__(
        self,
        policy: EscapeLLMPolicy | AgiMazeLLMPolicy,
        backend: InspectBackend,
    ) -> None:
        super().__init__(policy)
        self.backend = backend

    async def aact(self, observation: Any) -> Decision[Any]:
        result: Any = await self.policy.aact(observation)
        decision: Decision[Any] = as_decision(result)
        reason = self.backend.control.stop_reason
        if reason is not None and decision.stop is None:
            decision = replace(decision, stop=reason)
        return decision

    def framework(self) -> dict[str, Any]:
        """The Inspect model and its config."""
        model = self.backend.model
        return {
            "model": str(model),
            "generate_config": model.config.model_dump(mode="json", exclude_none=True),
        }


def make_inspect_policy(
    env_kind: str, model: str | Model | None = None, **options: Any
) -> InspectPolicy:
    """The LLM policy of ``env_kind`` on Inspect's model (see the module docstring).

    ``model``: an Inspect model or model name (``anthropic/claude-sonnet-5-5``); None: the
    model of the running Inspect eval (``get_model()``).
    """
    settings, harness, other = OPTIONS.validated(options)
    inspect_model = (
        model if isinstance(model, Model) else get_model(model) if model else get_model()
    )
    control = _CONTROL.get()
    inspect_backend = InspectBackend(inspect_model, control)
    backend: ModelBackend = inspect_backend
    if other.get("cache") and other.get("cache_mode", "read_write") != "off":
        from llm_policies.cache import CachedBackend

        backend = CachedBackend(backend, other["cache"], mode=other.get("cache_mode", "read_write"))
    policy = policy_class(env_kind)(
        backend,
        settings=inspect_backend.effective_settings(settings),
        harness=harness,
        run_budget=front_run_budget(other, "inspect"),
    )
    return InspectPolicy(policy, inspect_backend)


def escape_policy(model: str | None = None, **options: Any) -> InspectPolicy:
    """A Maze Escape agent on an Inspect model
    (``llm_policies.apps.inspect.policy:escape_policy``)."""
    return make_inspect_policy("escape", model, **options)


def agimaze_policy(model: str | None = None, **options: Any) -> InspectPolicy:
    """The AGI Maze player as an Inspect model
    (``llm_policies.apps.inspect.policy:agimaze_policy``)."""
    return make_inspect_policy("agimaze", model, **options)
