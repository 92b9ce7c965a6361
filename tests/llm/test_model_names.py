"""The docs, examples and tests name no model its provider has retired or deprecated.

A retired name in a quick start fails for every user who copies it; a deprecated one warns on
every request. pydantic-ai keeps each provider's announced deprecations in the model profile,
so the check follows the installed pydantic-ai (the newest-versions check, scripts/newest.sh,
finds a retirement on the day pydantic-ai learns of it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai", reason="needs the llm extra (pydantic-ai)")

ROOT = Path(__file__).resolve().parents[2]
#: ``anthropic:claude-...``, ``openai/gpt-...``, ``openai-chat:o3``: a hosted model by name
NAMED_MODEL = re.compile(
    r"\b(anthropic|openai-chat|openai|openrouter:anthropic)[:/]((?:claude|gpt|o\d)[\w.\-]*\w)"
)
PLACES = ("README.md", "docs", "examples", "tests", "maze_envs", "llm_policies", "wrappers")


def named_models() -> dict[str, list[str]]:
    """Every hosted model spec the project's text names, with where."""
    found: dict[str, list[str]] = {}
    for place in PLACES:
        root = ROOT / place
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in files:
            if path.suffix not in {".md", ".py", ".toml", ".yaml", ".txt"} or not path.is_file():
                continue
            if path == Path(__file__).resolve():  # this file names a retired model on purpose
                continue
            for match in NAMED_MODEL.finditer(path.read_text("utf-8", errors="replace")):
                spec = f"{match.group(1)}:{match.group(2)}"
                found.setdefault(spec, []).append(str(path.relative_to(ROOT)))
    return found


def deprecation_of(spec: str) -> object:
    """pydantic-ai's record of the provider's deprecation of ``spec`` (None: none announced)."""
    from pydantic_ai.models import infer_model

    from llm_policies.backends.providers import build_provider

    provider = build_provider(spec.partition(":")[0], None, keyless=True)
    return infer_model(spec, provider_factory=lambda _name: provider).profile.get("deprecation")


def test_no_named_model_is_retired_or_deprecated() -> None:
    models = named_models()
    assert "anthropic:claude-sonnet-5-5" in models  # the scan finds what the docs name
    offenders = []
    for spec, where in sorted(models.items()):
        if spec.startswith("openrouter:anthropic:"):  # OpenRouter's name of an Anthropic model
            spec = "anthropic:" + spec.rpartition(":")[2].replace(".", "-")
        deprecation = deprecation_of(spec)
        if deprecation is not None:
            offenders.append(f"{spec} ({deprecation}) in {', '.join(sorted(set(where)))}")
    assert not offenders, "retired or deprecated models named:\n" + "\n".join(offenders)


def test_the_check_sees_a_retired_model() -> None:
    # claude-sonnet-4-5 was retired on 2026-11-30: the check above would name it
    assert deprecation_of("anthropic:claude-sonnet-4-5") is not None
