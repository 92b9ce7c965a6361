"""The prompts the LLM policies send, built from the versioned data of
:mod:`llm_policies.prompt_data` (which this package re-exports: the ladder of prompt versions and
the data loader).

* :mod:`llm_policies.prompts.escape`: the Maze Escape prompt;
* :mod:`llm_policies.prompts.agimaze`: the AGI Maze prompt.
"""

from __future__ import annotations

from llm_policies.prompt_data import (
    Layout,
    PromptVersion,
    TrailWording,
    escape_rules_for,
    escape_version,
    escape_versions,
    load,
    resolve_version,
)

__all__ = [
    "Layout",
    "PromptVersion",
    "TrailWording",
    "escape_rules_for",
    "escape_version",
    "escape_versions",
    "load",
    "resolve_version",
]
