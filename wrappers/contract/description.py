"""The environment descriptions of the contract sessions, and the workspace's interface note.

* AGI Maze, one labyrinth: :func:`maze_envs.text.agimaze_description` of the labyrinth (rules,
  task information, board size, start, step budget, public map, actions, coordinates): the
  single-labyrinth description of the EnvTraverse evaluation.
* AGI Maze, labyrinth set: the set description (:data:`~maze_envs.agimaze.set_env.
  SET_DESCRIPTION`) and, once a labyrinth starts, that labyrinth's single-labyrinth description
  (:func:`labyrinth_description`).
* Maze Escape: :func:`escape_description` (rules, board, team, turn limit, the legend of the
  observation, the JSON actions).

:data:`INTERFACE` is the same for every environment: the files and the command line.

Example:
    >>> from maze_envs.escape.types import Config
    >>> text = escape_description(Config.from_preset("navigator"), "A", "explorer")
    >>> text.splitlines()[0]
    '# Maze Escape'
    >>> '{"id": "N"}' in text
    True
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from typing import Any, Final

from maze_envs.agimaze.model_text import API_DESCRIPTION
from maze_envs.agimaze.set_env import START_ACTION
from maze_envs.escape.types import Config
from maze_envs.policies.episodes import agimaze_episode
from maze_envs.text import agimaze_description, escape_legend


def _data(name: str) -> str:
    return resources.files("wrappers.contract").joinpath("data", name).read_text(encoding="utf-8")


#: How to play through the workspace; written as ``CONTRACT.md`` in every workspace
#: (``data/CONTRACT.md``).
INTERFACE: Final = _data("CONTRACT.md")
#: The rules of Maze Escape as a contract session states them (``data/escape_rules.md``, one
#: paragraph).
ESCAPE_RULES: Final = " ".join(_data("escape_rules.md").split())


def _action_list(names: list[str]) -> str:
    return ", ".join(json.dumps({"id": name}) for name in names)


def single_labyrinth_description(env: Any, info: dict[str, Any]) -> str:
    """The description of ``AgiMaze-v0``'s labyrinth after its reset."""
    return agimaze_description(agimaze_episode(env, info))


def labyrinth_description(env: Any, info: dict[str, Any]) -> str:
    """The single-labyrinth description of the labyrinth a set just started (after ``start``).

    The rules are the single-labyrinth ones and ``start`` is not among its actions.
    """
    episode = agimaze_episode(env, info)
    episode = dataclasses.replace(
        episode,
        description=API_DESCRIPTION,
        action_names=tuple(a for a in episode.action_names if a != START_ACTION),
    )
    return agimaze_description(episode)


def set_description(set_text: str, count: int) -> str:
    """The labyrinth set's description: the set text, its size, and how to begin."""
    return "\n".join(
        [
            set_text,
            "",
            f"The set has {count} labyrinth(s). Actions are JSON objects; begin each labyrinth "
            f"with {json.dumps({'id': START_ACTION})}.",
        ]
    )


def escape_description(config: Config, agent: str | None, teammates: str | None) -> str:
    """The description of a Maze Escape session for ``agent`` (None: every agent)."""
    agents = list(config.agents)
    if agent is None:
        who = f"You control every agent of the team: {', '.join(agents)}."
        form = (
            'One action for each agent still playing, keyed by name: {"A": {"id": "N"}, '
            '"B": {"id": "STAY"}, ...}.'
        )
    else:
        others = [a for a in agents if a != agent]
        team = f" Your teammates {', '.join(others)} are played by the policy `{teammates}`."
        who = f"You are agent {agent}." + (team if others else "")
        form = 'One action per turn, e.g. {"id": "N"}.'
    if config.notebook_mode == "splice":
        notebook = (
            '"notebook": {"start": S, "end": E, "text": "..."} replaces the characters S:E of '
            "your notebook with the text"
        )
    else:
        notebook = '"notebook": {"text": "..."} appends the text as new lines to your notebook'
    radio = (
        f'; "radio": "..." sends a message to every teammate (at most {config.radio_max_bytes} '
        "bytes)"
        if config.radio and config.num_agents > 1
        else ""
    )
    lines = [
        "# Maze Escape",
        "",
        ESCAPE_RULES,
        "",
        who,
        f"Board: {config.width} by {config.height} cells. Turn limit: {config.max_turns}.",
        "",
        escape_legend(config),
        "",
        "## Actions",
        "",
        "Actions are JSON objects. Moves: "
        + _action_list(["N", "E", "S", "W", "STAY"])
        + " (north, east, south, west, stay).",
        f"Optional keys: {notebook}{radio}.",
        form,
    ]
    if config.coordinates is not None:
        lines += ["", "Coordinates: positions are [x, y], x growing to the east, y to the north."]
    return "\n".join(lines)
