"""Fixtures of the study tests."""

from __future__ import annotations

import importlib.metadata
import tomllib

import pytest

from maze_envs.policies import registry
from tests.conftest import REPO_ROOT


@pytest.fixture(autouse=True)
def declared_policy_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy plug-ins pyproject.toml declares, found even where the installed package
    metadata predates them (a shared editable install made before ``stand-in`` was added):
    the studies run their stand-in models by spec, through the registry, as a user does."""
    installed = registry.plugin_entry_points()
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))
    declared = project["project"]["entry-points"][registry.ENTRY_POINT_GROUP]
    missing = {
        name: importlib.metadata.EntryPoint(name, value, registry.ENTRY_POINT_GROUP)
        for name, value in declared.items()
        if name not in installed
    }
    if missing:
        monkeypatch.setattr(registry, "plugin_entry_points", lambda: {**installed, **missing})
