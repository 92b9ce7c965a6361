"""Issue 26's floors, checked from the imports (type-checking imports included, as
``scripts/house_figures.py`` draws them): no import circle inside ``maze_envs``, ``escape.types``
imports only data of its package, and the journal-reading floor's old path still imports with a
deprecation warning."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the dev extra)")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def graph():  # type: ignore[no-untyped-def]
    return grimp.build_graph("maze_envs", exclude_type_checking_imports=False, cache_dir=None)


def test_no_import_circle_in_maze_envs(graph) -> None:  # type: ignore[no-untyped-def]
    """No module of ``maze_envs`` reaches itself again through the imports."""
    circles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module and graph.chain_exists(imported, module):
                circles.append(f"{module} -> {imported}")
    assert circles == []


def test_escape_types_imports_only_data_of_its_package(graph) -> None:  # type: ignore[no-untyped-def]
    """Jumanji's ``types.py``: the configuration, the vocabularies and the actions' plain form."""
    own = {
        m
        for m in graph.find_modules_directly_imported_by("maze_envs.escape.types")
        if m.startswith("maze_envs.")
    }
    assert own <= {"maze_envs.escape.config", "maze_envs.escape.vocab", "maze_envs.escape.actions"}


def test_the_typed_models_convert_through_the_json_form() -> None:
    from maze_envs import maze_escape_v1
    from maze_envs.escape.types import Action, Observation

    env = maze_escape_v1.parallel_env(preset="full", width=7, height=7)
    obs, _ = env.reset(seed=3)
    model = Observation.from_space(obs["A"], env.config, "A")
    assert env.observation_space("A").contains(model.to_space(env.config, "A", version=1))
    action = Action(move="N", radio="hi")
    assert Action.from_space(action.to_space(env.config), env.config) == action


def test_the_old_reading_path_imports_with_a_deprecation_warning() -> None:
    """``maze_envs.journal.read`` (documented before issue 26) gives the same modules."""
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from maze_envs.journal.read.tracks import escape_track\n"
        "    import maze_envs.journal.read as old\n"
        "import maze_envs.reading.tracks as new\n"
        "assert escape_track is new.escape_track and old.tracks is new\n"
        "assert any(issubclass(w.category, DeprecationWarning) and 'maze_envs.reading' in "
        "str(w.message) for w in caught), [str(w.message) for w in caught]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_journal_imports_nothing_of_the_reading_floor(graph) -> None:  # type: ignore[no-untyped-def]
    journal = [
        m for m in graph.modules if m == "maze_envs.journal" or m.startswith("maze_envs.journal.")
    ]
    above = sorted(
        f"{m} -> {i}"
        for m in journal
        for i in graph.find_modules_directly_imported_by(m)
        if i.startswith("maze_envs.") and not i.startswith("maze_envs.journal")
    )
    assert above == []


def test_a_kind_without_a_page_of_its_own_gets_the_generic_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The viewer picks a page by the table's kind (``view.cli.PAGES``); a new environment's
    games are drawn as recorded until it has a page, rather than refused."""
    from maze_envs.journal import Journal
    from maze_envs.view import cli
    from tests.view.journals import record_agimaze
    from tests.view.test_agimaze_page import corridor

    path = tmp_path / "games.sqlite"
    game = record_agimaze(path, {"labyrinth": corridor()}, ["left", "right"])
    with Journal.open_readonly(path) as journal:
        assert cli.game_data(journal, game)["kind"] == "agimaze"
        monkeypatch.setattr(cli, "PAGES", {k: v for k, v in cli.PAGES.items() if k != "agimaze"})
        data = cli.game_data(journal, game)
    assert data["kind"] == "generic" and data["env_id"] == "maze_envs/AgiMaze-v0"
    assert data["rows_intact"] is True and data["game"] == game


def test_the_library_imports_the_reading_floor_by_its_new_name() -> None:
    """The deprecated alias is for users' code: no module of the packages imports it."""
    old = "maze_envs.journal.read"
    users = []
    for package in ("maze_envs", "wrappers", "llm_policies"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                if any(n == old or n.startswith(old + ".") for n in names):
                    users.append(str(path.relative_to(ROOT)))
    assert users == []
