"""The table of environments (:mod:`maze_envs._registration`) is the one source of every id.

A new version of an environment touches one table: no other module of the packages writes an env
id (docstrings and their examples apart), and every consumer (Gymnasium's and PettingZoo's
registries, ``maze-envs verify``, the benchmark runner, the policies' episode information, the
journal readers) derives its ids from the table; a fake entry added to the table flows through
them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import gymnasium
import pettingzoo
import pytest

import maze_envs
from maze_envs import _registration
from maze_envs._registration import ENVIRONMENTS, EnvEntry, find_entry

ROOT = Path(maze_envs.__file__).resolve().parent.parent
PACKAGES = ("maze_envs", "wrappers", "llm_policies")
#: What an env id (or the versioned part of one) looks like in a string.
ID_PATTERN = re.compile(r"(MazeEscape|AgiMazeSet|AgiMaze)-v\d+")


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string nodes that are docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def id_literals(source: str) -> list[str]:
    """The string literals of ``source`` that write an env id, docstrings excluded."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and ID_PATTERN.search(node.value)
    ]


def test_the_scan_finds_an_id_outside_docstrings_only() -> None:
    source = '"""maze_envs/AgiMaze-v0"""\nX = "maze_envs/MazeEscape-v1"\nY = f"AgiMazeSet-v{0}"\n'
    assert id_literals(source) == ["maze_envs/MazeEscape-v1"]
    assert id_literals('def f():\n    "uses AgiMaze-v0"\n    return "AgiMaze-v3"\n') == [
        "AgiMaze-v3"
    ]


def test_no_module_but_the_table_writes_an_env_id() -> None:
    table = ROOT / "maze_envs" / "_registration.py"
    offenders = {
        str(path.relative_to(ROOT)): found
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != table and (found := id_literals(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
    assert len(id_literals(table.read_text(encoding="utf-8"))) == len(ENVIRONMENTS)


def test_every_entry_is_registered_and_replayable() -> None:
    from maze_envs.verify import replayer_for

    for env in ENVIRONMENTS:
        if env.api == "gymnasium":
            assert env.id in gymnasium.registry
        else:
            assert env.id in pettingzoo.parallel_registry and env.id in pettingzoo.aec_registry
        factory = replayer_for(env.id)
        assert factory is not None and hasattr(factory(), "reset")
    assert find_entry("maze_envs/AgiMaze-v0").budget_rule()(5, 12) == 60
    with pytest.raises(ValueError, match="unknown environment id 'maze_envs/Nope-v0'; known:"):
        find_entry("maze_envs/Nope-v0")
    with pytest.raises(ValueError, match="no budget rule"):
        find_entry("maze_envs/MazeEscape-v0").budget_rule()


FAKE = EnvEntry(
    id="maze_envs/MazeEscape-v7",
    kind="escape",
    version=7,
    entry_point="maze_envs.maze_escape_v1:parallel_env",
    aec_entry_point="maze_envs.maze_escape_v1:env",
    replayer="maze_envs.escape.replay:EscapeReplayer",
    setup="maze_envs.bench.escape_spec:EscapeSetup",
)


@pytest.fixture
def fake_version(monkeypatch: pytest.MonkeyPatch) -> EnvEntry:
    """A version 7 of Maze Escape, added to the table only."""
    monkeypatch.setattr(_registration, "ENVIRONMENTS", (*ENVIRONMENTS, FAKE))
    return FAKE


def test_a_new_table_row_reaches_the_registries_verify_and_the_policies(
    fake_version: EnvEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from maze_envs.verify import replayer_for

    monkeypatch.delitem(pettingzoo.parallel_registry, fake_version.id, raising=False)
    _registration.register_environments()
    try:
        assert fake_version.id in pettingzoo.parallel_registry
        env = pettingzoo.make("parallel", fake_version.id, width=6, height=6)
        assert env.metadata["name"] == "maze_escape_v1"
    finally:
        pettingzoo.parallel_registry.pop(fake_version.id, None)
        pettingzoo.aec_registry.pop(fake_version.id, None)
    assert _registration.versions("escape")[7] == fake_version.id
    assert _registration.latest("escape") == fake_version
    assert find_entry(fake_version.id) == fake_version
    factory = replayer_for(fake_version.id)
    assert factory is not None and type(factory()).__name__ == "EscapeReplayer"


def test_an_entry_names_its_parts() -> None:
    v1 = find_entry("maze_envs/MazeEscape-v1")
    assert (v1.api, v1.name, v1.module) == (
        "pettingzoo",
        "MazeEscape-v1",
        "maze_envs.maze_escape_v1",
    )
    assert replace(v1, aec_entry_point=None).api == "gymnasium"
    assert [e.id for e in _registration.entries("agimaze", labyrinth_set=True)] == [
        "maze_envs/AgiMazeSet-v0"
    ]
    with pytest.raises(ValueError, match="unknown environment kind 'chess'"):
        _registration.entries("chess")  # type: ignore[arg-type]


def test_every_kind_has_rows_and_every_row_a_kind() -> None:
    """The kinds are written once (``EnvKind``); the table and the kinds agree (issue 26)."""
    from maze_envs._registration import ENV_KINDS, ENVIRONMENTS

    assert sorted({e.kind for e in ENVIRONMENTS}) == sorted(ENV_KINDS)
