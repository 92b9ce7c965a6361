"""Policies by name: the built-in baselines, user classes by import path, and plug-ins.

:func:`make_policy` turns a *spec* into a policy object:

1. a built-in name of the environment kind (:func:`available_policies`), e.g. ``"explorer"``,
   ``"wall-follower-left"``, ``"oracle"``;
2. ``prefix:rest`` whose ``prefix`` names an entry point of the group ``maze_envs.policies``
   (``anthropic:``, ``openai:``, ``openai-chat:``, ``openrouter:``, ``ollama:`` come from
   ``maze-envs[llm]``): the entry point is a factory called as
   ``factory(spec, env_kind, **options)`` with the *whole* spec (``"ollama:qwen3:8b"``);
3. an import path ``package.module:Name`` of a policy class (or a function returning a policy),
   called with the options.

Options are checked against the class's (or function's) signature and type hints (pydantic
coerces the strings a command line gives: ``"false"``, ``"3"``); an unknown option or a bad value
raises :class:`PolicySpecError` naming the policy, the option and what is allowed.

A Maze Escape team is one policy per agent, same or mixed kinds: :func:`make_team` with a
:class:`TeamSpec` (or a list of specs, or one spec for everybody).

Example:
    >>> make_policy("wall-follower-right").hand
    'right'
    >>> make_policy("explorer", env_kind="agimaze").__class__.__name__
    'AgiMazeExplorer'
    >>> team = make_team(["explorer", "explorer", "random"], ("A", "B", "C"))
    >>> [type(p).__name__ for p in team.values()]
    ['TremauxExplorer', 'TremauxExplorer', 'RandomWalk']
    >>> make_policy("explorer", heuristic="maybe")
    Traceback (most recent call last):
    ...
    maze_envs.policies.registry.PolicySpecError: policy 'explorer': option 'heuristic' ...
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from maze_envs._registration import ENV_KINDS, EnvKind
from maze_envs.policies.agimaze import AgiMazeExplorer, AgiMazeOracle, AgiMazeRandom
from maze_envs.policies.escape import (
    CooperativeExplorer,
    EscapeOracle,
    RandomWalk,
    TremauxExplorer,
    WallFollower,
)
from maze_envs.policies.providers import (
    LLM_PREFIXES,
    TRAINED_PREFIXES,
    bare_prefix,
    unknown_prefix,
)

#: The entry-point group of policy plug-ins: name = spec prefix, value = factory.
ENTRY_POINT_GROUP: Final = "maze_envs.policies"


class PolicySpecError(ValueError):
    """A policy spec or its options could not be turned into a policy."""


@dataclass(frozen=True)
class BuiltinPolicy:
    """One row of the built-in table: a name, the class and the options the name fixes."""

    env_kind: EnvKind
    name: str
    factory: Callable[..., Any]
    summary: str
    fixed: Mapping[str, Any] = field(default_factory=dict)


#: Every built-in policy, by environment kind and name.
BUILTINS: Final[tuple[BuiltinPolicy, ...]] = (
    BuiltinPolicy("escape", "random", RandomWalk, "a random open edge each turn"),
    BuiltinPolicy("escape", "wall-follower-left", WallFollower, "left-hand rule", {"hand": "left"}),
    BuiltinPolicy(
        "escape", "wall-follower-right", WallFollower, "right-hand rule", {"hand": "right"}
    ),
    BuiltinPolicy(
        "escape",
        "explorer",
        TremauxExplorer,
        "depth-first (Tremaux) search on its own map; the distance sensor orders the branches",
    ),
    BuiltinPolicy(
        "escape",
        "cooperative",
        CooperativeExplorer,
        "explorer team: radios routes from landmarks, shares them in its notebook, helps",
    ),
    BuiltinPolicy(
        "escape", "oracle", EscapeOracle, "privileged: a shortest path from the full map"
    ),
    BuiltinPolicy(
        "agimaze", "random", AgiMazeRandom, "uniform over the actions (calibration reference)"
    ),
    BuiltinPolicy(
        "agimaze",
        "explorer",
        AgiMazeExplorer,
        "maps walls and items, learns rivers and pits, collects in order, leaves",
    ),
    BuiltinPolicy(
        "agimaze", "oracle", AgiMazeOracle, "privileged: the exact shortest plan (planner)"
    ),
)


def _check_kind(env_kind: str) -> EnvKind:
    if env_kind not in ENV_KINDS:
        raise PolicySpecError(f"unknown env_kind {env_kind!r}; choose one of {list(ENV_KINDS)}")
    return env_kind


def available_policies(env_kind: EnvKind = "escape") -> dict[str, str]:
    """Built-in policy names of an environment kind -> one-line summaries, in table order."""
    kind = _check_kind(env_kind)
    return {row.name: row.summary for row in BUILTINS if row.env_kind == kind}


def _builtin(env_kind: EnvKind, name: str) -> BuiltinPolicy | None:
    return next((r for r in BUILTINS if r.env_kind == env_kind and r.name == name), None)


def plugin_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed policy plug-ins: spec prefix -> entry point (group ``maze_envs.policies``)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def is_policy(obj: object) -> bool:
    """Whether ``obj`` has the policy interface: ``reset`` and ``act`` or ``aact``."""
    return callable(getattr(obj, "reset", None)) and (
        callable(getattr(obj, "act", None)) or callable(getattr(obj, "aact", None))
    )


def _signature_of(factory: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # some builtins have none: accept any keyword
        kwargs = inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD)
        return inspect.Signature([kwargs]), {}
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: check names only
        hints = {}
    return signature, hints


def build(
    factory: Callable[..., Any],
    options: Mapping[str, Any],
    *,
    label: str,
    fixed: Mapping[str, Any] | None = None,
) -> Any:
    """Call ``factory`` with ``options`` checked against its signature and type hints."""
    fixed = dict(fixed or {})
    clash = sorted(set(options) & set(fixed))
    if clash:
        raise PolicySpecError(
            f"policy {label!r} fixes {', '.join(f'{k}={fixed[k]!r}' for k in clash)}; "
            "do not pass it as an option"
        )
    signature, hints = _signature_of(factory)
    params = {
        name: p
        for name, p in signature.parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    allowed = [n for n in params if n not in fixed]
    values: dict[str, Any] = {}
    for name, value in options.items():
        if name not in params:
            if takes_any:
                values[name] = value
                continue
            listed = ", ".join(f"{n}={params[n].default!r}" for n in allowed) if allowed else "none"
            hint = difflib.get_close_matches(name, allowed, n=1)
            maybe = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise PolicySpecError(
                f"policy {label!r} has no option {name!r}{maybe}; its options: {listed}"
            )
        annotation = hints.get(name)
        if annotation is None:
            values[name] = value
            continue
        try:
            values[name] = TypeAdapter(annotation).validate_python(value)
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            raise PolicySpecError(
                f"policy {label!r}: option {name!r} got {value!r}: {problem}"
            ) from None
    missing = [
        n for n, p in params.items() if p.default is p.empty and n not in values and n not in fixed
    ]
    if missing:
        raise PolicySpecError(f"policy {label!r} needs the option(s) {', '.join(missing)}")
    try:
        return factory(**fixed, **values)
    except (TypeError, ValueError) as exc:
        raise PolicySpecError(f"policy {label!r} could not be built: {exc}") from exc


def _check_policy(obj: Any, spec: str) -> Any:
    if not is_policy(obj):
        raise PolicySpecError(
            f"{spec!r} gave a {type(obj).__name__}, not a policy (it needs reset() and act() or "
            "aact(); see maze_envs.policies.interface)"
        )
    return obj


def _from_import_path(spec: str, options: Mapping[str, Any]) -> Any:
    module_name, _, attribute = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        problem = f"cannot import module {module_name!r} of policy {spec!r}: {exc}"
        if "." not in module_name and getattr(exc, "name", None) == module_name:
            # no such top-level module: most likely a provider prefix, misspelt or not ours
            problem = (
                f"{unknown_prefix(spec)}; or an import path 'package.module:Class' ({problem})"
            )
        raise PolicySpecError(problem) from None
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PolicySpecError(
                f"module {module_name!r} has no {attribute!r} (policy spec {spec!r})"
            ) from None
    if not callable(obj):
        raise PolicySpecError(f"{spec!r} is not a class or function")
    return build(obj, options, label=spec)


def make_policy(spec: str, env_kind: EnvKind = "escape", **options: Any) -> Any:
    """A fresh policy for ``spec`` (see the module docstring), built with ``options``."""
    kind = _check_kind(env_kind)
    if not isinstance(spec, str) or not spec.strip():
        raise PolicySpecError(f"a policy spec is a non-empty string, got {spec!r}")
    spec = spec.strip()
    row = _builtin(kind, spec)
    if row is not None:
        return build(row.factory, options, label=spec, fixed=row.fixed)
    if ":" in spec:
        prefix = spec.partition(":")[0]
        plugins = plugin_entry_points()
        if prefix in plugins:
            try:
                factory = plugins[prefix].load()
            except Exception as exc:
                raise PolicySpecError(
                    f"the policy plug-in {prefix!r} failed to load: {exc!r}"
                ) from exc
            return _check_policy(factory(spec, kind, **options), spec)
        if prefix in LLM_PREFIXES:
            raise PolicySpecError(
                f"no policy plug-in provides {prefix!r}: language-model policies need the llm "
                "extra: pip install 'maze-envs[llm]'"
            )
        if prefix in {p.prefix for p in TRAINED_PREFIXES}:
            raise PolicySpecError(
                f"no policy plug-in provides {prefix!r}: the package's entry points are out of "
                "date; reinstall it (pip install -e . in a checkout)"
            )
        return _check_policy(_from_import_path(spec, options), spec)
    prefix_only = bare_prefix(spec)
    if prefix_only is not None:
        raise PolicySpecError(prefix_only)
    names = list(available_policies(kind))
    hint = difflib.get_close_matches(spec, names, n=1)
    maybe = f"; did you mean {hint[0]!r}?" if hint else ""
    prefixes = sorted(plugin_entry_points())
    plugs = f", plug-in prefixes {prefixes}" if prefixes else ""
    raise PolicySpecError(
        f"unknown {kind} policy {spec!r}{maybe} Built-in: {names}{plugs}; or an import path "
        "'package.module:Class'"
    )


# --- specs as data ----------------------------------------------------------------------------


class PolicySpec(BaseModel):
    """A policy as data (for experiment files and the journal): a spec string and its options."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(min_length=1, description="built-in name, plug-in spec or import path")
    options: dict[str, Any] = Field(default_factory=dict)

    def build(self, env_kind: EnvKind = "escape") -> Any:
        return make_policy(self.name, env_kind, **self.options)


