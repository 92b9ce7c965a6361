"""The JSON form of observations and actions, and its mapping to and from the space dicts.

The JSON form of an observation is exactly ``Observation.model_dump(mode="json")`` and that of
an action ``Action.model_dump(mode="json")`` (see :mod:`maze_envs.escape.types`): names instead
of codes, optional features ``None`` when switched off, only the radio senders and the notebooks
actually shown, and per-teammate fields listing *teammates only*, whatever the layout version of
the observation dict. This module is the one mapping in each direction; the typed models and
:mod:`maze_envs.escape.convert` go through it. It needs no models, so it sits below them.

Observation dicts come in two layouts (see :mod:`maze_envs.escape.observe`): version 0 keys
per-teammate fields by the other agents, version 1 by all agents with the agent's own entry
blank. :func:`observation_to_json` reads both (it tells them apart by whether the agent's own
name is a key of ``radio``); :func:`observation_from_json` builds the one asked for.

Example:
    >>> from maze_envs.escape.config import Config
    >>> config = Config(num_agents=2)
    >>> data = action_to_json({"move": 1, "notebook": {"edit": 0, "start": 0, "end": 0,
    ...                        "text": ""}, "radio": "hi"}, config)
    >>> data
    {'move': 'E', 'notebook': None, 'radio': 'hi'}
    >>> action_from_json(data, config)["notebook"]
    {'edit': 0, 'start': 0, 'end': 0, 'text': ''}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from maze_envs.escape.actions import accept_action
from maze_envs.escape.config import Config, EnvVersion, slot_names, teammates
from maze_envs.escape.vocab import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    MOVES,
    NO_LANDMARK,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
)


def _ints(value: Any) -> list[Any]:
    return value.tolist() if isinstance(value, np.ndarray) else list(value)


def layout_version(obs: Mapping[str, Any], agent: str) -> EnvVersion:
    """The layout version of ``agent``'s observation dict (1 when it has an entry for itself)."""
    return 1 if agent in obs["radio"] else 0


def observation_to_json(
    obs: Mapping[str, Any], config: Config, agent: str, version: EnvVersion | None = None
) -> dict[str, Any]:
    """The JSON form (``Observation.model_dump(mode="json")``) of ``agent``'s observation dict.

    ``version`` is the dict's layout version; ``None`` reads it from the dict.
    """
    if version is None:
        version = layout_version(obs, agent)
    others = teammates(config, agent)
    last = obs["last_action"]
    edges = _ints(obs["edges"])
    landmark = int(obs["landmark"])
    radio = obs["radio"]
    shown = obs["teammate_notebooks"]
    out: dict[str, Any] = {
        "edges": {d: EDGE_KINDS[k] for d, k in zip(DIRECTIONS, edges, strict=True)},
        "on_exit": bool(obs["on_exit"]),
        "landmark": LANDMARK_NAMES[landmark - 1] if landmark != NO_LANDMARK else None,
        "turn": int(obs["turn"]),
        "turns_left": int(obs["turns_left"]),
        "notebook": obs["notebook"],
        "radio": {name: radio[name] for name in others if radio[name]},
        "teammate_notebooks": {
            name: shown[name]["text"] for name in others if shown[name]["shown"]
        },
        "last_action": {
            "move": MOVE_RESULTS[int(last["move"])],
            "notebook": NOTEBOOK_RESULTS[int(last["notebook"])],
            "notebook_reason": last["notebook_reason"],
            "radio": RADIO_RESULTS[int(last["radio"])],
            "radio_reason": last["radio_reason"],
            "radio_cooldown": int(last["radio_cooldown"]),
        },
        "distance_to_exit": None,
        "distance_to_teammates": None,
        "position": None,
        "trail": None,
        "colocated_with": None,
        "used_exits": None,
    }
    slots = slot_names(config, agent, version)
    if "distances" in obs:
        distances = _ints(obs["distances"])
        by_slot = dict(zip(slots, distances[1:], strict=True))
        out["distance_to_exit"] = distances[0]
        out["distance_to_teammates"] = {name: by_slot[name] for name in others}
    if "position" in obs:
        out["position"] = _ints(obs["position"])
    if "trail" in obs:
        rows = _ints(obs["trail"])
        out["trail"] = [list(row) for row in rows[len(rows) - int(obs["trail_length"]) :]]
    if "colocated_with" in obs:
        together = dict(zip(slots, _ints(obs["colocated_with"]), strict=True))
        out["colocated_with"] = [name for name in others if together[name]]
    if "used_exits" in obs:
        used = _ints(obs["used_exits"])
        out["used_exits"] = [d for d, v in zip(DIRECTIONS, used, strict=True) if v]
    return out


