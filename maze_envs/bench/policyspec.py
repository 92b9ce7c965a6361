"""Policy specifications of an experiment: which policy plays, with which options, in which team.

A :class:`PolicySpec` names one policy the way the registry understands it
(:func:`maze_envs.policies.registry.make_policy`): a built-in name such as ``explorer`` or
``wall-follower-left``, an import path ``package.module:Class`` for user code, or a plug-in
prefix such as ``anthropic:<model>`` or ``ollama:<model>`` (LLM policies), with options.

A :class:`PolicyEntry` is what one arm of an experiment plays: the same policy for every agent
(``policy``) or one policy per Maze Escape agent (``team``, same or mixed kinds).

Text form (command line, experiment files):
    ``NAME[:key=value,...]``: the options start at the first ``:``-separated part that holds a
    ``=``, so ``anthropic:claude-x:temperature=0.2`` is the policy ``anthropic:claude-x`` with one
    option, and ``ollama:qwen3:8b:base_url=http://host:11434`` keeps the colons of the URL.
    Values are JSON scalars (``true``, ``3``, ``0.5``, ``null``) or else plain strings.
    A team is members separated by commas: ``explorer,explorer,random``; a comma-separated part
    that has a ``=`` before any ``:`` continues the options of the member before it.

Example:
    >>> PolicySpec.parse("explorer:coordinates=false").model_dump()
    {'spec': 'explorer', 'options': {'coordinates': False}}
    >>> PolicySpec.parse("ollama:qwen3:8b:temperature=0.2,base_url=http://h:11434").options
    {'temperature': 0.2, 'base_url': 'http://h:11434'}
    >>> entry = PolicyEntry.parse_team("explorer:seed_offset=1,x=2,random")
    >>> [member.text for member in entry.team or ()]
    ['explorer:seed_offset=1,x=2', 'random']
    >>> entry.name
    'explorer:seed_offset=1,x=2+random'
    >>> PolicyEntry.model_validate("cooperative").members(("A", "B", "C"))[2].spec
    'cooperative'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_WORDS = {"true": True, "false": False, "null": None, "none": None}


def parse_value(text: str) -> Any:
    """A command-line option value: a JSON scalar when it reads as one, else the string itself."""
    lowered = text.strip().lower()
    if lowered in _WORDS:
        return _WORDS[lowered]
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float | str | list | dict) else text


def parse_assignments(text: str, what: str) -> dict[str, Any]:
    """``key=value,key=value`` as a dict (values through :func:`parse_value`)."""
    options: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"{what}: {part!r} is not key=value (e.g. temperature=0.2)")
        options[key] = parse_value(value.strip())
    return options


def _format_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class PolicySpec(BaseModel):
    """One policy: a registry name, import path or plug-in spec, and its options."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str = Field(
        min_length=1, description="registry name, package.module:Class or prefix:model"
    )
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            parsed = cls.parse(value)
            return {"spec": parsed.spec, "options": parsed.options}
        if isinstance(value, dict) and "policy" in value and "spec" not in value:
            return {("spec" if k == "policy" else k): v for k, v in value.items()}
        return value

    @field_validator("spec")
    @classmethod
    def _clean(cls, spec: str) -> str:
        spec = spec.strip()
        if not spec or spec.startswith(":") or spec.endswith(":") or "," in spec:
            raise ValueError(
                f"policy {spec!r} is not a policy name: use a name such as 'explorer', an import "
                "path 'package.module:Class' or a plug-in spec such as 'ollama:<model>'"
            )
        return spec

    @classmethod
    def parse(cls, text: str) -> PolicySpec:
        """The spec written as ``NAME[:key=value,...]`` (see the module docstring)."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("a policy is a non-empty text such as 'explorer' or 'random:x=1'")
        parts = text.strip().split(":")
        for index, part in enumerate(parts):
            if "=" in part:
                name = ":".join(parts[:index])
                if not name:
                    raise ValueError(f"policy {text!r} has options but no policy name before them")
                options = parse_assignments(":".join(parts[index:]), f"policy {text!r}")
                return cls(spec=name, options=options)
        return cls(spec=text.strip())

    @property
    def text(self) -> str:
        """The spec in its text form (round-trips through :meth:`parse` for scalar options)."""
        if not self.options:
            return self.spec
        options = ",".join(f"{k}={_format_value(v)}" for k, v in self.options.items())
        return f"{self.spec}:{options}"


def _split_team(text: str) -> list[str]:
    members: list[str] = []
    for part in text.split(","):
        colon, equals = part.find(":"), part.find("=")
        continues = equals >= 0 and (colon < 0 or colon > equals)
        if continues and members:
            members[-1] += "," + part
        else:
            members.append(part)
    return members


class PolicyEntry(BaseModel):
    """One arm of an experiment: the same policy for every agent, or a team (one per agent).

    ``label`` names the arm in tables and plots (default: :attr:`name`). ``policy_seed``, when
    given, hands the policies the same seeds in every game of the arm (common random numbers);
    by default each game's policy seeds derive from its game seed and environment
    (:mod:`maze_envs.policies.seeds`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: PolicySpec | None = None
    team: tuple[PolicySpec, ...] | None = None
    label: str | None = None
    policy_seed: int | None = Field(default=None, ge=0, le=2**63 - 1)

    @model_validator(mode="before")
    @classmethod
    def _from_short_forms(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"policy": value}
        if isinstance(value, list | tuple):
            return {"team": list(value)}
        if isinstance(value, dict) and "options" in value and "policy" in value:
            # {policy = "explorer", options = {...}}: options belong to the policy
            rest = {k: v for k, v in value.items() if k not in {"policy", "options"}}
            return {**rest, "policy": {"spec": value["policy"], "options": value["options"]}}
        return value

    @model_validator(mode="after")
    def _one_of(self) -> PolicyEntry:
        if (self.policy is None) == (self.team is None):
            raise ValueError(
                "a policy entry has exactly one of 'policy' (every agent plays it) or 'team' "
                "(one policy per agent)"
            )
        if self.team is not None and not self.team:
            raise ValueError("a team needs at least one member")
        if self.label is not None and not self.label.strip():
            raise ValueError("a policy label must not be empty")
        return self

    @classmethod
    def parse_team(cls, text: str, label: str | None = None) -> PolicyEntry:
        """A team written as ``member,member,...`` (see the module docstring)."""
        members = [PolicySpec.parse(m) for m in _split_team(text)]
        return cls(team=tuple(members), label=label)

    @property
    def specs(self) -> tuple[PolicySpec, ...]:
        """The distinct members as written (one for ``policy``)."""
        return (self.policy,) if self.policy is not None else tuple(self.team or ())

    @property
    def name(self) -> str:
        """The label, else the spec text (team members joined by ``+``)."""
        if self.label is not None:
            return self.label
        if self.policy is not None:
            return self.policy.text
        return "+".join(member.text for member in self.team or ())

    def members(self, agents: Sequence[str]) -> list[PolicySpec]:
        """One spec per agent; a team must have one member per agent."""
        if self.policy is not None:
            return [self.policy] * len(agents)
        team = list(self.team or ())
        if len(team) != len(agents):
            raise ValueError(
                f"team {self.name!r} has {len(team)} member(s) but the game has {len(agents)} "
                f"agents ({', '.join(agents)}): give one policy per agent"
            )
        return team

    def key_data(self, agents: Sequence[str]) -> list[dict[str, Any]]:
        """What identifies the arm in a run key: the member specs per agent (not the label), and
        a fixed policy seed when one is asked for (it changes the games)."""
        data = [member.model_dump(mode="json") for member in self.members(agents)]
        if self.policy_seed is not None:
            data.append({"policy_seed": self.policy_seed})
        return data
