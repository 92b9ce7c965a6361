"""The JSON form of observations and actions, and its mapping to and from the space dicts.

The JSON form of an observation is exactly ``Observation.model_dump(mode="json")`` and that of
an action ``Action.model_dump(mode="json")`` (see :mod:`maze_envs.escape.types`): names instead
of codes, optional features ``None`` when switched off, only the radio senders and the notebooks
actually shown, and per-teammate fields listing *teammates only*, whatever the layout version of
the observation dict. This module is the one mapping in each direction (the optional features'
parts are theirs, :mod:`maze_envs.escape.features`); the typed models and
:mod:`maze_envs.escape.convert` go through it. It builds no models, and sits above the data
module that defines them (:mod:`maze_envs.escape.types`, data only), handing the models'
conversion methods its functions as it is imported: :func:`observation_values` gives the model's
field values straight from the dict, which is what ``Observation.from_space`` builds the model
from.

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

from collections.abc import Callable, Mapping
from typing import Any, Final

import numpy as np

from maze_envs.escape.actions import accept_action, take_symbol
from maze_envs.escape.config import Config, EnvVersion
from maze_envs.escape.features import FEATURES, agent_slots, enabled_features
from maze_envs.escape.types import LATER_FIELDS, JsonForm, register_json_form
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


def layout_version(obs: Mapping[str, Any], agent: str) -> EnvVersion:
    """The layout version of ``agent``'s observation dict (1 when it has an entry for itself)."""
    return 1 if agent in obs["radio"] else 0


#: landmark code -> name (None for no landmark)
_LANDMARKS: Final = (None, *LANDMARK_NAMES)
#: The typed model's optional fields, None while their feature is off.
_OFF: Final = {field: None for feature in FEATURES for field in feature.fields}


def observation_values(
    obs: Mapping[str, Any], config: Config, agent: str, version: EnvVersion | None = None
) -> dict[str, Any]:
    """The typed :class:`~maze_envs.escape.types.Observation`'s field values of ``agent``'s
    observation dict, as plain Python values (``position`` a tuple, ``trail`` a list of tuples;
    ``last_action`` a dict of its fields): what the model is built from, with no JSON-shaped
    detour. ``version`` is the dict's layout version; ``None`` reads it from the dict.

    ``ValueError`` when the dict does not have the layout of ``agent``'s observation space (a
    missing key, a code outside its vocabulary).
    """
    try:
        if version is None:
            version = 1 if agent in obs["radio"] else 0
        key = (id(config), agent, version)
        hit = _READERS.get(key)
        if hit is None or hit[0] is not config:
            hit = _READERS[key] = (config, _reader(config, agent, version))
            if len(_READERS) > 1024:
                _READERS.clear()
                _READERS[key] = hit
        return hit[1](obs)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(
            f"not an observation of agent {agent} in this game's space ({type(exc).__name__}: "
            f"{exc})"
        ) from None


#: (id(config), agent, version) -> (config, reader): by identity, as ``enabled_features`` (the
#: config is kept with its reader, so its id is not reused while the entry lives)
_READERS: dict[tuple[int, str, int], tuple[Config, Callable[[Mapping[str, Any]], Any]]] = {}


