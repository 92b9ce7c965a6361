"""Every optional observation feature has every form: one declaration, nothing dropped.

For each feature switch of ``Config`` the feature is switched on alone and every form is checked:
its space, the environment's observations (both versions), the typed model and JSON form (and
back), the text a model reads (legend and observation), the numeric observation (every key the
feature adds to the observation is encoded, and has named columns) and the viewer's panel. A
form that lacks the feature is reported by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.config import Config, feature_switches
from maze_envs.escape.convert import observation_from_json, observation_to_json
from maze_envs.escape.features import FEATURES, USED_EXITS, Feature, enabled_features
from maze_envs.escape.spaces import observation_space
from maze_envs.escape.types import Observation
from maze_envs.text import escape_legend, render_escape
from maze_envs.view.escape_data import feature_panels
from wrappers.escape_numeric import EscapeNumericObservation

#: every optional feature off: what each feature is compared against
ALL_OFF: dict[str, Any] = {
    "distance_sensor": False,
    "coordinates": None,
    "trail_length": 0,
    "meeting_alert": False,
    "used_exits": False,
    "radio_symbols": 0,
}
SMALL: dict[str, Any] = {"width": 6, "height": 5, "max_turns": 20}
STAY = {"move": 4, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}


def played(module: Any, config: Config) -> tuple[Any, list[dict[str, Any]]]:
    """The env and its observations of a few turns (all agents moving east, then staying;
    with radio symbols, A sends symbol 1 on the first turn)."""
    env = module.parallel_env(config=config)
    observations, _ = env.reset(seed=2)
    seen = [observations]
    for turn, move in enumerate((1, 1, 4)):
        action = {**STAY, "move": move}
        if config.radio_symbols:
            action["radio_symbol"] = 0
        actions = {a: dict(action) for a in env.agents}
        if config.radio_symbols and turn == 0:
            actions["A"]["radio_symbol"] = 1
        observations, *_ = env.step(actions)
        seen.append(observations)
    return env, seen


def missing_forms(feature: Feature) -> list[str]:
    """The forms of the observation that lack ``feature`` (switched on alone)."""
    on = Config(**SMALL, **{**ALL_OFF, **feature.example})
    # the same game with this feature's switch off (the others it needs stay on)
    off = Config(**SMALL, **{**ALL_OFF, **feature.example, feature.switch: ALL_OFF[feature.switch]})
    missing: list[str] = []
    if not feature.enabled(on) or feature.enabled(off) or feature.switch not in feature.example:
        missing.append("switch")
    space, space_off = observation_space(on, "A", 1), observation_space(off, "A", 1)
    if not set(feature.keys) <= set(space.spaces) - set(space_off.spaces):
        missing.append("space")
    for module in (maze_escape_v0, maze_escape_v1):
        env, turns = played(module, on)
        if not all(
            set(feature.keys) <= set(obs) and env.observation_space(a).contains(obs)
            for observations in turns
            for a, obs in observations.items()
        ):
            missing.append(f"observation (v{env.version})")
    env, turns = played(maze_escape_v1, on)
    last = turns[-1]["B"]
    model = Observation.from_space(last, on, "B")
    data = observation_to_json(last, on, "B")
    if any(getattr(model, name) is None for name in feature.fields) or not feature.fields:
        missing.append("typed model")
    if any(data.get(name) is None for name in feature.fields):
        missing.append("JSON form")
    back = observation_from_json(data, on, "B", version=1)
    if not all(np.array_equal(back[key], last[key]) for key in feature.keys):
        missing.append("JSON form back to the observation")
    model_off = Observation.from_space(played(maze_escape_v1, off)[1][-1]["B"], off, "B")
    text, text_off = render_escape(model, on), render_escape(model_off, off)
    if not set(text.splitlines()) - set(text_off.splitlines()):
        missing.append("text")
    if len(escape_legend(on).splitlines()) != len(escape_legend(off).splitlines()) + 1:
        missing.append("text legend")
    numeric = EscapeNumericObservation(maze_escape_v1.parallel_env(config=on), text="hash")
    numeric_off = EscapeNumericObservation(maze_escape_v1.parallel_env(config=off), text="hash")
    added = [f for f in numeric.numeric_fields if f.key not in numeric_off.fields]
    read = {s for f in added for s in ((f.source,) if isinstance(f.source, str) else f.source)}
    names = len(numeric.feature_names()) - len(numeric_off.feature_names())
    if not added or not set(feature.keys) <= read or names <= 0:
        missing.append("numeric")
    observations, _ = numeric.reset(seed=2)
    if not numeric.observation_space("A").contains(observations["A"]):
        missing.append("numeric space")
    if not feature_panels(data, on):
        missing.append("viewer")
    return missing


def test_every_feature_switch_has_a_declaration() -> None:
    assert [f.switch for f in FEATURES] == feature_switches()
    assert len({f.name for f in FEATURES}) == len(FEATURES)


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.name)
def test_every_form_has_the_feature(feature: Feature) -> None:
    assert missing_forms(feature) == [], f"{feature.name} lacks a form"


def test_every_feature_on_at_once_is_every_key() -> None:
    config = Config.from_preset("full", **SMALL, radio_symbols=3)
    assert enabled_features(config) == FEATURES
    _, turns = played(maze_escape_v1, config)
    keys = list(turns[-1]["A"])
    assert keys[-sum(len(f.keys) for f in FEATURES) :] == [k for f in FEATURES for k in f.keys]


def test_a_form_that_drops_the_feature_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a feature whose numeric form and panel are missing is reported."""
    monkeypatch.setattr(USED_EXITS, "numeric", lambda config, slots: [])
    monkeypatch.setattr(USED_EXITS, "panel", lambda data, config: [])
    assert missing_forms(USED_EXITS) == ["numeric", "viewer"]


def test_a_feature_without_a_text_line_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(USED_EXITS, "text", lambda obs, label: [])
    assert missing_forms(USED_EXITS) == ["text"]
