"""The sentences of Maze Escape's refusals, loaded from ``data/refusals.toml`` (package data):
what an agent reads when the notebook rules reject an edit (or drop lines of a rolling log) and
when the radio refuses a message. Kept as a data file beside the code, as the other text a model
reads; the rules (:mod:`maze_envs.escape.notebook`, :mod:`maze_envs.escape.radio`) fill them in.

Example:
    >>> RADIO["cooling_down"].format(cooldown_left=2)
    'radio cooling down: 2 more turn(s) before you can send'
"""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any, Final


def _load() -> dict[str, Any]:
    data = resources.files("maze_envs.escape").joinpath("data", "refusals.toml")
    return tomllib.loads(data.read_text(encoding="utf-8"))


_REFUSALS: Final = _load()
#: Notebook rejections (and the rolling log's dropped lines), by rule.
NOTEBOOK: Final[dict[str, str]] = _REFUSALS["notebook"]
#: Radio refusals, by rule.
RADIO: Final[dict[str, str]] = _REFUSALS["radio"]
