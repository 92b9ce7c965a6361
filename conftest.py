"""Collection rules for the doctests of the packages (pytest ``--doctest-modules``)."""

from __future__ import annotations

# Entry-point scripts run the command line when imported; they have no examples.
collect_ignore_glob = ["maze_envs/__main__.py", "maze_envs/*/__main__.py"]
