"""The applications moved to ``llm_policies.apps`` (issue 26): their old import paths still work,
as the very same modules, with a DeprecationWarning; the command table names the new homes."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from maze_envs.cli import COMMANDS

MOVED = {
    "llm_policies.study_run": "llm_policies.apps.study_run",
    "llm_policies.study_plan": "llm_policies.apps.study_plan",
    "llm_policies.replay": "llm_policies.apps.replay",
    "llm_policies.replay_report": "llm_policies.apps.replay_report",
}


def test_an_old_path_is_the_new_module_with_a_warning() -> None:
    """In a fresh interpreter (the warning fires on a module's first import only)."""
    code = (
        "import importlib, warnings\n"
        f"for old, new in {sorted(MOVED.items())!r}:\n"
        "    with warnings.catch_warnings(record=True) as caught:\n"
        "        warnings.simplefilter('always')\n"
        "        moved = importlib.import_module(old)\n"
        "    assert moved is importlib.import_module(new), (old, new)\n"
        "    said = [str(w.message) for w in caught if w.category is DeprecationWarning]\n"
        "    assert any(new in m for m in said), (old, said)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_inspect_package_and_its_modules_keep_their_old_names() -> None:
    pytest.importorskip("inspect_ai", reason="the Inspect tasks need the inspect extra")
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import llm_policies.inspect.tasks as old_tasks\n"
        "    from llm_policies.inspect import escape\n"
        "    from llm_policies.inspect.policy import escape_policy\n"
        "import llm_policies.apps.inspect.tasks as tasks\n"
        "import llm_policies.apps.inspect.policy as policy\n"
        "assert old_tasks is tasks and escape is tasks.escape\n"
        "assert escape_policy is policy.escape_policy\n"
        "assert any(w.category is DeprecationWarning for w in caught)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_commands_of_the_llm_policies_name_their_new_homes() -> None:
    targets = {words: row[0] for words, row in COMMANDS.items()}
    assert targets[("study", "run")] == "llm_policies.apps.study_run:main"
    assert targets[("replay-decisions",)] == "llm_policies.apps.replay:main"
    for target in targets.values():
        if target.startswith("llm_policies."):
            module, _, name = target.partition(":")
            assert callable(getattr(importlib.import_module(module), name))


def test_make_backend_is_still_named_by_the_protocol_module_with_a_warning() -> None:
    import llm_policies.backends.base as base
    from llm_policies.backends import make_backend

    with pytest.warns(DeprecationWarning, match="moved to llm_policies.backends.make"):
        moved = base.make_backend
    assert moved is make_backend
