"""Collection rules for the doctests of the packages (pytest ``--doctest-modules``), the
journal's hint check, on for every test, and the order of the tests in a parallel run.

Every journal writer of the test run (subprocesses included) checks each change hint an
environment hands it against a whole walk of the observations
(:data:`maze_envs.journal.delta.CHECK_HINTS_VARIABLE`): a wrong hint fails the test that played
the game, never a journal.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("MAZE_ENVS_CHECK_HINTS", "1")

# Entry-point scripts run the command line when imported; they have no examples.
collect_ignore_glob = ["maze_envs/__main__.py", "maze_envs/*/__main__.py"]
# A deprecated alias warns when first imported and has no examples: importing it here would
# spend its one warning before any test could see it.
collect_ignore_glob.append("maze_envs/journal/read.py")

# The verifiers environments import verifiers, which lives in an environment of its own (the
# verifiers extra cannot be installed beside the llm extra): their doctests run there.
try:
    import verifiers.v1  # noqa: F401
except ImportError:
    collect_ignore_glob.append("llm_policies/apps/verifiers/*")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker (``scripts/test.sh`` runs ``-n 2 --dist loadscope
    --no-loadscope-reorder``: a module's tests go to one worker, so its module-scoped fixtures,
    a Ray cluster, a llama.cpp server, a played run, are set up once): the modules of the
    longest tests (marked ``real_server`` or ``slow``) are handed out first, so no worker
    starts one of them when the other has nothing left to do. A plain ``pytest`` run keeps its
    order."""
    if hasattr(config, "workerinput"):
        items.sort(
            key=lambda item: (
                item.get_closest_marker("real_server") is None
                and item.get_closest_marker("slow") is None
            )
        )
