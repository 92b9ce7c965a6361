"""Collection rules for the doctests of the packages (pytest ``--doctest-modules``), and the
journal's hint check, on for every test.

Every journal writer of the test run (subprocesses included) checks each change hint an
environment hands it against a whole walk of the observations
(:data:`maze_envs.journal.delta.CHECK_HINTS_VARIABLE`): a wrong hint fails the test that played
the game, never a journal.
"""

from __future__ import annotations

import os

os.environ.setdefault("MAZE_ENVS_CHECK_HINTS", "1")

# Entry-point scripts run the command line when imported; they have no examples.
collect_ignore_glob = ["maze_envs/__main__.py", "maze_envs/*/__main__.py"]

# The verifiers environments import verifiers, which lives in an environment of its own (the
# verifiers extra cannot be installed beside the llm extra): their doctests run there.
try:
    import verifiers.v1  # noqa: F401
except ImportError:
    collect_ignore_glob.append("llm_policies/apps/verifiers/*")