def observation_from_json(
    data: Mapping[str, Any], config: Config, agent: str, version: EnvVersion = 0
) -> dict[str, Any]:
    """The observation dict of layout ``version`` (a member of that version's observation space
    of ``agent``) of the JSON form."""
    slots = slot_names(config, agent, version)
    last = data["last_action"]
    shown = data["teammate_notebooks"]
    sent = data["radio"]
    obs: dict[str, Any] = {
        "edges": np.array([EDGE_KINDS.index(data["edges"][d]) for d in DIRECTIONS], np.int64),
        "on_exit": int(data["on_exit"]),
        "landmark": NO_LANDMARK
        if data["landmark"] is None
        else 1 + LANDMARK_NAMES.index(data["landmark"]),
        "turn": data["turn"],
        "turns_left": data["turns_left"],
        "notebook": data["notebook"],
        "radio": {name: sent.get(name, "") if name != agent else "" for name in slots},
        "teammate_notebooks": {
            name: {"shown": 1, "text": shown[name]}
            if name in shown and name != agent
            else {"shown": 0, "text": ""}
            for name in slots
        },
        "last_action": {
            "move": MOVE_RESULTS.index(last["move"]),
            "notebook": NOTEBOOK_RESULTS.index(last["notebook"]),
            "notebook_reason": last["notebook_reason"],
            "radio": RADIO_RESULTS.index(last["radio"]),
            "radio_reason": last["radio_reason"],
            "radio_cooldown": last["radio_cooldown"],
        },
    }
    if config.distance_sensor:
        to_teammates = data["distance_to_teammates"] or {}
        row = [data["distance_to_exit"], *(to_teammates.get(name, 0) for name in slots)]
        obs["distances"] = np.array(row, dtype=np.int64)
    if config.coordinates is not None:
        obs["position"] = np.array(data["position"], dtype=np.int64)
    if config.trail_length:
        trail = data["trail"] or []
        rows = np.zeros((config.trail_length, 2), dtype=np.int64)
        if trail:
            rows[config.trail_length - len(trail) :] = trail
        obs["trail"] = rows
        obs["trail_length"] = len(trail)
    if config.meeting_alert:
        here = set(data["colocated_with"] or ()) - {agent}
        obs["colocated_with"] = np.array([name in here for name in slots], dtype=np.int8)
    if config.used_exits:
        used = set(data["used_exits"] or ())
        obs["used_exits"] = np.array([d in used for d in DIRECTIONS], dtype=np.int8)
    return obs


def action_to_json(action: Any, config: Config, agent: str = "agent") -> dict[str, Any]:
    """The JSON form (``Action.model_dump(mode="json")``) of an action dict.

    The action is checked against the action space first (``ValueError`` naming ``agent``).
    """
    move, edit, radio = accept_action(agent, action, config.notebook_mode == "splice")[:3]
    notebook: dict[str, Any] | None
    if isinstance(edit, tuple):
        notebook = {"start": edit[0], "end": edit[1], "text": edit[2]}
    else:
        notebook = {"text": edit} if edit else None
    return {"move": MOVES[move], "notebook": notebook, "radio": radio or None}


def action_from_json(data: Mapping[str, Any], config: Config) -> dict[str, Any]:
    """The action dict (a member of the action space) of an action's JSON form.

    In ``splice`` mode an action without an edit has ``edit == 0`` and zero/empty other fields
    (the canonical form; with ``edit == 0`` those fields are ignored by the rules). An edit of
    the other notebook mode raises ``ValueError``.
    """
    edit = data.get("notebook")
    notebook: dict[str, Any]
    if config.notebook_mode == "splice":
        if edit is not None and "start" not in edit:
            raise ValueError("this game's notebook takes splice edits, not appends")
        notebook = (
            {"edit": 1, "start": edit["start"], "end": edit["end"], "text": edit.get("text", "")}
            if edit is not None
            else {"edit": 0, "start": 0, "end": 0, "text": ""}
        )
    else:
        if edit is not None and "start" in edit:
            raise ValueError("this game's notebook is a rolling log: it takes appends only")
        notebook = {"append": edit["text"] if edit is not None else ""}
    return {
        "move": MOVES.index(data.get("move", "STAY")),
        "notebook": notebook,
        "radio": data.get("radio") or "",
    }
