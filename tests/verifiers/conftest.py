"""The Environments Hub packages (``maze_envs_escape``, ``maze_envs_agimaze``) importable by name
from this checkout, installed or not (verifiers resolves an environment by its module name)."""

from __future__ import annotations

import importlib.util
import sys

from tests.verifiers.support import HUB

for folder in sorted(HUB.iterdir()):
    module = folder.name.replace("-", "_")
    if folder.is_dir() and importlib.util.find_spec(module) is None:
        sys.path.append(str(folder))