def _reader(
    config: Config, agent: str, version: EnvVersion
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """:func:`observation_values` of one agent's dicts of one layout version: everything that
    does not change from one observation to the next (its slots, the features on, the fields
    off) looked up once."""
    slots = agent_slots(config.num_agents, agent, version)
    others = slots.others
    to_models = [feature.to_model for feature in enabled_features(config)]
    off = _OFF  # every optional field None first: the model's field order, then the features'
    landmarks, edge_kinds = _LANDMARKS, EDGE_KINDS
    move_results, notebook_results, radio_results = MOVE_RESULTS, NOTEBOOK_RESULTS, RADIO_RESULTS
    ndarray = np.ndarray

    def read(obs: Mapping[str, Any]) -> dict[str, Any]:
        radio, shown, last = obs["radio"], obs["teammate_notebooks"], obs["last_action"]
        heard = {}
        seen = {}
        for name in others:
            message = radio[name]
            if message:
                heard[name] = message
            notebook = shown[name]
            if notebook["shown"]:
                seen[name] = notebook["text"]
        edges = obs["edges"]
        north, east, south, west = edges.tolist() if type(edges) is ndarray else edges
        values = {
            "edges": {
                "N": edge_kinds[north],
                "E": edge_kinds[east],
                "S": edge_kinds[south],
                "W": edge_kinds[west],
            },
            "on_exit": bool(obs["on_exit"]),
            "landmark": landmarks[obs["landmark"]],
            "turn": int(obs["turn"]),
            "turns_left": int(obs["turns_left"]),
            "notebook": obs["notebook"],
            "radio": heard,
            "teammate_notebooks": seen,
            "last_action": {
                "move": move_results[last["move"]],
                "notebook": notebook_results[last["notebook"]],
                "notebook_reason": last["notebook_reason"],
                "radio": radio_results[last["radio"]],
                "radio_reason": last["radio_reason"],
                "radio_cooldown": int(last["radio_cooldown"]),
            },
        }
        values.update(off)
        for to_model in to_models:
            to_model(obs, slots, values)
        return values

    return read


#: the types a JSON form keeps as they are (checked by exact type: no call, no isinstance)
_SCALARS = frozenset({int, str, float, bool, type(None)})


def _json(value: Any) -> Any:
    """A model value in JSON form: tuples as lists (what ``model_dump(mode="json")`` does)."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, tuple | list):  # a trail: 30 pairs; recurse only into non-scalars
        return [item if type(item) in _SCALARS else _json(item) for item in value]
    return value


def observation_to_json(
    obs: Mapping[str, Any], config: Config, agent: str, version: EnvVersion | None = None
) -> dict[str, Any]:
    """The JSON form (``Observation.model_dump(mode="json")``) of ``agent``'s observation dict.

    ``version`` is the dict's layout version; ``None`` reads it from the dict.
    """
    return {
        key: _json(value)
        for key, value in observation_values(obs, config, agent, version).items()
        if value is not None or key not in LATER_FIELDS
    }


def observation_from_json(
    data: Mapping[str, Any], config: Config, agent: str, version: EnvVersion = 0
) -> dict[str, Any]:
    """The observation dict of layout ``version`` (a member of that version's observation space
    of ``agent``) of the JSON form (or of the typed model's field values)."""
    slots = agent_slots(config.num_agents, agent, version)
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
        "radio": {name: sent.get(name, "") if name != agent else "" for name in slots.slots},
        "teammate_notebooks": {
            name: {"shown": 1, "text": shown[name]}
            if name in shown and name != agent
            else {"shown": 0, "text": ""}
            for name in slots.slots
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
    for feature in enabled_features(config):
        obs.update(feature.from_model(data, config, slots))
    return obs


def action_to_json(action: Any, config: Config, agent: str = "agent") -> dict[str, Any]:
    """The JSON form (``Action.model_dump(mode="json")``) of an action dict.

    The action is checked against the action space first (``ValueError`` naming ``agent``).
    """
    symbol = 0
    if config.radio_symbols:
        symbol, action = take_symbol(agent, action, config.radio_symbols)
    move, edit, radio = accept_action(agent, action, config.notebook_mode == "splice")[:3]
    notebook: dict[str, Any] | None
    if isinstance(edit, tuple):
        notebook = {"start": edit[0], "end": edit[1], "text": edit[2]}
    else:
        notebook = {"text": edit} if edit else None
    data: dict[str, Any] = {"move": MOVES[move], "notebook": notebook, "radio": radio or None}
    if symbol:  # the JSON form names a symbol only when one is sent
        data["radio_symbol"] = symbol
    return data


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
    action = {
        "move": MOVES.index(data.get("move", "STAY")),
        "notebook": notebook,
        "radio": data.get("radio") or "",
    }
    symbol = data.get("radio_symbol") or 0
    if config.radio_symbols:
        action["radio_symbol"] = symbol
    elif symbol:
        raise ValueError("this game has no radio symbols (radio_symbols=0): radio_symbol is none")
    return action


register_json_form(
    JsonForm(observation_values, observation_from_json, action_to_json, action_from_json)
)
