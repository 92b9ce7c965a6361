"""Turning a model's raw reply into reply values: named, counted quirk rules.

Models answer in many slightly wrong ways; the study behind Maze Escape lost whole games to a
strict parser and to silent acceptance alike. Every tolerance here is an explicit rule with a
name and a reason (:data:`QUIRKS`), and every time one fires it is counted in the result, which
the policy stores in the decision record and the results table sums. Anything else wrong is an
error with a short reason, which the policy feeds back to the model on a retry.

The reply arrives as :class:`~llm_policies.backends.base.ModelReply` text and/or the raw
arguments of a tool call (this module never calls a model, and never trusts a provider's own
output validation: it sees exactly what was sent).

Example:
    >>> from maze_envs.escape.types import Config
    >>> from llm_policies.schema import escape_schema
    >>> schema = escape_schema(Config())
    >>> result = parse_reply('```json\\n{"move": "north", "radio": "null"}\\n```', None, schema,
    ...                      "prompted")
    >>> result.values["move"], result.values["radio"], sorted(result.quirks)
    ('N', None, ['code_fence', 'missing_field', 'move_spelled_out', 'null_string'])
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from llm_policies.schema import ReplySchema
from llm_policies.settings import OUTPUT_MODES, OutputMode

__all__ = ["OUTPUT_MODES", "QUIRKS", "OutputMode", "ParseResult", "QuirkName", "parse_reply"]

#: Every quirk rule, with the reason it exists. Counted per occurrence in :class:`ParseResult`.
QUIRKS: Final[dict[str, str]] = {
    "json_as_text": "a tool call was expected but the JSON came as plain text (seen with MiMo; "
    "rejecting it cost one game 99 turns)",
    "tool_call_as_text_mode": "plain JSON text was expected but the reply was a tool call",
    "code_fence": "the JSON was wrapped in a Markdown code fence",
    "leading_prose": "text before the JSON object",
    "trailing_prose": "text after the JSON object",
    "think_block": "reasoning in a <think>...</think> block before the answer (ignored, JSON "
    "inside it included: the reply's own JSON is the one after it)",
    "double_encoded": "the JSON object arrived as a JSON string holding JSON",
    "python_literal": "a Python dict literal (single quotes, None/True) instead of JSON",
    "list_wrapped": "the object arrived inside a one-element list",
    "schema_keys": "keys copied from the JSON schema (additionalProperties, type, properties, "
    "required...) into the reply; values nested under properties are unwrapped",
    "key_case": "a field name in the wrong letter case",
    "extra_keys": "a key that is not a field of the schema (dropped)",
    "key_order": "fields in another order than the schema's (accepted; recorded because the "
    "order the model writes them in can change what it decides)",
    "missing_field": "a field that may be null was left out (read as null)",
    "null_string": 'the literal text "null", "None" or "" meaning nothing: no notebook edit, no '
    "radio message (never written into a notebook or onto the radio)",
    "number_as_string": "a number written as a string (a splice position)",
    "move_case": "a move in the wrong letter case (n, Stay)",
    "move_spelled_out": "a move spelled out (north, east, south, west, stay)",
    "action_case": "an AGI Maze action id in the wrong letter case (UP)",
    "action_object": 'an AGI Maze action given as the API\'s object {"id": "up"}',
    "rejected_edit": "a notebook edit or radio message the action space cannot hold (a splice "
    "position of 107654328946, which llama.cpp's grammar lets through: it does not enforce "
    "maximum): the move is kept and the edit rejected with its reason, as the environment "
    "rejects a splice past the notebook's text",
}
QuirkName = Literal[
    "json_as_text",
    "tool_call_as_text_mode",
    "code_fence",
    "leading_prose",
    "trailing_prose",
    "think_block",
    "double_encoded",
    "python_literal",
    "list_wrapped",
    "schema_keys",
    "key_case",
    "extra_keys",
    "key_order",
    "missing_field",
    "null_string",
    "number_as_string",
    "move_case",
    "move_spelled_out",
    "action_case",
    "action_object",
    "rejected_edit",
]

SCHEMA_KEYS: Final = (
    "additionalProperties",
    "type",
    "properties",
    "required",
    "$schema",
    "$defs",
    "title",
    "description",
)
NULL_LITERALS: Final = frozenset({"null", "none", "nil", ""})
MOVE_WORDS: Final[dict[str, str]] = {
    "north": "N",
    "east": "E",
    "south": "S",
    "west": "W",
    "stay": "STAY",
}
_FENCE: Final = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
# a reasoning block (DeepSeek-R1, Qwen3, SmolLM3...); an unclosed one runs to the end of the text
_THINK: Final = re.compile(r"<(think|thinking)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)


@dataclass
class ParseResult:
    """The reply values (``None`` when unusable), the quirks that fired, and the error.

    ``quirks`` counts each kind once per reply (``{"extra_keys": 1}`` however many extra keys
    it had): the results sum replies that needed a rule, not occurrences inside one reply.
    ``rejected``: edits beside the action that were left out, with why (``rejected_edit``).
    """

    values: dict[str, Any] | None
    quirks: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    source: Literal["tool", "text", "none"] = "none"
    rejected: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.values is not None


class _Unusable(Exception):
    """The reply cannot be turned into values; the message says why."""


def _is_null(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in NULL_LITERALS


def _json_object_at(text: str, quirks: Counter[str]) -> Any:
    """The first JSON (or Python-literal) object in ``text``, counting prose around it."""
    start = text.find("{")
    list_start = text.find("[")
    if 0 <= list_start < start and not text[list_start + 1 : start].strip():
        start = list_start  # a list holding the object: "[{...}]"
    if start == -1:
        raise _Unusable("the reply holds no JSON object")
    decoder = json.JSONDecoder()
    try:
        value, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError:
        value, end = _python_literal(text, start, quirks)
    if text[:start].strip():
        quirks["leading_prose"] += 1
    if text[end:].strip():
        quirks["trailing_prose"] += 1
    return value


def _python_literal(text: str, start: int, quirks: Counter[str]) -> tuple[Any, int]:
    # the longest balanced-looking candidate first: up to each closing brace, last one first
    closers = [i for i, ch in enumerate(text) if ch in "}]" and i > start]
    for end in reversed(closers):
        try:
            value = ast.literal_eval(text[start : end + 1])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict | list):
            quirks["python_literal"] += 1
            return value, end + 1
    raise _Unusable("the reply's JSON is malformed")


def _without_thinking(raw: str, quirks: Counter[str]) -> str:
    """``raw`` without its ``<think>...</think>`` blocks (JSON inside them is not the reply)."""
    if "<think" not in raw.lower():
        return raw
    text, n = _THINK.subn("", raw)
    if n:
        quirks["think_block"] += 1
        if not text.strip():
            raise _Unusable(
                "the reply holds only a <think> block; the JSON object must come after it"
            )
    return text


def _decode(raw: str, quirks: Counter[str]) -> Any:
    text = raw.strip()
    fenced = _FENCE.search(text)
    if fenced:
        quirks["code_fence"] += 1
        if text[: fenced.start()].strip():
            quirks["leading_prose"] += 1
        if text[fenced.end() :].strip():
            quirks["trailing_prose"] += 1
        text = fenced.group(1).strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = _json_object_at(text, quirks)
    if isinstance(value, str):
        inner = value.strip()
        if inner.startswith(("{", "[")):
            quirks["double_encoded"] += 1
            return _decode(inner, quirks)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        quirks["list_wrapped"] += 1
        value = value[0]
    if not isinstance(value, dict):
        raise _Unusable(f"the reply is a JSON {type(value).__name__}, not an object")
    return value


def _strip_schema_keys(obj: dict[str, Any], schema: ReplySchema, quirks: Counter[str]) -> dict:
    fields = set(schema.fields)
    nested = obj.get("properties")
    if isinstance(nested, dict) and not fields & set(obj) and fields & set(nested):
        if any(isinstance(v, dict) and "type" in v for v in nested.values()):
            raise _Unusable("the reply repeats the JSON schema instead of giving values")
        quirks["schema_keys"] += sum(1 for k in obj if k in SCHEMA_KEYS)
        rest = {k: v for k, v in obj.items() if k not in SCHEMA_KEYS}
        obj = {**nested, **rest}
    out = {}
    for key, value in obj.items():
        if key in SCHEMA_KEYS and key not in fields:
            quirks["schema_keys"] += 1
            continue
        out[key] = value
    return out


def _normalise_keys(obj: dict[str, Any], schema: ReplySchema, quirks: Counter[str]) -> dict:
    by_lower = {f.lower(): f for f in schema.fields}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = key
        if key not in schema.fields and isinstance(key, str) and key.lower() in by_lower:
            name = by_lower[key.lower()]
            quirks["key_case"] += 1
        if name not in schema.fields:
            if schema.action_field == "action" and name == "id" and "action" not in obj:
                quirks["action_object"] += 1
                name = "action"
            else:
                quirks["extra_keys"] += 1
                continue
        out[name] = value
    present = [f for f in out if f in schema.fields]
    if present != [f for f in schema.fields if f in out]:
        quirks["key_order"] += 1
    for name in schema.fields:
        if name not in out and name in schema.nullable:
            quirks["missing_field"] += 1
            out[name] = None
    return {f: out[f] for f in schema.fields if f in out}


def _normalise_values(obj: dict[str, Any], schema: ReplySchema, quirks: Counter[str]) -> None:
    for name in schema.nullable:
        value = obj.get(name)
        if _is_null(value):
            quirks["null_string"] += 1
            obj[name] = None
        elif isinstance(value, dict) and name == "notebook":
            if _is_null(value.get("text")) and value.get("text") != "":
                # a splice whose text is "null" would write the word into the notebook
                quirks["null_string"] += 1
                obj[name] = None
                continue
            for pos in ("start", "end"):
                raw = value.get(pos)
                if isinstance(raw, str) and raw.strip().isdigit():
                    quirks["number_as_string"] += 1
                    value[pos] = int(raw.strip())
    if schema.action_field == "move":
        _normalise_move(obj, quirks)
    else:
        _normalise_action(obj, schema, quirks)


def _normalise_move(obj: dict[str, Any], quirks: Counter[str]) -> None:
    move = obj.get("move")
    if not isinstance(move, str):
        return
    word = move.strip()
    upper = word.upper()
    if upper in ("N", "E", "S", "W", "STAY"):
        if word != upper:
            quirks["move_case"] += 1
        obj["move"] = upper
    elif word.lower() in MOVE_WORDS:
        quirks["move_spelled_out"] += 1
        obj["move"] = MOVE_WORDS[word.lower()]


def _normalise_action(obj: dict[str, Any], schema: ReplySchema, quirks: Counter[str]) -> None:
    action = obj.get("action")
    if isinstance(action, dict) and set(action) == {"id"}:
        quirks["action_object"] += 1
        action = obj["action"] = action["id"]
    if not isinstance(action, str):
        return
    allowed = schema.enums.get("action", ())
    if action in allowed:
        return
    by_lower = {a.lower(): a for a in allowed}
    word = action.strip().lower()
    if word in by_lower:
        quirks["action_case"] += 1
        obj["action"] = by_lower[word]


def parse_reply(
    text: str | None,
    tool_arguments: str | None,
    schema: ReplySchema,
    mode: OutputMode,
) -> ParseResult:
    """Reply values from a raw reply: ``text`` and/or the raw arguments of a tool call.

    In ``tool`` mode the tool arguments are read, or else JSON found in the text
    (``json_as_text``); in the text modes (``native``, ``json_object``, ``prompted``) the text, or
    else tool arguments (``tool_call_as_text_mode``). A ``<think>...</think>`` block is dropped
    first (``think_block``). Never raises for a bad reply: the result carries the error.
    """
    if mode not in OUTPUT_MODES:
        raise ValueError(f"output mode must be one of {', '.join(OUTPUT_MODES)}, got {mode!r}")
    quirks: Counter[str] = Counter()
    source: Literal["tool", "text", "none"]
    if mode == "tool":
        if tool_arguments is not None:
            raw, source = tool_arguments, "tool"
        elif text and ("{" in text):
            quirks["json_as_text"] += 1
            raw, source = text, "text"
        else:
            return ParseResult(None, {}, "no tool call and no JSON in the reply", "none")
    elif text is not None and text.strip():
        raw, source = text, "text"
    elif tool_arguments is not None:
        quirks["tool_call_as_text_mode"] += 1
        raw, source = tool_arguments, "tool"
    else:
        return ParseResult(None, {}, "the reply is empty", "none")
    try:
        obj = _decode(_without_thinking(raw, quirks), quirks)
        obj = _strip_schema_keys(obj, schema, quirks)
        obj = _normalise_keys(obj, schema, quirks)
        _normalise_values(obj, schema, quirks)
        values, rejected = schema.salvage(obj)
    except (_Unusable, ValueError) as exc:
        return ParseResult(None, _once_each(quirks), str(exc), source)
    if rejected:
        quirks["rejected_edit"] += 1
    return ParseResult(values, _once_each(quirks), None, source, rejected)


def _once_each(quirks: Counter[str]) -> dict[str, int]:
    # one count per reply and kind, in the order the rules fired
    return dict.fromkeys(quirks, 1)
