"""The floors as a declarative import contract (issue 17): ``[tool.importlinter]`` in
pyproject.toml, checked by import-linter over ``maze_envs``, ``wrappers`` and ``llm_policies``
(lazy imports inside functions included). docs/architecture.md explains the floors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the dev extra")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("maze_envs", "wrappers", "llm_policies")
RUN = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(no_cache=True, no_logo=True))"
)


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the packages of ``tree`` with its pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [sys.executable, "-c", RUN], cwd=tree, env=env, capture_output=True, text=True, check=False
    )


def _floors() -> list[str]:
    """The module names of the floors contract, top floor first."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (floors,) = [c for c in config["contracts"] if c["id"] == "floors"]
    names = []
    for layer in floors["layers"]:
        names += [part.strip() for part in layer.replace(":", "|").split("|")]
    return names


def test_every_contract_is_kept() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "11 kept, 0 broken" in result.stdout


def test_every_module_lies_in_a_floor() -> None:
    """A new module or folder must be placed in the floors contract; only the two package
    ``__init__`` modules that hold floors inside them (``maze_envs``, ``maze_envs.journal``)
    are not a floor themselves."""
    floors = _floors()
    unplaced = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            if module in {"maze_envs", "maze_envs.journal"}:
                continue
            if not any(module == f or module.startswith(f + ".") for f in floors):
                unplaced.append(module)
    assert unplaced == [], f"place these modules in a floor of [tool.importlinter]: {unplaced}"


def test_the_llm_policy_contract_names_every_module_but_the_applications() -> None:
    """Every module of ``llm_policies`` lies in the policy part (which never imports the runner
    nor ``llm_policies.apps``) except the applications and the package's ``__init__``
    (issue 26)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "llm-policy-apart-from-apps"]
    policy = contract["source_modules"]
    assert "llm_policies.apps" in contract["forbidden_modules"]
    assert "maze_envs.bench" in contract["forbidden_modules"]
    outside = []
    for path in (ROOT / "llm_policies").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if module == "llm_policies" or module.startswith("llm_policies.apps"):
            continue
        if not any(module == name or module.startswith(name + ".") for name in policy):
            outside.append(module)
    assert outside == [], f"place these in the llm-policy-apart-from-apps contract: {outside}"


def test_an_import_from_a_lower_floor_to_a_higher_one_breaks_the_contract(tmp_path: Path) -> None:
    """The contract can fail: the same tree with one lazy import of the runner from ``grid``."""
    for name in (*PACKAGES, "pyproject.toml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    grid = tmp_path / "maze_envs" / "grid.py"
    grid.write_text(grid.read_text() + "\n\ndef _up() -> None:\n    import maze_envs.bench.spec\n")
    result = _lint(tmp_path)
    assert result.returncode == 1
    assert "maze_envs.grid -> maze_envs.bench.spec" in result.stdout
    assert "Each floor imports only the floors below it BROKEN" in result.stdout
