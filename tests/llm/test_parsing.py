"""Every quirk rule of the reply parser: what it accepts, what it yields, that it is counted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_policies.parsing import QUIRKS, parse_reply
from llm_policies.schema import agimaze_schema, escape_schema
from maze_envs.escape.types import Config

SPLICE = escape_schema(Config(notebook_mode="splice"), check="optional")
LOG = escape_schema(Config(notebook_mode="rolling_log"))
AGI = agimaze_schema(["up", "down", "left", "right"], reasoning=["plan"])


def text(reply: str, schema: Any = SPLICE, mode: str = "prompted") -> Any:
    return parse_reply(reply, None, schema, mode)  # type: ignore[arg-type]


def test_clean_tool_reply_has_no_quirks() -> None:
    args = json.dumps({"move": "E", "notebook": None, "radio": None, "check": None})
    result = parse_reply(None, args, SPLICE, "tool")
    assert result.values == {"move": "E", "notebook": None, "radio": None, "check": None}
    assert result.quirks == {} and result.error is None and result.source == "tool"


def test_json_as_text_when_a_tool_call_was_expected() -> None:
    result = parse_reply(
        '{"move": "S", "notebook": null, "radio": null, "check": null}', None, SPLICE, "tool"
    )
    assert result.values is not None and result.values["move"] == "S"
    assert result.quirks == {"json_as_text": 1} and result.source == "text"


def test_tool_call_when_text_was_expected() -> None:
    args = '{"move": "W", "notebook": null, "radio": null, "check": null}'
    result = parse_reply(None, args, SPLICE, "native")
    assert result.values is not None and result.values["move"] == "W"
    assert result.quirks == {"tool_call_as_text_mode": 1}


def test_code_fence_and_prose_around_it() -> None:
    reply = (
        'Here you go:\n```json\n{"move": "N", "notebook": null, "radio": null, "check": null}'
        "\n```\nGood luck!"
    )
    result = text(reply)
    assert result.values is not None and result.values["move"] == "N"
    assert result.quirks == {"code_fence": 1, "leading_prose": 1, "trailing_prose": 1}


def test_trailing_prose_after_the_object() -> None:
    result = text(
        '{"move": "E", "notebook": null, "radio": null, "check": null} '
        "I go east because N is a wall."
    )
    assert result.values is not None and result.values["move"] == "E"
    assert result.quirks == {"trailing_prose": 1}


def test_schema_keys_copied_into_the_reply_are_dropped_and_counted() -> None:
    reply = json.dumps(
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["move"],
            "move": "S",
            "notebook": None,
            "radio": None,
            "check": None,
        }
    )
    result = text(reply)
    assert result.values == {"move": "S", "notebook": None, "radio": None, "check": None}
    assert result.quirks == {"schema_keys": 1}  # one count per reply, however many keys


def test_values_nested_under_properties_are_unwrapped() -> None:
    reply = json.dumps(
        {
            "type": "object",
            "properties": {"move": "W", "notebook": None, "radio": None, "check": None},
        }
    )
    result = text(reply)
    assert result.values is not None and result.values["move"] == "W"
    assert result.quirks == {"schema_keys": 1}  # the wrapper and its "type": one reply


def test_a_copied_schema_without_values_is_an_error() -> None:
    result = text(json.dumps(SPLICE.json_schema))
    assert result.values is None
    assert result.error == "the reply repeats the JSON schema instead of giving values"


@pytest.mark.parametrize("literal", ["null", "None", "", "NULL", " none "])
def test_null_literals_mean_no_message_and_no_edit(literal: str) -> None:
    result = text(json.dumps({"move": "N", "notebook": literal, "radio": literal}), schema=LOG)
    assert result.values == {"move": "N", "notebook": None, "radio": None}
    assert result.quirks == {"null_string": 1}  # two fields, one reply


def test_a_splice_writing_the_word_null_is_no_edit() -> None:
    edit = {"start": 0, "end": 40, "text": "null"}
    result = text(json.dumps({"move": "N", "notebook": edit, "radio": None, "check": None}))
    assert result.values is not None and result.values["notebook"] is None
    assert result.quirks == {"null_string": 1}


def test_a_splice_deleting_text_is_kept() -> None:
    edit = {"start": 3, "end": 9, "text": ""}
    result = text(json.dumps({"move": "N", "notebook": edit, "radio": None, "check": None}))
    assert result.values is not None and result.values["notebook"] == edit
    assert result.quirks == {}


def test_keys_in_any_order_are_accepted_and_the_order_recorded() -> None:
    result = text(json.dumps({"radio": None, "check": "N wall", "notebook": None, "move": "E"}))
    assert result.values == {"move": "E", "notebook": None, "radio": None, "check": "N wall"}
    assert result.quirks == {"key_order": 1}


@pytest.mark.parametrize(
    ("move", "expected", "quirk"),
    [
        ("n", "N", "move_case"),
        ("Stay", "STAY", "move_case"),
        ("north", "N", "move_spelled_out"),
        ("West", "W", "move_spelled_out"),
        ("STAY", "STAY", None),
    ],
)
def test_moves_in_lower_case_or_spelled_out(move: str, expected: str, quirk: str | None) -> None:
    result = text(json.dumps({"move": move, "notebook": None, "radio": None}), schema=LOG)
    assert result.values is not None and result.values["move"] == expected
    assert result.quirks == ({quirk: 1} if quirk else {})


def test_an_unknown_move_is_an_error_with_a_reason() -> None:
    result = text(json.dumps({"move": "up", "notebook": None, "radio": None}), schema=LOG)
    assert result.values is None
    assert result.error is not None and result.error.startswith("move: Input should be 'N', 'E'")


def test_double_encoded_python_literal_and_list_wrapped() -> None:
    inner = json.dumps({"move": "S", "notebook": None, "radio": None})
    assert text(json.dumps(inner), schema=LOG).quirks == {"double_encoded": 1}
    literal = text("{'move': 'S', 'notebook': None, 'radio': None}", schema=LOG)
    assert literal.values is not None and literal.quirks == {"python_literal": 1}
    wrapped = text("[" + inner + "]", schema=LOG)
    assert wrapped.values is not None and wrapped.quirks == {"list_wrapped": 1}


def test_key_case_extra_keys_missing_fields_and_numbers_as_strings() -> None:
    reply = json.dumps(
        {"Move": "E", "notebook": {"start": "0", "end": "0", "text": "x"}, "reasoning": "..."}
    )
    result = text(reply)
    assert result.values == {
        "move": "E",
        "notebook": {"start": 0, "end": 0, "text": "x"},
        "radio": None,
        "check": None,
    }
    # each kind once per reply: two missing fields and two numbers as strings count once each
    assert result.quirks == {
        "key_case": 1,
        "extra_keys": 1,
        "missing_field": 1,
        "number_as_string": 1,
    }


def test_agimaze_action_case_and_api_object() -> None:
    upper = parse_reply('{"plan": "p", "action": "UP"}', None, AGI, "native")
    assert upper.values == {"plan": "p", "action": "up"} and upper.quirks == {"action_case": 1}
    nested = parse_reply('{"plan": "p", "action": {"id": "left"}}', None, AGI, "native")
    assert nested.values is not None and nested.values["action"] == "left"
    assert nested.quirks == {"action_object": 1}
    bare = parse_reply('{"plan": "p", "id": "down"}', None, AGI, "native")
    assert bare.values is not None and bare.values["action"] == "down"
    assert bare.quirks == {"action_object": 1}


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I will go north.", "the reply holds no JSON object"),
        ('{"move": "N", ', "the reply's JSON is malformed"),
        ("[1, 2]", "the reply is a JSON list, not an object"),
        ("   ", "the reply is empty"),
    ],
)
def test_unusable_replies_give_a_reason_and_never_raise(reply: str, error: str) -> None:
    result = text(reply, schema=LOG)
    assert result.values is None and result.error == error


def test_tool_mode_without_a_call_or_json() -> None:
    result = parse_reply("Sorry, I cannot help.", None, LOG, "tool")
    assert result.values is None and result.error == "no tool call and no JSON in the reply"


def test_json_inside_a_think_block_is_ignored_and_the_replys_own_json_taken() -> None:
    reply = (
        '<think>Maybe {"move": "S"}? No, the south side is a wall.</think>\n'
        '{"move": "N", "notebook": null, "radio": null}'
    )
    result = text(reply, schema=LOG)
    assert result.values == {"move": "N", "notebook": None, "radio": None}
    assert result.quirks == {"think_block": 1}


def test_a_reply_with_json_only_inside_a_think_block_is_unusable() -> None:
    result = text('<think>{"move": "S", "notebook": null, "radio": null}</think>', schema=LOG)
    assert result.values is None and "only a <think> block" in (result.error or "")
    unclosed = text('<think>{"move": "S"} and then I ran out of tokens', schema=LOG)
    assert unclosed.values is None and unclosed.quirks == {"think_block": 1}


def test_an_out_of_range_edit_is_rejected_and_the_move_kept() -> None:
    # llama.cpp's grammar does not enforce "maximum": a splice position far beyond the action
    # space, with a valid move, is the move played and the edit rejected with its reason
    reply = json.dumps(
        {"move": "E", "notebook": {"start": 107654328946, "end": 3, "text": "x"}, "radio": "hi"}
    )
    result = text(reply)
    assert result.error is None and result.values is not None
    assert result.values["move"] == "E" and result.values["notebook"] is None
    assert result.values["radio"] == "hi"
    assert result.quirks == {"rejected_edit": 1, "missing_field": 1}
    assert result.rejected == {
        "notebook": "notebook.start: Input should be less than or equal to 65536"
    }


def test_a_bad_move_is_never_salvaged() -> None:
    reply = json.dumps({"move": "UP", "notebook": {"start": 10**12, "end": 0, "text": ""}})
    result = text(reply)
    assert result.values is None and result.rejected == {}
    assert result.error is not None and result.error.startswith("move:")
    # a required reasoning field is no edit either: the reply is unusable, not salvaged
    required = escape_schema(Config(notebook_mode="splice"), check="required")
    missing = text(json.dumps({"move": "N", "notebook": None, "radio": None}), schema=required)
    assert missing.values is None and missing.error is not None


def test_quirks_count_once_per_reply_and_kind() -> None:
    reply = json.dumps({"move": "n", "a": 1, "b": 2, "c": 3, "notebook": "null", "radio": ""})
    result = text(reply, schema=LOG)
    assert result.values == {"move": "N", "notebook": None, "radio": None}
    assert result.quirks == {"extra_keys": 1, "null_string": 1, "move_case": 1}


def test_every_quirk_rule_is_documented_and_tested_here() -> None:
    with open(__file__, encoding="utf-8") as handle:
        source = handle.read()
    for name, reason in QUIRKS.items():
        assert reason, name
        assert f'"{name}"' in source, f"quirk {name} has no test"


def test_unknown_output_mode_is_refused() -> None:
    modes = "output mode must be one of tool, native, grammar, json_object, prompted"
    with pytest.raises(ValueError, match=modes):
        parse_reply("{}", None, LOG, "xml")  # type: ignore[arg-type]


def test_docs_list_every_quirk_rule() -> None:
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text(encoding="utf-8")
    for name in QUIRKS:
        assert f"`{name}`" in docs, f"docs/llm.md does not describe the quirk rule {name}"
