"""Lossless conversion between space samples, their JSON form, the typed models and the journal.

The JSON form (``Observation.model_dump(mode="json")`` / ``Action.model_dump(mode="json")``) and
its mapping to and from the space dicts are in :mod:`maze_envs.escape.jsonform` (re-exported
here); this module adds the typed models on top, and the *stored form*: the journal stores each
observation as delivered, its arrays written as JSON lists, and :func:`observation_from_stored`
turns that back into the exact observation dict, from which the JSON form and the model follow.

Observation dicts of both layout versions are read as they come (the version shows in the
dict); functions that build an observation dict take ``version`` (0 unless given).

Example:
    >>> from maze_envs import maze_escape_v1
    >>> env = maze_escape_v1.parallel_env(preset="full")
    >>> obs, _ = env.reset(seed=1)
    >>> model = observation_to_model(obs["A"], env.config, "A")
    >>> model.position, model.trail, sorted(model.distance_to_teammates)
    ((0, 0), [], ['B', 'C'])
    >>> back = observation_from_model(model, env.config, "A", version=1)
    >>> env.observation_space("A").contains(back)
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces

from maze_envs.escape.config import Config, EnvVersion
from maze_envs.escape.jsonform import (
    action_from_json,
    action_to_json,
    layout_version,
    observation_from_json,
    observation_to_json,
)
from maze_envs.escape.spaces import observation_space
from maze_envs.escape.types import Action, Observation

__all__ = [
    "action_from_json",
    "action_from_model",
    "action_to_json",
    "action_to_model",
    "layout_version",
    "observation_from_json",
    "observation_from_model",
    "observation_from_stored",
    "observation_to_json",
    "observation_to_model",
]


_Convert = Callable[[Any], Any]


@lru_cache(maxsize=64)
def _stored_reader(config: Config, agent: str, version: EnvVersion) -> _Convert:
    """The function that turns a stored observation of ``agent`` (layout ``version``) back into
    the dict as delivered: built once per layout from the observation space, so that a
    journal's thousands of observations are read without walking the space again."""
    return _reader(observation_space(config, agent, version), "")


def _reader(space: spaces.Space[Any], path: str) -> _Convert:
    """The stored value of ``space`` at ``path`` as delivered (``ValueError`` on a value
    without the space's layout): dicts key by key, arrays with the space's dtype and shape."""
    if isinstance(space, spaces.Dict):
        keys = space.spaces.keys()
        where = path or "observation"
        readers = {
            key: _reader(sub, f"{path}.{key}".lstrip(".")) for key, sub in space.spaces.items()
        }
        plain = frozenset(key for key, read in readers.items() if read is _as_is)

        def read_dict(value: Any) -> Any:
            if not isinstance(value, Mapping) or value.keys() != keys:
                got = (
                    sorted(map(str, value)) if isinstance(value, Mapping) else type(value).__name__
                )
                raise ValueError(f"{where}: expected the keys {sorted(keys)}, got {got}")
            # the stored order is the delivered order (the space's own order may be sorted)
            return {
                key: item if key in plain else readers[key](item) for key, item in value.items()
            }

        return read_dict
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        dtype, shape = space.dtype, space.shape

        def read_array(value: Any) -> Any:
            array = np.array(value, dtype=dtype)
            if array.shape != shape:
                raise ValueError(f"{path}: expected shape {shape}, got {array.shape}")
            return array

        return read_array
    return _as_is


def _as_is(value: Any) -> Any:
    return value


def observation_from_stored(
    data: Mapping[str, Any], config: Config, agent: str, version: EnvVersion | None = None
) -> dict[str, Any]:
    """The observation dict exactly as delivered, from its stored form (the journal's JSON).

    Arrays get the dtype and shape of ``agent``'s observation space in layout ``version``
    (``None``: the version the stored dict shows); anything that does not fit the space's layout
    raises ``ValueError``.

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
    if version is None:
        radio = data.get("radio")
        version = layout_version(data, agent) if isinstance(radio, Mapping) else 0
    result: dict[str, Any] = _stored_reader(config, agent, version)(data)
    return result


def observation_to_model(obs: Mapping[str, Any], config: Config, agent: str) -> Observation:
    """The typed :class:`Observation` of ``agent``'s observation dict (either version)."""
    return Observation.model_validate(observation_to_json(obs, config, agent))


def observation_from_model(
    model: Observation, config: Config, agent: str, version: EnvVersion = 0
) -> dict[str, Any]:
    """The observation dict of layout ``version`` of a typed :class:`Observation`."""
    return observation_from_json(model.model_dump(mode="json"), config, agent, version)


def action_to_model(action: Mapping[str, Any], config: Config, agent: str = "agent") -> Action:
    """The typed :class:`Action` of an action dict (checked against the action space)."""
    return Action.model_validate(action_to_json(action, config, agent))


def action_from_model(model: Action, config: Config) -> dict[str, Any]:
    """The action dict (a member of the action space) of a typed :class:`Action`.

    In ``splice`` mode an action without an edit has ``edit == 0`` and zero/empty other fields
    (the canonical form; with ``edit == 0`` those fields are ignored by the rules).
    """
    return action_from_json(model.model_dump(mode="json"), config)
