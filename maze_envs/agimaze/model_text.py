"""The text a model reads in AGI Maze, loaded from ``data/model_text.toml`` (package data):
the rule summary of ``GET /api/description``, the labyrinth set's description, the set's
transition messages and its replies to actions that are not valid at the moment. Kept as a data
file so the words are edited in one place, apart from the code, like the prompts of
:mod:`llm_policies.prompts`.

Example:
    >>> API_DESCRIPTION.startswith("You are inside a labyrinth")
    True
    >>> not_available_message("start", ["up", "down"]).split(". ")[1]
    'Available actions: {"id": "up"}, {"id": "down"}'
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from importlib import resources
from typing import Any, Final


def _load() -> dict[str, Any]:
    text = resources.files("maze_envs.agimaze").joinpath("data", "model_text.toml")
    return tomllib.loads(text.read_text(encoding="utf-8"))


_TEXT: Final = _load()
_SET: Final[dict[str, str]] = _TEXT["set_messages"]
_FILL: Final = {"start_prompt": _SET["start_prompt"], "five_times": _SET["five_times"]}

#: Rule summary served by ``GET /api/description`` (agents prepend it to their system prompt).
API_DESCRIPTION: Final[str] = _TEXT["api_description"]
#: Set description shown to the agent before the first labyrinth.
SET_DESCRIPTION: Final[str] = _TEXT["set_description"]
#: Before the first labyrinth.
INITIAL_MESSAGE: Final = _SET["initial"].format(**_FILL)
#: A labyrinth solved and another remains.
SOLVED_MESSAGE: Final = _SET["solved"].format(**_FILL)
#: A labyrinth's budget exhausted and another remains.
FAILED_MESSAGE: Final = _SET["failed"].format(**_FILL)
#: The final labyrinth solved.
SOLVED_FINAL_MESSAGE: Final = _SET["solved_final"].format(**_FILL)
#: The final labyrinth's budget exhausted.
FAILED_FINAL_MESSAGE: Final = _SET["failed_final"].format(**_FILL)


def not_started_message(action: str, first: bool) -> str:
    """Reply to a labyrinth action while the set waits for ``start``."""
    which = "first" if first else "next"
    return str(_TEXT["refusals"]["not_started"]).format(action=action, which=which, **_FILL)


def not_available_message(action: str, allowed: Sequence[str]) -> str:
    """Reply to ``start`` or to an action this labyrinth lacks, while a labyrinth is running."""
    listed = ", ".join(json.dumps({"id": a}) for a in allowed)
    return str(_TEXT["refusals"]["not_available"]).format(action=action, allowed=listed)
