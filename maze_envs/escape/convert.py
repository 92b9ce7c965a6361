"""Lossless conversion between space samples, their JSON form and the typed pydantic models.

The JSON form of an observation is exactly ``Observation.model_dump(mode="json")``: field names
and value names instead of indices, optional features ``None`` when switched off, only the radio
senders and the notebooks actually shown. :func:`observation_to_json` builds it directly,
without constructing models; the model functions go through it, so there is one mapping in each
direction.

The journal stores each observation as delivered, its arrays written as JSON lists (the
*stored form*); :func:`observation_from_stored` turns that back into the exact observation dict,
from which the JSON form and the model follow.

Example:
    >>> from maze_envs import maze_escape_v0
    >>> env = maze_escape_v0.parallel_env(preset="full")
    >>> obs, _ = env.reset(seed=1)
    >>> model = observation_to_model(obs["A"], env.config, "A")
    >>> model.position, model.trail
    ((0, 0), [])
    >>> back = observation_from_model(model, env.config, "A")
    >>> env.observation_space("A").contains(back)
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces

from maze_envs.escape.spaces import observation_space, parse_action, teammates
from maze_envs.escape.types import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    MOVES,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
    Action,
    AppendEdit,
    Config,
    Observation,
    SpliceEdit,
)


def _ints(value: Any) -> list[Any]:
    return value.tolist() if isinstance(value, np.ndarray) else list(value)


def observation_to_json(obs: Mapping[str, Any], config: Config, agent: str) -> dict[str, Any]:
    """The JSON form (``Observation.model_dump(mode="json")``) of ``agent``'s observation dict."""
    others = teammates(config, agent)
    last = obs["last_action"]
    edges = _ints(obs["edges"])
    landmark = int(obs["landmark"])
    out: dict[str, Any] = {
        "edges": {d: EDGE_KINDS[k] for d, k in zip(DIRECTIONS, edges, strict=True)},
        "on_exit": bool(obs["on_exit"]),
        "landmark": LANDMARK_NAMES[landmark - 1] if landmark else None,
        "turn": int(obs["turn"]),
        "turns_left": int(obs["turns_left"]),
        "notebook": obs["notebook"],
        "radio": {name: text for name, text in obs["radio"].items() if text},
        "teammate_notebooks": {
            name: entry["text"]
            for name, entry in obs["teammate_notebooks"].items()
            if entry["shown"]
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
    if "distances" in obs:
        distances = _ints(obs["distances"])
        out["distance_to_exit"] = distances[0]
        out["distance_to_teammates"] = dict(zip(others, distances[1:], strict=True))
    if "position" in obs:
        out["position"] = _ints(obs["position"])
    if "trail" in obs:
        rows = _ints(obs["trail"])
        out["trail"] = [list(row) for row in rows[len(rows) - int(obs["trail_length"]) :]]
    if "colocated_with" in obs:
        flags = _ints(obs["colocated_with"])
        out["colocated_with"] = [n for n, v in zip(others, flags, strict=True) if v]
    if "used_exits" in obs:
        flags = _ints(obs["used_exits"])
        out["used_exits"] = [d for d, v in zip(DIRECTIONS, flags, strict=True) if v]
    return out


def observation_from_json(data: Mapping[str, Any], config: Config, agent: str) -> dict[str, Any]:
    """The observation dict (a member of the agent's observation space) of the JSON form."""
    others = teammates(config, agent)
    last = data["last_action"]
    shown = data["teammate_notebooks"]
    obs: dict[str, Any] = {
        "edges": np.array([EDGE_KINDS.index(data["edges"][d]) for d in DIRECTIONS], np.int64),
        "on_exit": int(data["on_exit"]),
        "landmark": 0 if data["landmark"] is None else 1 + LANDMARK_NAMES.index(data["landmark"]),
        "turn": data["turn"],
        "turns_left": data["turns_left"],
        "notebook": data["notebook"],
        "radio": {name: data["radio"].get(name, "") for name in others},
        "teammate_notebooks": {
            name: {"shown": 1, "text": shown[name]} if name in shown else {"shown": 0, "text": ""}
            for name in others
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
        row = [data["distance_to_exit"], *(to_teammates[name] for name in others)]
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
        here = set(data["colocated_with"] or ())
        obs["colocated_with"] = np.array([name in here for name in others], dtype=np.int8)
    if config.used_exits:
        used = set(data["used_exits"] or ())
        obs["used_exits"] = np.array([d in used for d in DIRECTIONS], dtype=np.int8)
    return obs


@lru_cache(maxsize=64)
def _space(config: Config, agent: str) -> spaces.Dict:
    return observation_space(config, agent)


def _from_stored(value: Any, space: spaces.Space[Any], path: str) -> Any:
    if isinstance(space, spaces.Dict):
        if not isinstance(value, Mapping) or value.keys() != space.spaces.keys():
            got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
            where = path or "observation"
            raise ValueError(f"{where}: expected the keys {sorted(space.spaces)}, got {got}")
        # the stored order is the delivered order (the space's own order may be sorted)
        return {
            key: _from_stored(item, space.spaces[key], f"{path}.{key}".lstrip("."))
            for key, item in value.items()
        }
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        array = np.array(value, dtype=space.dtype)
        if array.shape != space.shape:
            raise ValueError(f"{path}: expected shape {space.shape}, got {array.shape}")
        return array
    return value


def observation_from_stored(data: Mapping[str, Any], config: Config, agent: str) -> dict[str, Any]:
    """The observation dict exactly as delivered, from its stored form (the journal's JSON).

    Arrays get the dtype and shape of ``agent``'s observation space; anything that does not fit
    the space's layout raises ``ValueError``.

    Example:
        >>> import orjson
        >>> from maze_envs import maze_escape_v0
        >>> env = maze_escape_v0.parallel_env(preset="full")
        >>> obs, _ = env.reset(seed=1)
        >>> stored = orjson.loads(orjson.dumps(obs["A"], option=orjson.OPT_SERIALIZE_NUMPY))
        >>> back = observation_from_stored(stored, env.config, "A")
        >>> back["trail"].dtype, env.observation_space("A").contains(back)
        (dtype('int64'), True)
    """
    result: dict[str, Any] = _from_stored(data, _space(config, agent), "")
    return result


def observation_to_model(obs: Mapping[str, Any], config: Config, agent: str) -> Observation:
    """The typed :class:`Observation` of ``agent``'s observation dict."""
    return Observation.model_validate(observation_to_json(obs, config, agent))


def observation_from_model(model: Observation, config: Config, agent: str) -> dict[str, Any]:
    """The observation dict of a typed :class:`Observation`."""
    return observation_from_json(model.model_dump(mode="json"), config, agent)


def action_to_model(action: Mapping[str, Any], config: Config, agent: str = "agent") -> Action:
    """The typed :class:`Action` of an action dict (checked against the action space)."""
    move, edit, radio = parse_action(agent, action, config.notebook_mode == "splice")
    notebook: SpliceEdit | AppendEdit | None
    if isinstance(edit, tuple):
        notebook = SpliceEdit(start=edit[0], end=edit[1], text=edit[2])
    else:
        notebook = AppendEdit(text=edit) if edit else None
    return Action(move=MOVES[move], notebook=notebook, radio=radio or None)


def action_from_model(model: Action, config: Config) -> dict[str, Any]:
    """The action dict (a member of the action space) of a typed :class:`Action`.

    In ``splice`` mode an action without an edit has ``edit == 0`` and zero/empty other fields
    (the canonical form; with ``edit == 0`` those fields are ignored by the rules).
    """
    notebook: dict[str, Any]
    edit = model.notebook
    if config.notebook_mode == "splice":
        if isinstance(edit, AppendEdit):
            raise ValueError("this game's notebook takes splice edits, not appends")
        notebook = (
            {"edit": 1, "start": edit.start, "end": edit.end, "text": edit.text}
            if edit is not None
            else {"edit": 0, "start": 0, "end": 0, "text": ""}
        )
    else:
        if isinstance(edit, SpliceEdit):
            raise ValueError("this game's notebook is a rolling log: it takes appends only")
        notebook = {"append": edit.text if edit is not None else ""}
    return {"move": MOVES.index(model.move), "notebook": notebook, "radio": model.radio or ""}
