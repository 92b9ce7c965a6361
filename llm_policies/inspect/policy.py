"""The LLM policies with Inspect AI's model behind them, as policy-registry factories.

:func:`escape_policy` and :func:`agimaze_policy` build the ordinary
:class:`~llm_policies.policy.EscapeLLMPolicy` / :class:`~llm_policies.policy.AgiMazeLLMPolicy`
over an :class:`~llm_policies.inspect.backend.InspectBackend`: one harness (prompts, schema,
parsing, re-asks, decision records), Inspect's model API underneath. They are reached by import
path (``llm_policies.inspect.policy:escape_policy``), so a game task of the benchmark runner
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
import difflib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, ClassVar, Final

from inspect_ai.model import Model, get_model
from pydantic import ValidationError

from llm_policies.accounting import Budget
from llm_policies.backends.base import ModelBackend
from llm_policies.backends.scripted import ScriptedBackend
from llm_policies.harness import HarnessSettings
from llm_policies.inspect.backend import GameControl, InspectBackend
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from llm_policies.registry import ALIASES, run_budget
from llm_policies.settings import ModelSettings
from maze_envs.policies.interface import AsyncPolicyBase, Decision, as_decision

#: Import paths of the factories, as policy specs of the runner (``maze_envs.bench``).
ESCAPE_POLICY: Final = "llm_policies.inspect.policy:escape_policy"
AGIMAZE_POLICY: Final = "llm_policies.inspect.policy:agimaze_policy"

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
_OTHER: Final = frozenset({"cache", "cache_mode", "max_tokens_per_run", "max_cost_per_run", "run"})

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


def _model_fields() -> frozenset[str]:
    return frozenset(ModelSettings.model_fields) - frozenset(INSPECT_OWNED)


def policy_option_names() -> list[str]:
    """Every option the Inspect policies take (aliases included), sorted."""
    names = _model_fields() | frozenset(HarnessSettings.model_fields) | _OTHER
    return sorted(names | {a for a, name in ALIASES.items() if name in names})


def split_policy_options(
    options: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``options`` as (model settings, harness settings, cache and run caps), aliases resolved.

    Raises ValueError for an option Inspect owns (naming the Inspect option) or an unknown one.
    """
    model: dict[str, Any] = {}
    harness: dict[str, Any] = {}
    other: dict[str, Any] = {}
    model_fields, harness_fields = _model_fields(), frozenset(HarnessSettings.model_fields)
    for raw, value in options.items():
        name = ALIASES.get(raw, raw)
        if raw in INSPECT_OWNED or name in INSPECT_OWNED:
            raise ValueError(f"option {raw!r} is Inspect's here: use {INSPECT_OWNED[name]}")
        if name in model_fields:
            model[name] = value
        elif name in harness_fields:
            harness[name] = value
        elif name in _OTHER:
            other[name] = value
        else:
            known = policy_option_names()
            close = difflib.get_close_matches(raw, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown option {raw!r}{hint} (options: {', '.join(known)})")
    if isinstance(harness.get("order"), str) and "," in harness["order"]:
        harness["order"] = tuple(part.strip() for part in harness["order"].split(","))
    return model, harness, other


def _validated(
    options: Mapping[str, Any],
) -> tuple[ModelSettings, HarnessSettings, dict[str, Any]]:
    model, harness, other = split_policy_options(options)
    try:
        settings = ModelSettings(**model)
        harness_settings = HarnessSettings(**harness)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        )
        raise ValueError(f"invalid policy options: {problems}") from None
    return settings, harness_settings, other


def _policy_class(env_kind: str) -> type[EscapeLLMPolicy] | type[AgiMazeLLMPolicy]:
    if env_kind == "escape":
        return EscapeLLMPolicy
    if env_kind == "agimaze":
        return AgiMazeLLMPolicy
    raise ValueError(f"unknown environment kind {env_kind!r}; use 'escape' or 'agimaze'")


