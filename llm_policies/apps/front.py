"""What the front ends that hand an LLM policy's model to an evaluation framework share.

The Inspect AI tasks (:mod:`llm_policies.apps.inspect.policy`) and the verifiers environments
(:mod:`llm_policies.apps.verifiers.policy`) build the ordinary LLM policies over a backend of
the framework. Both take the policies' options, minus the settings the framework owns (each of
those refused with the framework's own option to use instead): :class:`FrontOptions` routes
them; :func:`policy_class` picks the policy of a game; :func:`front_run_budget` reads the run
caps; :class:`FrontPolicy` wraps the built policy and reports the harness without the settings
the framework owns.

Example:
    >>> front = FrontOptions("Acme's", {"retries": "acme --retries N"}, frozenset({"run"}))
    >>> front.split({"temperature": "0.2", "mode": "native", "run": "r"})
    ({'temperature': '0.2'}, {'output_mode': 'native'}, {'run': 'r'})
    >>> front.split({"retries": 3})
    Traceback (most recent call last):
    ...
    ValueError: option 'retries' is Acme's here: use acme --retries N
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ValidationError

from llm_policies.accounting import Budget
from llm_policies.backends.scripted import ScriptedBackend
from llm_policies.harness import HarnessSettings
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from llm_policies.registry import ALIASES, run_budget
from llm_policies.settings import ModelSettings
from maze_envs.policies.interface import AsyncPolicyBase, Decision

Options = dict[str, Any]


@dataclass(frozen=True)
class FrontOptions:
    """Where a front end's policy options go: model settings, harness settings, or its own
    ``other`` options; ``owned`` maps each setting the framework owns to the framework's option
    that sets it (``owner`` names the framework in the error: ``"Inspect's"``)."""

    owner: str
    owned: Mapping[str, str]
    other: frozenset[str]

    def model_fields(self) -> frozenset[str]:
        """The model settings the front end takes (those the framework owns left out)."""
        return frozenset(ModelSettings.model_fields) - frozenset(self.owned)

    def names(self) -> list[str]:
        """Every option the front end takes (aliases included), sorted."""
        names = self.model_fields() | frozenset(HarnessSettings.model_fields) | self.other
        return sorted(names | {a for a, name in ALIASES.items() if name in names})

    def split(self, options: Mapping[str, Any]) -> tuple[Options, Options, Options]:
        """``options`` as (model settings, harness settings, others), aliases resolved.

        Raises ValueError for an option the framework owns (naming its option) or an unknown
        one (naming the closest known one).
        """
        model: Options = {}
        harness: Options = {}
        other: Options = {}
        model_fields, harness_fields = self.model_fields(), frozenset(HarnessSettings.model_fields)
        for raw, value in options.items():
            name = ALIASES.get(raw, raw)
            if raw in self.owned or name in self.owned:
                owner = self.owned.get(raw) or self.owned[name]
                raise ValueError(f"option {raw!r} is {self.owner} here: use {owner}")
            if name in model_fields:
                model[name] = value
            elif name in harness_fields:
                harness[name] = value
            elif name in self.other:
                other[name] = value
            else:
                known = self.names()
                close = difflib.get_close_matches(raw, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"unknown option {raw!r}{hint} (options: {', '.join(known)})")
        if isinstance(harness.get("order"), str) and "," in harness["order"]:
            harness["order"] = tuple(part.strip() for part in harness["order"].split(","))
        return model, harness, other

    def validated(
        self, options: Mapping[str, Any]
    ) -> tuple[ModelSettings, HarnessSettings, Options]:
        """The model settings, the harness settings and the other options of ``options``;
        ValueError naming what is wrong."""
        model, harness, other = self.split(options)
        return (*settings_of(model, harness), other)


def settings_of(model: Options, harness: Options) -> tuple[ModelSettings, HarnessSettings]:
    """The validated settings; ValueError listing every invalid one (``field: why (got x)``)."""
    try:
        return ModelSettings(**model), HarnessSettings(**harness)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        )
        raise ValueError(f"invalid policy options: {problems}") from None


def policy_class(env_kind: str) -> type[EscapeLLMPolicy] | type[AgiMazeLLMPolicy]:
    """The LLM policy class of an environment kind."""
    if env_kind == "escape":
        return EscapeLLMPolicy
    if env_kind == "agimaze":
        return AgiMazeLLMPolicy
    raise ValueError(f"unknown environment kind {env_kind!r}; use 'escape' or 'agimaze'")


def check_built(env_kind: str, settings: ModelSettings, harness: HarnessSettings) -> None:
    """Raise ValueError now for settings the policy would refuse when the game starts: the
    policy is built over a stand-in backend, so its own checks (prompt version, output mode,
    history...) run before any model is called."""
    try:
        policy_class(env_kind)(ScriptedBackend([]), settings=settings, harness=harness)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid policy options: {exc}") from None


def front_run_budget(other: Mapping[str, Any], default_run: str) -> Budget | None:
    """The run budget the ``max_tokens_per_run`` / ``max_cost_per_run`` options ask for (shared
    by every policy of the run named ``run``, default ``default_run``); None without caps."""
    tokens, cost = other.get("max_tokens_per_run"), other.get("max_cost_per_run")
    if tokens is None and cost is None:
        return None
    return run_budget(
        str(other.get("run", default_run)),
        None if tokens is None else int(tokens),
        None if cost is None else float(cost),
    )


class FrontPolicy(AsyncPolicyBase[Any, Any, Any]):
    """A built LLM policy as a front end hands it out: everything is the wrapped policy's
    (reset, decisions, records, options); subclasses add what the framework needs to
    :meth:`aact` and :meth:`framework`. The harness report leaves out the settings the
    framework owns (:attr:`owned`) and adds the framework's own under :attr:`report_key`."""

    privileged: ClassVar[bool] = False
    #: the settings the framework owns (left out of the harness report's ``settings``)
    owned: ClassVar[Mapping[str, str]] = {}
    #: the harness report's key of :meth:`framework`
    report_key: ClassVar[str] = ""

    def __init__(self, policy: EscapeLLMPolicy | AgiMazeLLMPolicy) -> None:
        self.policy = policy

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        self.policy.reset(agent, seed, episode)

    async def aact(self, observation: Any) -> Decision[Any]:
        raise NotImplementedError

    def framework(self) -> dict[str, Any]:
        """How the framework plays the model (the harness report's :attr:`report_key`)."""
        raise NotImplementedError

    def harness(self) -> dict[str, Any]:
        """The wrapped policy's harness report, without the settings the framework owns, and
        with :meth:`framework`."""
        report = dict(self.policy.harness())
        settings = report.get("settings")
        if isinstance(settings, Mapping):
            report["settings"] = {k: v for k, v in settings.items() if k not in self.owned}
        report[self.report_key] = self.framework()
        return report

    def close(self) -> None:
        self.policy.close()

    async def aclose(self) -> None:
        await self.policy.aclose()

    def __getattr__(self, name: str) -> Any:  # options, schema, settings... of the policy
        if name == "policy":  # not set yet (a half-built object): no recursion
            raise AttributeError(name)
        return getattr(self.policy, name)
