"""The LLM provider prefixes are one table (issue 17): the entry points, the local-cost rule
and the errors derive from :data:`maze_envs.policies.providers.MODEL_PROVIDERS`."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from maze_envs.policies.providers import (
    ENTRY_POINTS,
    LLM_PREFIXES,
    LOCAL_PREFIXES,
    MODEL_PROVIDERS,
    TRAINED_PREFIXES,
)
from maze_envs.policies.registry import PolicySpecError, make_policy

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_entry_points_are_the_registered_prefixes_of_the_table() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    group = project["entry-points"]["maze_envs.policies"]
    assert group == ENTRY_POINTS
    assert tuple(group) == (*LLM_PREFIXES, *(p.prefix for p in TRAINED_PREFIXES))
    assert {group[p] for p in LLM_PREFIXES} == {"llm_policies.registry:make_llm_policy"}
    assert tuple(p.prefix for p in MODEL_PROVIDERS if p.entry_point) == LLM_PREFIXES


@pytest.mark.parametrize("spec", ["groq:llama-3.3-70b", "grok:beta"])
def test_an_unknown_prefix_names_the_allowed_ones(spec: str) -> None:
    with pytest.raises(PolicySpecError) as caught:
        make_policy(spec, "escape")
    message = str(caught.value)
    assert f"unknown model provider prefix {spec.partition(':')[0]!r}" in message
    assert "anthropic:, openai:, openai-chat:, openrouter:, ollama:" in message
    assert "import path" in message  # the other reading of 'name:rest'


def test_a_misspelt_prefix_gets_the_closest_one() -> None:
    with pytest.raises(PolicySpecError, match=r"did you mean 'anthropic'\?"):
        make_policy("antropic:claude-sonnet-5-5", "escape")


def test_a_dotted_import_path_keeps_its_import_error() -> None:
    with pytest.raises(PolicySpecError, match=r"^cannot import module 'no_such\.mod'"):
        make_policy("no_such.mod:Thing", "escape")


def test_local_models_are_the_local_rows() -> None:
    assert {"ollama", "scripted", "stand-in"} == LOCAL_PREFIXES
    accounting = pytest.importorskip("llm_policies.accounting")
    assert accounting.LOCAL_PREFIXES is LOCAL_PREFIXES
    registry = pytest.importorskip("llm_policies.registry")
    assert registry.PREFIXES == LLM_PREFIXES