def check_policy_options(env_kind: str, options: Mapping[str, Any]) -> None:
    """Raise ValueError now for options the policy would refuse when the game starts.

    Builds the policy over a stand-in backend, so the policy's own checks run (prompt
    version, output mode, history...) before any model is called.
    """
    settings, harness, _ = _validated(options)
    try:
        _policy_class(env_kind)(ScriptedBackend([]), settings=settings, harness=harness)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid policy options: {exc}") from None


class InspectPolicy(AsyncPolicyBase[Any, Any, Any]):
    """An LLM policy whose backend is Inspect's model; it ends the game at an Inspect limit.

    Everything is the wrapped policy's (reset, decisions, records); this adds the stop request
    when the sample ran into an Inspect limit, and the Inspect model and its config to the
    harness report.
    """

    privileged: ClassVar[bool] = False

    def __init__(
        self,
        policy: EscapeLLMPolicy | AgiMazeLLMPolicy,
        backend: InspectBackend,
    ) -> None:
        self.policy = policy
        self.backend = backend

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        self.policy.reset(agent, seed, episode)

    async def aact(self, observation: Any) -> Decision[Any]:
        result: Any = await self.policy.aact(observation)
        decision: Decision[Any] = as_decision(result)
        reason = self.backend.control.stop_reason
        if reason is not None and decision.stop is None:
            decision = replace(decision, stop=reason)
        return decision

    def harness(self) -> dict[str, Any]:
        """The wrapped policy's harness report, with the Inspect model and its config.

        The transport settings Inspect owns (deadline, retries...) are left out of
        ``settings``: Inspect's values, when set, are in ``inspect.generate_config``.
        """
        report = dict(self.policy.harness())
        settings = report.get("settings")
        if isinstance(settings, Mapping):  # deadline and retries are Inspect's, not these
            report["settings"] = {k: v for k, v in settings.items() if k not in INSPECT_OWNED}
        model = self.backend.model
        report["inspect"] = {
            "model": str(model),
            "generate_config": model.config.model_dump(mode="json", exclude_none=True),
        }
        return report

    def close(self) -> None:
        self.policy.close()

    async def aclose(self) -> None:
        await self.policy.aclose()

    def __getattr__(self, name: str) -> Any:  # options, schema, settings... of the policy
        if name == "policy":  # not set yet (a half-built object): no recursion
            raise AttributeError(name)
        return getattr(self.policy, name)


def make_inspect_policy(
    env_kind: str, model: str | Model | None = None, **options: Any
) -> InspectPolicy:
    """The LLM policy of ``env_kind`` on Inspect's model (see the module docstring).

    ``model``: an Inspect model or model name (``anthropic/claude-sonnet-5-5``); None: the
    model of the running Inspect eval (``get_model()``).
    """
    settings, harness, other = _validated(options)
    inspect_model = (
        model if isinstance(model, Model) else get_model(model) if model else get_model()
    )
    control = _CONTROL.get()
    inspect_backend = InspectBackend(inspect_model, control)
    backend: ModelBackend = inspect_backend
    if other.get("cache") and other.get("cache_mode", "read_write") != "off":
        from llm_policies.cache import CachedBackend

        backend = CachedBackend(backend, other["cache"], mode=other.get("cache_mode", "read_write"))
    budget: Budget | None = None
    caps = (other.get("max_tokens_per_run"), other.get("max_cost_per_run"))
    if any(cap is not None for cap in caps):
        tokens = None if caps[0] is None else int(caps[0])
        cost = None if caps[1] is None else float(caps[1])
        budget = run_budget(str(other.get("run", "inspect")), tokens, cost)
    policy = _policy_class(env_kind)(
        backend,
        settings=inspect_backend.effective_settings(settings),
        harness=harness,
        run_budget=budget,
    )
    return InspectPolicy(policy, inspect_backend)


def escape_policy(model: str | None = None, **options: Any) -> InspectPolicy:
    """A Maze Escape agent on an Inspect model (``llm_policies.inspect.policy:escape_policy``)."""
    return make_inspect_policy("escape", model, **options)


def agimaze_policy(model: str | None = None, **options: Any) -> InspectPolicy:
    """The AGI Maze player as an Inspect model (``llm_policies.inspect.policy:agimaze_policy``)."""
    return make_inspect_policy("agimaze", model, **options)
