"""Spaces tell the truth; invalid actions raise before any change; conversions are lossless."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.convert import (
    action_from_model,
    action_to_model,
    observation_from_json,
    observation_from_model,
    observation_to_json,
    observation_to_model,
)
from maze_envs.escape.spaces import Utf8Text
from maze_envs.escape.types import Action, AppendEdit, Observation, SpliceEdit
from tests.escape.boards import act, comb_env, log_act

FULL = {"preset": "full", "width": 7, "height": 6, "max_turns": 60}


def _hand_made(rng: np.random.Generator, splice: bool, t: int) -> dict[str, Any]:
    """Edits and radio messages that exercise applied and rejected paths, multi-byte included."""
    text = ["note", "é→★" * int(rng.integers(0, 400)), "", "x" * 1100][t % 4]
    radio = ["", "hi 🙂", "y" * 300][t % 3]
    move = int(rng.integers(5))
    if splice:
        start = int(rng.integers(0, 30))
        return act(move, edit=(start, start + int(rng.integers(0, 5)), text), radio=radio)
    return log_act(move, append=text, radio=radio)


@pytest.mark.parametrize("mode", ["splice", "rolling_log"])
def test_every_observation_is_in_its_space_under_random_and_hand_made_play(mode: str) -> None:
    env = maze_escape_v0.parallel_env(notebook_mode=mode, **FULL)
    rng = np.random.default_rng(1)
    for game in range(3):
        obs, _ = env.reset(seed=game)
        for agent in env.agents:
            env.action_space(agent).seed(game)
        t = 0
        while env.agents:
            for agent, o in obs.items():
                assert env.observation_space(agent).contains(o), (agent, o)
            if t % 2:
                actions = {a: env.action_space(a).sample() for a in env.agents}
            else:
                actions = {
                    a: _hand_made(rng, mode == "splice", t + i) for i, a in enumerate(env.agents)
                }
            for agent, action in actions.items():
                assert env.action_space(agent).contains(action)
            obs, *_ = env.step(actions)
            t += 1
        for agent, o in obs.items():
            assert env.observation_space(agent).contains(o)


def test_spaces_are_cached_and_distinct_per_agent() -> None:
    env = maze_escape_v0.parallel_env(**FULL)
    assert env.observation_space("A") is env.observation_space("A")
    assert env.action_space("B") is env.action_space("B")
    assert env.action_space("A") is not env.action_space("B")  # seeding one leaves the others


def test_observations_never_alias_the_state() -> None:
    env = maze_escape_v0.parallel_env(**FULL)
    obs, _ = env.reset(seed=3)
    digest = env.state_digest()
    for value in obs["A"].values():
        if isinstance(value, np.ndarray):
            with contextlib.suppress(ValueError):  # read-only arrays: nobody can change them
                value += 1
    obs["A"]["radio"]["B"] = "forged"
    obs["A"]["teammate_notebooks"]["B"]["text"] = "forged"
    assert env.state_digest() == digest
    again, *_ = env.step({a: env.action_space(a).sample() for a in env.agents})
    assert again["A"]["radio"]["B"] != "forged"


def test_utf8_text_space_counts_bytes_and_rejects_non_text() -> None:
    space = Utf8Text(4)
    assert space.contains("éé") and space.contains("🙂") and space.contains("")
    assert not space.contains("ééx") and not space.contains(b"ab") and not space.contains(3)
    assert not space.contains("\ud800")  # a lone surrogate is not UTF-8
    space.seed(0)
    assert all(space.contains(space.sample()) for _ in range(200))


BAD_ACTIONS = [
    ("not a dict", "an action is a dict"),
    ({"move": 0, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}}, "exactly the keys"),
    ({**act(), "extra": 1}, "exactly the keys"),
    ({**act(), "move": 5}, "move must be an integer 0..4"),
    ({**act(), "move": "N"}, "move must be an integer 0..4"),
    ({**act(), "move": -1}, "move must be an integer 0..4"),
    ({**act(), "move": 1.0}, "move must be an integer 0..4"),
    ({**act(), "notebook": {"append": "x"}}, "notebook must be a dict"),
    ({**act(), "notebook": {"edit": 1, "start": -1, "end": 0, "text": ""}}, "start/end integers"),
    ({**act(), "notebook": {"edit": 2, "start": 0, "end": 0, "text": ""}}, "0 or 1"),
    ({**act(), "notebook": {"edit": 1, "start": 0, "end": 0, "text": None}}, "must be a str"),
    ({**act(), "radio": None}, "radio must be a str"),
    ({**act(), "radio": "x" * 65537}, "at most 65536 bytes"),
    ({**act(), "radio": "\udcff"}, "not valid UTF-8"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_ACTIONS)
def test_invalid_actions_raise_naming_the_agent_before_any_change(bad: Any, message: str) -> None:
    env = comb_env()
    env.reset(seed=0)
    before = env.state_digest()
    with pytest.raises(ValueError, match=message) as raised:
        env.step({"A": act(0), "B": bad, "C": act(0, edit=(0, 0, "x"), radio="hi")})
    assert "agent B" in str(raised.value)
    assert env.state_digest() == before
    assert not env.action_space("B").contains(bad)
    obs, *_ = env.step({a: act(0) for a in env.agents})  # the game goes on
    assert obs["A"]["turn"] == 1


def test_missing_or_unknown_agents_raise() -> None:
    env = comb_env()
    env.reset(seed=0)
    before = env.state_digest()
    with pytest.raises(ValueError, match="one action for each of"):
        env.step({"A": act(), "B": act()})
    with pytest.raises(ValueError, match="one action for each of"):
        env.step({"A": act(), "B": act(), "C": act(), "D": act()})
    assert env.state_digest() == before


def test_rolling_log_needs_append_actions() -> None:
    env = comb_env(notebook_mode="rolling_log")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="rolling_log mode"):
        env.step({a: act() for a in env.agents})


def test_numpy_integers_are_accepted() -> None:
    env = comb_env()
    env.reset(seed=0)
    _obs, *_, infos = env.step({a: {**act(), "move": np.int64(0)} for a in env.agents})
    assert infos["A"]["row_col"] == (3, 4)


def test_typed_actions_are_accepted_and_round_trip() -> None:
    env = comb_env()
    env.reset(seed=0)
    typed = Action(move="N", notebook=SpliceEdit(start=0, end=0, text="hi"), radio="hello")
    obs, *_ = env.step({"A": typed, "B": Action(), "C": Action(move="S")})
    assert obs["A"]["notebook"] == "hi" and obs["B"]["radio"]["A"] == "hello"
    config = env.config
    for model in (typed, Action(), Action(move="W", radio="r")):
        assert action_to_model(action_from_model(model, config), config) == model
    rolling = comb_env(notebook_mode="rolling_log").config
    appended = Action(move="E", notebook=AppendEdit(text="line"))
    assert action_to_model(action_from_model(appended, rolling), rolling) == appended
    with pytest.raises(ValueError, match="rolling log"):
        action_from_model(typed, rolling)
    with pytest.raises(ValueError, match="splice edits"):
        action_from_model(appended, config)
    assert Action.from_space(typed.to_space(config), config) == typed


def test_model_methods_match_the_conversion_functions() -> None:
    env = maze_escape_v0.parallel_env(**FULL)
    obs, _ = env.reset(seed=4)
    model = Observation.from_space(obs["B"], env.config, "B")
    assert model == observation_to_model(obs["B"], env.config, "B")
    assert _same(model.to_space(env.config, "B"), obs["B"])


@pytest.mark.parametrize("preset", ["sparse", "navigator", "shared_frame", "full"])
def test_observation_conversions_are_lossless(preset: str) -> None:
    env = maze_escape_v0.parallel_env(preset=preset, width=6, height=6, max_turns=40)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=5)
    splice = env.config.notebook_mode == "splice"
    for t in range(40):
        for agent, o in obs.items():
            data = observation_to_json(o, env.config, agent)
            model = observation_to_model(o, env.config, agent)
            assert model.model_dump(mode="json") == data  # the JSON form is the model's dump
            assert Observation.model_validate_json(model.model_dump_json()) == model
            back = observation_from_model(model, env.config, agent)
            assert env.observation_space(agent).contains(back)
            assert _same(back, o), (agent, back, o)
            assert _same(observation_from_json(data, env.config, agent), o)
            # Action round trip through the typed model as well.
        if not env.agents:
            break
        actions = {a: _hand_made(rng, splice, t + i) for i, a in enumerate(env.agents)}
        for agent, action in actions.items():
            model_action = action_to_model(action, env.config, agent)
            assert action_from_model(model_action, env.config) == _canonical(action)
        obs, *_ = env.step(actions)


def _canonical(action: dict[str, Any]) -> dict[str, Any]:
    notebook = action["notebook"]
    if "edit" in notebook and not notebook["edit"]:
        notebook = {"edit": 0, "start": 0, "end": 0, "text": ""}
    return {**action, "notebook": notebook}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("preset", ["sparse", "navigator", "shared_frame", "full"])
@pytest.mark.parametrize("module", [maze_escape_v0, maze_escape_v1])
def test_from_space_of_space_samples_equals_the_validated_model(preset: str, module: Any) -> None:
    """Observation.from_space builds the model without validating again; it must be the very
    model that validating the JSON form gives, for any member of the space."""
    env = module.parallel_env(preset=preset, width=7, height=6, num_agents=3)
    for agent in env.possible_agents:
        space = env.observation_space(agent)
        space.seed(11)
        for _ in range(40):
            sample = space.sample()
            built = Observation.from_space(sample, env.config, agent)
            checked = Observation.model_validate(observation_to_json(sample, env.config, agent))
            assert built == checked
            assert built.model_dump_json() == checked.model_dump_json()
            assert built.model_fields_set == checked.model_fields_set
            copy = built.model_copy(update={"turn": 7})  # a built model behaves like any other
            assert copy.turn == 7 and built.turn == checked.turn


def test_from_space_refuses_a_dict_outside_the_layout() -> None:
    env = maze_escape_v1.parallel_env(preset="full", width=7, height=6)
    obs, _ = env.reset(seed=1)
    broken = {**obs["A"], "last_action": {}}
    with pytest.raises(ValueError, match="not an observation of agent A"):
        Observation.from_space(broken, env.config, "A")
    with pytest.raises(ValueError, match="not an observation of agent A"):
        Observation.from_space({k: v for k, v in obs["A"].items() if k != "trail"}, env.config, "A")
