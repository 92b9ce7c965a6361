"""Reply schemas: fields per setting, the configured order, and that order on the wire."""

from __future__ import annotations

import json

import pytest

from llm_policies.policy import EscapeLLMPolicy
from llm_policies.schema import agimaze_schema, escape_action, escape_schema
from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.types import AppendEdit, Config, SpliceEdit
from maze_envs.policies.interface import EscapeEpisode
from tests.llm.harness_support import FakeBackend


def test_fields_follow_the_notebook_mode_radio_and_check() -> None:
    splice = escape_schema(Config(notebook_mode="splice"))
    assert splice.fields == ("move", "notebook", "radio")
    edit = splice.json_schema["properties"]["notebook"]["anyOf"][0]
    assert list(edit["properties"]) == ["start", "end", "text"]
    assert edit["additionalProperties"] is False and edit["required"] == ["start", "end", "text"]
    log = escape_schema(Config(notebook_mode="rolling_log", radio=False))
    assert log.fields == ("move", "notebook")
    assert log.json_schema["properties"]["notebook"]["anyOf"] == [
        {"type": "string"},
        {"type": "null"},
    ]


def test_check_required_optional() -> None:
    required = escape_schema(Config(), check="required", order="check_first")
    assert required.json_schema["properties"]["check"]["minLength"] == 1
    assert "check" not in required.nullable
    with pytest.raises(ValueError, match="check: String should have at least 1 character"):
        required.validate({"check": "", "move": "N", "notebook": None, "radio": None})
    optional = escape_schema(Config(), check="optional")
    assert "check" in optional.nullable
    assert optional.validate({"move": "N", "notebook": None, "radio": None, "check": None})
    with pytest.raises(ValueError, match="check must be 'off', 'optional' or 'required'"):
        escape_schema(Config(), check="always")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("check_first", ("check", "move", "notebook", "radio")),
        ("move_first", ("move", "notebook", "radio", "check")),
        (("radio", "check", "notebook", "move"), ("radio", "check", "notebook", "move")),
    ],
)
def test_order_is_the_property_order(order: object, expected: tuple[str, ...]) -> None:
    schema = escape_schema(Config(), check="required", order=order)  # type: ignore[arg-type]
    assert schema.fields == expected
    assert tuple(schema.json_schema["properties"]) == expected
    assert schema.json_schema["required"] == list(expected)
    # the text sent in prompted mode keeps it too
    assert list(json.loads(schema.schema_text)["properties"]) == list(expected)


def test_bad_orders_are_refused_with_the_fields_named() -> None:
    with pytest.raises(ValueError, match="it must list each of these fields once"):
        escape_schema(Config(), check="required", order=("move", "check"))
    with pytest.raises(ValueError, match="order must be 'check_first', 'move_first'"):
        escape_schema(Config(), order="alphabetical")  # type: ignore[arg-type]


def test_agimaze_schema_fields_per_history_policy() -> None:
    plain = agimaze_schema(["up", "down"])
    assert plain.fields == ("action",)
    assert plain.json_schema["properties"]["action"]["enum"] == ["up", "down"]
    planning = agimaze_schema(["up"], reasoning=["plan"], order="check_first")
    assert planning.fields == ("plan", "action")
    world = agimaze_schema(["up"], reasoning=["state"], order="move_first", check="optional")
    assert world.fields == ("action", "check", "state")
    with pytest.raises(ValueError, match="needs at least one action name"):
        agimaze_schema([])


def test_values_become_typed_actions() -> None:
    splice = escape_action(
        {"move": "W", "notebook": {"start": 0, "end": 2, "text": "x"}, "radio": ""}
    )
    assert splice.move == "W" and splice.notebook == SpliceEdit(start=0, end=2, text="x")
    assert splice.radio is None
    log = escape_action({"move": "STAY", "notebook": "seen the piano", "radio": "hello"})
    assert log.notebook == AppendEdit(text="seen the piano") and log.radio == "hello"
    assert escape_action({"move": "N", "notebook": None, "radio": None}).notebook is None


@pytest.mark.parametrize("mode", ["tool", "native", "prompted"])
@pytest.mark.parametrize("order", ["check_first", "move_first"])
def test_field_order_reaches_the_backend_unchanged(mode: str, order: str) -> None:
    env = maze_escape_v0.parallel_env(preset="sparse", width=6, height=6)
    observations, _ = env.reset(seed=2)
    backend = FakeBackend([{"check": "N open", "move": "N", "notebook": None, "radio": None}])
    policy = EscapeLLMPolicy(backend, output_mode=mode, check="required", order=order)
    policy.reset(
        "A", 0, EscapeEpisode("maze_envs/MazeEscape-v0", "A", env.config.agents, env.config)
    )
    policy.act(observation_to_model(observations["A"], env.config, "A"))
    request = backend.requests[0]
    expected = ["check", "move", "notebook", "radio"]
    if order == "move_first":
        expected = ["move", "notebook", "radio", "check"]
    assert list(request.schema["properties"]) == expected
    assert request.schema_name == "maze_action" and request.output_mode == mode
    # serialising the request's schema (what a backend puts on the wire) keeps the order
    wire = json.loads(json.dumps(request.schema))
    assert list(wire["properties"]) == expected
    if mode == "prompted":  # the schema text in the prompt has the same order
        start = request.system.index('{"type": "object"')
        shown = json.JSONDecoder().raw_decode(request.system, start)[0]
        assert list(shown["properties"]) == expected
