"""Collection rules for the doctests of the packages (pytest ``--doctest-modules``)."""

from __future__ import annotations

# Entry-point scripts run the command line when imported; they have no examples.
collect_ignore_glob = ["maze_envs/__main__.py", "maze_envs/*/__main__.py"]

# The verifiers environments import verifiers, which lives in an environment of its own (the
# verifiers extra cannot be installed beside the llm extra): their doctests run there.
try:
    import verifiers.v1  # noqa: F401
except ImportError:
    collect_ignore_glob.append("llm_policies/apps/verifiers/*")
