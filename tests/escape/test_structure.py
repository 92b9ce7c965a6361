"""The package's import structure (issue 6): no import cycles among the modules of
``maze_envs`` at load time, found by walking the source, so a cycle is named before it bites.
The floors themselves are a declarative contract (``[tool.importlinter]`` in pyproject.toml,
tests/test_import_contracts.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import maze_envs

ROOT = Path(maze_envs.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_source(node: ast.ImportFrom, package: str) -> str:
    """The absolute module name a ``from ... import`` statement in ``package`` reads from."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _load_time_imports(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """Modules imported when ``module`` loads: its top-level statements (and ``try``/``if``
    blocks), not function bodies nor ``if TYPE_CHECKING:`` blocks."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                target = _import_source(node, package)
                found.add(target)
                found.update(f"{target}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        imported = _load_time_imports(ast.parse(path.read_text()), name, path.name == "__init__.py")
        # a module importing its own package's submodule is not a dependency on the package
        graph[name] = {m for m in imported if m in files and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_walk_finds_a_cycle_when_there_is_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    tree = ast.parse("import x\nif TYPE_CHECKING:\n    import y\ndef f():\n    import z\n")
    assert _load_time_imports(tree, "p.m", False) == {"x"}


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    graph = _graph()
    assert "maze_envs.escape.types" in graph and "maze_envs.journal.store" in graph
    assert _cycles(graph) == []


def _all_imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """Every module of the package ``module`` imports anywhere (functions included), except in
    ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _import_source(node, package)
            subs = {f"{target}.{alias.name}" for alias in node.names} & modules
            found.update(subs or {target})
    return {m for m in found if m.partition(".")[0] == "maze_envs"}


def test_the_agimaze_game_never_imports_its_http_api() -> None:
    """``maze_envs.agimaze.api`` (client, server, protocol...) sits on the game, never under it:
    the env meets the HTTP backend only through the ``backends.Backend`` protocol."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    api = "maze_envs.agimaze.api"
    game = [m for m in files if m.startswith("maze_envs.agimaze") and not m.startswith(api)]
    assert "maze_envs.agimaze.env" in game and f"{api}.server" in files
    offenders = {
        module: sorted(
            m for m in _all_imports(files[module], module, set(files)) if m.startswith(api)
        )
        for module in game
    }
    assert {m: found for m, found in offenders.items() if found} == {}


def test_the_analysis_and_the_viewer_share_the_reading_floor_and_not_each_other() -> None:
    """Journal reading (tracks, replayed steps, text changes) is a floor of its own that the
    viewer and the analysis both use; the analysis imports nothing of the viewer (issue 17)."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    imports = {module: _all_imports(path, module, set(files)) for module, path in files.items()}
    analysis = {m: i for m, i in imports.items() if m.startswith("maze_envs.bench.analysis")}
    into_view = {
        m: sorted(i for i in found if i.startswith("maze_envs.view"))
        for m, found in analysis.items()
    }
    assert {m: i for m, i in into_view.items() if i} == {}
    reading = "maze_envs.reading"
    assert any(i.startswith(reading) for found in analysis.values() for i in found)
    viewer = [found for m, found in imports.items() if m.startswith("maze_envs.view")]
    assert any(i.startswith(reading) for found in viewer for i in found)

    # the journal proper knows nothing of the environments nor of its reading floor
    def proper(module: str) -> bool:
        return module.startswith("maze_envs.journal") and not module.startswith(reading)

    journal = {m: i for m, i in imports.items() if proper(m)}
    above = {m: sorted(x for x in i if not proper(x)) for m, i in journal.items()}
    assert {m: i for m, i in above.items() if i} == {}
