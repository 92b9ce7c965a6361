"""The ``maze_envs.policies`` entry point of the LLM policies: specs such as ``ollama:qwen3:8b``.

``maze-envs bench --policy anthropic:claude-sonnet-5-5:temperature=0.2`` (or
``maze_envs.policies.registry.make_policy``) finds the prefix (one of
:data:`maze_envs.policies.providers.LLM_PREFIXES`) in the entry-point group and calls
:func:`make_llm_policy` with the spec, the environment kind and the options. Options are
validated with clear errors; strings from the command line are converted (``"0.2"`` -> 0.2).

Options:
    model settings (:class:`~llm_policies.settings.ModelSettings`): ``temperature``,
    ``max_output_tokens``, ``seed``, ``reasoning_effort``, ``timeout_s`` (alias ``timeout``),
    ``retries``, ``num_ctx``, ``context_window``, ``keep_alive``, ``think``, ``base_url``;
    harness (:class:`~llm_policies.harness.HarnessSettings`): ``prompt_version`` (alias
    ``version``), ``wording``, ``output_mode`` (alias ``mode``: ``auto``, ``tool``, ``native``,
    ``grammar``, ``json_object``, ``prompted``), ``check``, ``order`` (``check_first``,
    ``move_first`` or the fields in order, separated by ``|``:
    ``order=radio|check|move|notebook``, a syntax that survives ``--policy``'s commas),
    ``history``, ``window``, ``parse_retries``,
    ``max_tokens_per_game``, ``max_cost_per_game`` (caps of the whole game: every agent of a
    game charges one budget), ``max_consecutive_fallbacks``, ``set_memory``;
    response cache: ``cache`` (a SQLite path), ``cache_mode`` (``read_write``, ``read_only``,
    ``off``);
    run caps: ``max_tokens_per_run``, ``max_cost_per_run`` (one budget per ``run`` name in this
    process, shared by every policy made with the same name and caps), or ``run_budget`` (an
    :class:`~llm_policies.accounting.Budget`, or any
    :class:`~llm_policies.accounting.BudgetNode`: a run budget shared across processes);
    ``local`` (count a self-hosted server as local: cost 0), ``client`` / ``provider`` (an SDK
    client or pydantic-ai provider to send through: proxies, tests).

Example:
    >>> policy = make_llm_policy("scripted:demo", "escape", client=['{"move": "N"}'],
    ...                          temperature="0.2", check="required")
    >>> policy.settings.temperature, policy.options.check
    (0.2, 'required')
    >>> make_llm_policy("ollama:qwen3:8b", "escape", temprature=0.2)
    Traceback (most recent call last):
    ...
    ValueError: unknown option 'temprature' for ollama:qwen3:8b; did you mean 'temperature'? ...
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError

from llm_policies.accounting import Budget
from llm_policies.backends.base import ModelBackend
from llm_policies.backends.make import make_backend
from llm_policies.harness import HarnessSettings
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from llm_policies.settings import ModelSettings
from maze_envs._registration import ENV_KINDS
from maze_envs.policies.providers import LLM_PREFIXES

#: Prefixes this package registers in the ``maze_envs.policies`` entry-point group (the table
#: of providers: :mod:`maze_envs.policies.providers`).
PREFIXES: Final = LLM_PREFIXES
ALIASES: Final[dict[str, str]] = {
    "timeout": "timeout_s",
    "version": "prompt_version",
    "prompt": "prompt_version",
    "mode": "output_mode",
    "output": "output_mode",
    "max_tokens": "max_output_tokens",
    "token_cap": "max_tokens_per_game",
    "cost_cap": "max_cost_per_game",
}
_MODEL_FIELDS: Final = frozenset(ModelSettings.model_fields)
_HARNESS_FIELDS: Final = frozenset(HarnessSettings.model_fields)
_OTHER: Final = frozenset(
    {
        "cache",
        "cache_mode",
        "max_tokens_per_run",
        "max_cost_per_run",
        "run",
        "run_budget",
        "local",
        "client",
        "provider",
    }
)
_RUN_BUDGETS: dict[tuple[str, int | None, float | None], Budget] = {}
_RUN_LOCK = threading.Lock()


def run_budget(name: str, max_tokens: int | None, max_cost_usd: float | None) -> Budget:
    """The process-wide run budget of ``name`` with these caps (created on first use)."""
    key = (name, max_tokens, max_cost_usd)
    with _RUN_LOCK:
        budget = _RUN_BUDGETS.get(key)
        if budget is None:
            budget = _RUN_BUDGETS[key] = Budget(max_tokens, max_cost_usd, name=f"run {name}")
        return budget


def _env_kind(env_kind: str) -> str:
    if env_kind not in ENV_KINDS:
        kinds = " or ".join(repr(kind) for kind in ENV_KINDS)
        raise ValueError(f"unknown environment kind {env_kind!r}; LLM policies play {kinds}")
    return env_kind


def _split(
    spec: str, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    known = sorted(_MODEL_FIELDS | _HARNESS_FIELDS | _OTHER | set(ALIASES))
    model: dict[str, Any] = {}
    harness: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for raw_name, value in options.items():
        name = ALIASES.get(raw_name, raw_name)
        if name in _MODEL_FIELDS:
            model[name] = value
        elif name in _HARNESS_FIELDS:
            harness[name] = value
        elif name in _OTHER:
            other[name] = value
        else:
            close = difflib.get_close_matches(raw_name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"unknown option {raw_name!r} for {spec}{hint} (options: {', '.join(known)})"
            )
    order = harness.get("order")
    if isinstance(order, str) and ("|" in order or "," in order):
        # "|" survives the command line's comma-separated options; "," works from Python
        harness["order"] = tuple(f.strip() for f in order.replace(",", "|").split("|"))
    for key in ("think", "local", "set_memory"):
        source = model if key in model else harness if key in harness else other
        if isinstance(source.get(key), str):
            source[key] = source[key].strip().lower() in ("1", "true", "yes", "on")
    for key in ("window", "max_tokens_per_game", "max_cost_per_game", "max_consecutive_fallbacks"):
        if isinstance(harness.get(key), str) and harness[key].strip().lower() in ("none", ""):
            harness[key] = None
    for key in ("context_window", "max_output_tokens", "seed"):
        if isinstance(model.get(key), str) and model[key].strip().lower() in ("none", ""):
            model[key] = None
    return model, harness, other


def _validation(spec: str, what: str, exc: ValidationError) -> ValueError:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        parts.append(f"{where}: {error['msg']} (got {error.get('input')!r})")
    return ValueError(f"invalid {what} for {spec}: " + "; ".join(parts))


def _with_cache(backend: ModelBackend, other: dict[str, Any]) -> ModelBackend:
    path = other.get("cache")
    mode = other.get("cache_mode", "read_write")
    if not path or mode == "off":
        return backend
    from llm_policies.cache import CachedBackend

    cached: ModelBackend = CachedBackend(backend, path, mode=mode)
    return cached


def dropped_by(spec: str, options: Mapping[str, Any]) -> dict[str, str]:
    """The model settings among ``options`` that requests to ``spec`` go out without, with why.

    What a policy made with these options records as ``dropped_settings``
    (:func:`llm_policies.backends.dropped_settings`), known before anything is played and with
    no key: stand-in, scripted and Ollama models, and models sent through a client or provider
    of the caller's, drop nothing that can be known here.

    >>> dropped_by("stand-in:wall-follower", {"temperature": 0.2})
    {}
    """
    model_options, _, other = _split(spec, dict(options))
    try:
        settings = ModelSettings(**model_options)
    except ValidationError as exc:
        raise _validation(spec, "model settings", exc) from None
    prefix = spec.partition(":")[0]
    own_transport = other.get("client") is not None or other.get("provider") is not None
    if prefix in ("scripted", "stand-in", "ollama") or own_transport:
        return {}
    try:
        from llm_policies.backends.pydantic_ai import dropped_by as probe
    except ImportError:  # without the llm extra no request can be built to look at
        return {}
    return probe(spec, settings)


def make_llm_policy(spec: str, env_kind: str, **options: Any) -> EscapeLLMPolicy | AgiMazeLLMPolicy:
    """An LLM policy for ``env_kind`` (``"escape"`` or ``"agimaze"``) playing model ``spec``.

    This is the factory of the ``maze_envs.policies`` entry points (``factory(spec, env_kind,
    **options)``); see the module docstring for the options.
    """
    kind = _env_kind(env_kind)
    stand_in = spec.startswith("stand-in:") or (
        spec.startswith("scripted:") and options.get("client") is None
    )
    if kind != "escape" and stand_in:
        raise ValueError(
            f"{spec} is a stand-in model for Maze Escape; AGI Maze has no stand-in (a scripted "
            "backend with a script of your own takes it as client=)"
        )
    model_options, harness_options, other = _split(spec, dict(options))
    try:
        settings = ModelSettings(**model_options)
    except ValidationError as exc:
        raise _validation(spec, "model settings", exc) from None
    try:
        harness = HarnessSettings(**harness_options)
    except ValidationError as exc:
        raise _validation(spec, "harness settings", exc) from None
    budget = other.get("run_budget")
    caps = (other.get("max_tokens_per_run"), other.get("max_cost_per_run"))
    if budget is None and any(c is not None for c in caps):
        tokens = None if caps[0] is None else int(caps[0])
        cost = None if caps[1] is None else float(caps[1])
        budget = run_budget(str(other.get("run", "default")), tokens, cost)
    backend = make_backend(
        spec,
        settings,
        client=other.get("client"),
        provider=other.get("provider"),
        local=other.get("local"),
    )
    backend = _with_cache(backend, other)
    cls = EscapeLLMPolicy if kind == "escape" else AgiMazeLLMPolicy
    return cls(backend, settings=settings, harness=harness, run_budget=budget)
