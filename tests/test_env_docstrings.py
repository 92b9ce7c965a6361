"""One docstring style for environments (issue 17): MiniGrid's ``## Description`` sections in the
class of every environment of the table, and of the single-agent Maze Escape env."""

from __future__ import annotations

import inspect

import pytest

from maze_envs._registration import ENVIRONMENTS, EnvEntry, load
from wrappers.single_agent import SingleAgentEscape

SECTIONS = (
    "## Description",
    "## Action Space",
    "## Observation Space",
    "## Rewards",
    "## Episode End",
    "## Arguments",
)


def _missing(cls: type) -> list[str]:
    doc = inspect.getdoc(cls) or ""
    return [section for section in SECTIONS if f"\n{section}\n" not in doc]


@pytest.mark.parametrize("entry", ENVIRONMENTS, ids=lambda e: e.id)
def test_every_registered_environment_class_has_the_sections(entry: EnvEntry) -> None:
    target = load(entry.entry_point)  # a Gymnasium env class, or PettingZoo's parallel_env
    if isinstance(target, type):
        cls = target
    else:
        env = target()
        cls = type(env.unwrapped)
        env.close()
    assert _missing(cls) == [], f"{entry.id}: {cls.__name__}"
    assert "## Version History" in (inspect.getdoc(cls) or "")


def test_the_single_agent_env_has_the_sections() -> None:
    assert _missing(SingleAgentEscape) == []
