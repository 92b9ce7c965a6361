"""The optional observation features of Maze Escape, each declared once.

A feature is one :class:`~maze_envs.escape.features.base.Feature` subclass, in a module of its
own here, listed in :data:`FEATURES` in the order its keys appear in every form. The class
declares all of it: its switch (a :class:`~maze_envs.escape.config.Config` field), its keys and
spaces in the observation dict, its computation (every agent's values of one turn, straight from
the engine state), its fields of the typed :class:`~maze_envs.escape.types.Observation` (from
which the JSON form follows) and the way back to the dict, its legend line and text lines (the
text a model reads), its fields of the numeric observation for reinforcement learning, and its
rows in the viewer. Every form reads :data:`FEATURES`: the observation space
(:mod:`maze_envs.escape.spaces`), the observations (:mod:`maze_envs.escape.observe`), the typed
model and JSON form (:mod:`maze_envs.escape.jsonform`), the text (:mod:`maze_envs.text.escape`),
the numeric observation (:mod:`maze_envs.escape.numeric`) and the viewer
(:mod:`maze_envs.view.escape_data`). ``tests/escape/test_feature_conformance.py`` switches each
feature on alone and fails naming any form that lacks it.

**Adding a feature takes three steps:**

1. *Switch*: a field of :class:`~maze_envs.escape.config.Config` marked
   ``json_schema_extra=FEATURE_SWITCH``, off by default (and on in the presets that should have
   it).
2. *Typed field*: its field(s) of :class:`~maze_envs.escape.types.Observation`, ``None`` while
   the feature is off (as Jumanji's typed observation beside its spec).
3. *Declaration*: a :class:`~maze_envs.escape.features.base.Feature` subclass in a new module
   here, added to :data:`FEATURES`; its sentences go into the wording file
   ``maze_envs/text/data/escape-<version>.json`` (new keys only, so no text an earlier game was
   shown changes).

Example:
    >>> from maze_envs.escape.config import Config
    >>> [feature.name for feature in FEATURES]
    ['distances', 'coordinates', 'trail', 'meeting_alert', 'used_exits', 'radio_symbols']
    >>> [feature.name for feature in enabled_features(Config.from_preset("navigator"))]
    ['coordinates', 'trail', 'meeting_alert']
    >>> list(TRAIL.spaces(Config(coordinates="own", trail_length=3), slots=2))
    ['trail', 'trail_length']
"""

from __future__ import annotations

from typing import Final

from maze_envs.escape.config import Config
from maze_envs.escape.features.base import (
    AgentSlots,
    Computation,
    Feature,
    FeatureContext,
    NumericField,
    Templates,
    agent_slots,
    coordinate_bounds,
    max_distance_tenths,
    template,
)
from maze_envs.escape.features.coordinates import Coordinates
from maze_envs.escape.features.distances import DistanceSensor
from maze_envs.escape.features.meeting import MeetingAlert
from maze_envs.escape.features.radio_symbols import RadioSymbols
from maze_envs.escape.features.trail import Trail
from maze_envs.escape.features.used_exits import UsedExits

__all__ = [
    "COORDINATES",
    "DISTANCES",
    "FEATURES",
    "MEETING_ALERT",
    "RADIO_SYMBOLS",
    "TRAIL",
    "USED_EXITS",
    "AgentSlots",
    "Computation",
    "Feature",
    "FeatureContext",
    "NumericField",
    "Templates",
    "agent_slots",
    "coordinate_bounds",
    "enabled_features",
    "max_distance_tenths",
    "template",
]

DISTANCES: Final = DistanceSensor()
COORDINATES: Final = Coordinates()
TRAIL: Final = Trail()
MEETING_ALERT: Final = MeetingAlert()
USED_EXITS: Final = UsedExits()
RADIO_SYMBOLS: Final = RadioSymbols()
#: Every optional feature, in the order of its keys in every form.
FEATURES: Final[tuple[Feature, ...]] = (
    DISTANCES,
    COORDINATES,
    TRAIL,
    MEETING_ALERT,
    USED_EXITS,
    RADIO_SYMBOLS,
)


_ENABLED: dict[int, tuple[Config, tuple[Feature, ...]]] = {}


def enabled_features(config: Config) -> tuple[Feature, ...]:
    """The features switched on in ``config``, in :data:`FEATURES` order."""
    # by identity (hashing a Config costs more than the answer); the config is kept with its
    # answer, so its id is not reused while the entry lives
    hit = _ENABLED.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    enabled = tuple(feature for feature in FEATURES if feature.enabled(config))
    if len(_ENABLED) >= 256:
        _ENABLED.clear()
    _ENABLED[id(config)] = (config, enabled)
    return enabled
