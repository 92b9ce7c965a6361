"""Packaging: the core dependency floors in pyproject.toml are the versions CI tests."""

from __future__ import annotations

import re
import tomllib

from packaging.version import Version  # a dependency of pytest

from tests.conftest import REPO_ROOT


def _floors() -> dict[str, str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement.split(";")[0].strip())
        assert match, f"core dependency {requirement!r} has no plain >= floor"
        floors[match.group(1).lower()] = match.group(2)
    return floors


def test_lowest_versions_file_pins_exactly_the_declared_floors() -> None:
    pins = {}
    for line in (REPO_ROOT / "scripts" / "lowest-versions.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower()] = version
    floors = _floors()
    assert set(pins) == set(floors)
    for name, floor in floors.items():
        assert Version(pins[name]) == Version(floor), name


def test_pettingzoo_floor_has_the_registry_the_code_uses() -> None:
    import pettingzoo

    assert callable(pettingzoo.register)
    major, minor = (int(part) for part in _floors()["pettingzoo"].split(".")[:2])
    assert (major, minor) >= (1, 27)
