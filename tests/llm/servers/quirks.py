"""The reply quirks seen in practice, as raw text a scripted server sends.

Each quirk turns a well-formed action object into what a model really sent; the backends must
pass it through untouched (the harness's parser names, applies and counts the repairs).

    >>> quirk_payload("code_fence", {"move": "N"})
    '```json\\n{\\n  "move": "N"\\n}\\n```'
    >>> quirk_payload("spelled_out_move", {"move": "E", "radio": "hi"})
    '{"move": "east", "radio": "hi"}'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.llm.servers.script import Reply

DEFAULT_PAYLOAD: dict[str, Any] = {
    "move": "N",
    "notebook": "junction at the fountain: N and E open",
    "radio": "A: at the fountain",
}
_SPELLED = {"N": "north", "E": "east", "S": "south", "W": "west", "STAY": "stay"}
_NULLS = ("null", "None", "")


def _dump(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _null_literals(payload: dict[str, Any]) -> str:
    # every field but the move says "nothing" the ways models do: "null", "None", ""
    out = dict(payload)
    others = [k for k in out if k != "move"]
    for i, key in enumerate(others):
        out[key] = _NULLS[i % len(_NULLS)]
    return _dump(out)


QUIRKS: dict[str, Callable[[dict[str, Any]], str]] = {
    # a JSON object written as text although a tool call was asked for
    "json_as_text": _dump,
    "code_fence": lambda p: "```json\n" + json.dumps(p, indent=2, ensure_ascii=False) + "\n```",
    # the schema's own keys copied around the answer
    "schema_keys": lambda p: _dump(
        {"type": "object", "properties": p, "required": list(p), "additionalProperties": False}
    ),
    "null_literals": _null_literals,
    "key_order": lambda p: _dump(dict(reversed(list(p.items())))),
    "trailing_prose": lambda p: _dump(p) + "\n\nI go north because that edge is open.",
    "lower_case_move": lambda p: _dump({**p, "move": str(p.get("move", "N")).lower()}),
    "spelled_out_move": lambda p: _dump({**p, "move": _SPELLED.get(str(p.get("move")), "north")}),
}

# quirks whose raw text is not a JSON object, so they can only arrive as text on protocols whose
# tool calls carry objects (Anthropic, Ollama)
NOT_AN_OBJECT = frozenset({"code_fence", "trailing_prose"})


def quirk_payload(name: str, payload: dict[str, Any] | None = None) -> str:
    """The raw text of quirk ``name`` applied to ``payload`` (a default Maze Escape action)."""
    if name not in QUIRKS:
        raise KeyError(f"unknown quirk {name!r}; known: {', '.join(QUIRKS)}")
    return QUIRKS[name](DEFAULT_PAYLOAD if payload is None else payload)


def quirk_reply(
    name: str, *, tool: bool, payload: dict[str, Any] | None = None, objects_only: bool = False
) -> Reply:
    """A scripted reply carrying quirk ``name``: as tool-call arguments when ``tool`` (unless the
    quirk is a text-instead-of-tool quirk, or not an object on an ``objects_only`` protocol)."""
    raw = quirk_payload(name, payload)
    as_text = not tool or name == "json_as_text" or (objects_only and name in NOT_AN_OBJECT)
    return Reply(text=raw) if as_text else Reply(tool_arguments=raw)
