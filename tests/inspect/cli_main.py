"""Inspect's command line (``inspect ...``) with this checkout's entry point and a scripted model.

``python tests/inspect/cli_main.py eval maze_envs/escape --model mazescripted/wall-follower ...``
runs ``inspect eval`` exactly as a researcher types it, except for two things a test needs:

* the ``inspect_ai`` entry points are read from this checkout's ``pyproject.toml`` instead of the
  installed package metadata (which may predate them), so the task name resolves through the
  entry point as it will once the package is installed;
* the model provider ``mazescripted`` answers offline: it is the package's stand-in provider
  (:mod:`llm_policies.apps.inspect.stand_in`, the scripted wall follower) under another name.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

if __name__ == "__main__":
    # Run as a script: this folder off the path, the checkout after site-packages (see
    # tests/inspect/test_cli.py), so `tests.*` imports while the installed metadata still wins.
    sys.path[0:1] = []
    sys.path.append(str(Path(__file__).resolve().parents[2]))
from importlib.metadata import EntryPoint
from typing import Any

import inspect_ai._util.entrypoints as inspect_entry_points
from inspect_ai.model import modelapi

from llm_policies.apps.inspect.stand_in import StandIn
from tests.conftest import REPO_ROOT


def pyproject_entry_points() -> list[EntryPoint]:
    """The ``inspect_ai`` entry points this checkout declares."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    table = project["entry-points"]["inspect_ai"]
    return [EntryPoint(name, value, "inspect_ai") for name, value in table.items()]


#: The package's stand-in provider (``stand-in/NAME``) under a name of the tests' own, so a
#: test sees the provider it names reach the journal (``inspect:mazescripted/...``).
ScriptedWallFollower = modelapi(name="mazescripted")(StandIn)


def main() -> None:
    points = pyproject_entry_points()

    def entry_points(**selection: Any) -> list[EntryPoint]:
        return [p for p in points if p.group == selection.get("group", p.group)]

    inspect_entry_points.entry_points = entry_points  # type: ignore[assignment]
    from inspect_ai._cli.main import main as inspect_main

    sys.argv = ["inspect", *sys.argv[1:]]
    inspect_main()


if __name__ == "__main__":
    main()
