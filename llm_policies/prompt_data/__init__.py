"""The text the LLM policies send, as versioned data files of this package: the floor below the
prompt building (:mod:`llm_policies.prompts`), the reply schema and the history policies, which
read it (issue 26: loading the data apart from building the prompts).

Data files (under ``data/``):

* ``escape/ladder.toml``: the cumulative prompt versions of Maze Escape, each with the habit it
  targets (:func:`escape_versions`, :func:`escape_rules_for`);
* ``escape/rules.toml``: the rules of the game, filled from the game's configuration;
* ``escape/reply.toml``: how a reply is asked for per output mode, the reply fields' descriptions
  and the retry message (shared with AGI Maze);
* ``agimaze/history.toml``: the AGI Maze history policies' instructions.

Files are read with :mod:`importlib.resources`, so they work from a wheel as from a checkout.

Example:
    >>> [v.name for v in escape_versions()][:3]
    ['base', 'v3', 'v4']
    >>> resolve_version("latest")
    'v14'
    >>> len(escape_rules_for("v5")), len(escape_rules_for("base"))
    (3, 0)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

TrailWording = Literal["plain", "precise"]
#: Where the agent's own part goes: ``agent_first`` (its name in the system prompt's first
#: lines: every agent's prompt differs from the start) or ``shared_first`` (the system prompt is
#: the same for every agent of a game; the agent's name opens the user message).
Layout = Literal["agent_first", "shared_first"]


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed TOML data file ``name`` (e.g. ``"escape/ladder.toml"``) of this package."""
    folder, _, file = name.rpartition("/")
    node = resources.files("llm_policies.prompt_data").joinpath("data")
    for part in folder.split("/") if folder else ():
        node = node.joinpath(part)
    return tomllib.loads(node.joinpath(file).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class PromptVersion:
    """One rung of the ladder: its name, the habit it targets, the rule it adds, trail wording
    and prompt layout."""

    name: str
    habit: str
    rule: str
    trail: TrailWording
    layout: Layout = "agent_first"


@cache
def escape_versions() -> tuple[PromptVersion, ...]:
    """Every Maze Escape prompt version, oldest first."""
    return tuple(
        PromptVersion(v["name"], v["habit"], v["rule"], v["trail"], v.get("layout", "agent_first"))
        for v in load("escape/ladder.toml")["version"]
    )


def resolve_version(name: str) -> str:
    """``name`` checked against the ladder; ``"latest"`` is the newest rung."""
    names = [v.name for v in escape_versions()]
    if name == "latest":
        return names[-1]
    if name not in names:
        raise ValueError(
            f"unknown prompt version {name!r}; choose one of {', '.join(names)} or 'latest'"
        )
    return name


def escape_version(name: str) -> PromptVersion:
    """The rung ``name`` (``"latest"`` allowed)."""
    chosen = resolve_version(name)
    return next(v for v in escape_versions() if v.name == chosen)


def escape_rules_for(name: str) -> tuple[str, ...]:
    """The rule sentences a version carries: its own and those of every earlier rung."""
    chosen = resolve_version(name)
    rules: list[str] = []
    for version in escape_versions():
        if version.rule:
            rules.append(version.rule)
        if version.name == chosen:
            break
    return tuple(rules)