class TeamSpec(BaseModel):
    """One policy per Maze Escape agent, in agent order; a single member plays every agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    members: tuple[PolicySpec, ...] = Field(min_length=1)

    @field_validator("members", mode="before")
    @classmethod
    def _strings_are_specs(cls, value: Any) -> Any:
        if isinstance(value, str | PolicySpec | Mapping):
            value = [value]
        return [PolicySpec(name=v) if isinstance(v, str) else v for v in value]

    @classmethod
    def of(cls, *members: str | PolicySpec) -> TeamSpec:
        """``TeamSpec.of("explorer", "explorer", "random")``."""
        return cls(members=members)


TeamLike = TeamSpec | PolicySpec | str | Sequence[str | PolicySpec]


def make_team(
    team: TeamLike, agents: Sequence[str], env_kind: EnvKind = "escape"
) -> dict[str, Any]:
    """A fresh policy per agent: ``team[i]`` plays ``agents[i]`` (one member plays them all)."""
    spec = team if isinstance(team, TeamSpec) else TeamSpec(members=team)
    members = spec.members
    if len(members) == 1:
        members = members * len(agents)
    if len(members) != len(agents):
        raise PolicySpecError(
            f"a team of {len(spec.members)} policies cannot play {len(agents)} agents "
            f"{list(agents)}: give one policy, or one per agent"
        )
    return {agent: member.build(env_kind) for agent, member in zip(agents, members, strict=True)}
