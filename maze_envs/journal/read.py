"""Deprecated: reading journaled games moved to :mod:`maze_envs.reading` (issue 26).

``maze_envs.journal.read`` and its modules (``.turns``, ``.tracks``, ``.agimaze``, ``.text``)
still import, as aliases of their new homes, with a ``DeprecationWarning``. The reading floor
sits above the environments, so the journal must not import it: the modules are looked up by
name when this old path is used, and nothing of the journal imports this module.
"""

from __future__ import annotations

import importlib
import sys
import warnings

_NEW_HOME = "maze_envs.reading"
_MODULES = ("turns", "text", "tracks", "agimaze")

warnings.warn(
    f"maze_envs.journal.read is deprecated: import {_NEW_HOME} (same modules and names)",
    DeprecationWarning,
    stacklevel=2,
)

_reading = importlib.import_module(_NEW_HOME)
for _name in _MODULES:
    _module = importlib.import_module(f"{_NEW_HOME}.{_name}")
    sys.modules[f"{__name__}.{_name}"] = _module
    globals()[_name] = _module

__all__ = list(_MODULES)
