"""Reply schemas of the LLM policies: pydantic models and the JSON schema sent to the model.

A reply schema is built per game from the harness settings, so everything the model is asked to
write is explicit and recorded:

* Maze Escape (:func:`escape_schema`): ``move`` (N, E, S, W, STAY), ``notebook`` (a splice
  object ``{start, end, text}`` or a text to append, matching the game's notebook mode; null for
  no edit), ``radio`` (a message or null; absent when the radio is off) and, when ``check`` is
  ``"optional"`` or ``"required"``, a one-line ``check`` (the cell's four sides, where the agent
  came from, which way it goes and why).
* AGI Maze (:func:`agimaze_schema`): ``action`` (one of the labyrinth's action ids) and, per
  history policy, ``plan`` (planning) or ``state`` (world model), plus the optional ``check``.

``order`` puts the reasoning fields before the action (``"check_first"``), after it
(``"move_first"``), or lists every field explicitly. The field order is the order of
``properties`` in the JSON schema, which is what a model sees, and it is kept byte for byte on the
way to the model (tests assert it on the request the backend receives).

Example:
    >>> from maze_envs.escape.types import Config
    >>> schema = escape_schema(Config(), check="required", order="check_first")
    >>> list(schema.json_schema["properties"])
    ['check', 'move', 'notebook', 'radio']
    >>> schema.fields, schema.name
    (('check', 'move', 'notebook', 'radio'), 'maze_action')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from llm_policies.prompt_data import load
from maze_envs.escape.types import (
    ACTION_TEXT_MAX_BYTES,
    MOVES,
    Action,
    AppendEdit,
    Config,
    SpliceEdit,
)

Check = Literal["off", "optional", "required"]
OrderName = Literal["check_first", "move_first"]
Order = OrderName | Sequence[str]

#: Fields whose value may be "nothing": the null-literal quirk applies to them.
_NOTHING_FIELDS: Final = frozenset({"notebook", "radio", "check", "plan", "state"})
#: The fields that carry reasoning rather than the action itself.
_REASONING_FIELDS: Final = ("check", "plan", "state")
ESCAPE_SCHEMA_NAME: Final = "maze_action"
#: Maze Escape fields that are edits beside the move: a bad one is rejected, the move kept.
ESCAPE_EDITS: Final = frozenset({"notebook", "radio"})
AGIMAZE_SCHEMA_NAME: Final = "labyrinth_action"


def _splice_model() -> type[BaseModel]:
    """A splice edit as the model writes it (descriptions from the data file, no docstring)."""
    text = _descriptions()["splice"]
    model: type[BaseModel] = create_model(
        "SpliceReply",
        __config__=ConfigDict(extra="forbid"),
        start=(int, Field(ge=0, le=ACTION_TEXT_MAX_BYTES, description=text["start"])),
        end=(int, Field(ge=0, le=ACTION_TEXT_MAX_BYTES, description=text["end"])),
        text=(str, Field(description=text["text"])),
    )
    return model


@dataclass(frozen=True)
class ReplySchema:
    """One reply format: its name, fields in order, the pydantic model and the JSON schema."""

    name: str
    fields: tuple[str, ...]
    model: type[BaseModel]
    json_schema: dict[str, Any]
    #: allowed values of enumerated fields (``move`` / ``action``)
    enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: fields that may be null ("nothing")
    nullable: frozenset[str] = frozenset()
    #: the field that holds the action (``move`` or ``action``)
    action_field: str = "move"
    #: fields whose bad value costs only themselves (:meth:`salvage`): the edits beside the
    #: action (a Maze Escape notebook edit, a radio message)
    salvageable: frozenset[str] = frozenset()

    @cached_property
    def schema_text(self) -> str:
        """The JSON schema as compact text, keys in schema order (for prompted mode)."""
        return json.dumps(self.json_schema, ensure_ascii=False)

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` checked by the model; ``ValueError`` with a short reason otherwise."""
        try:
            parsed = self.model.model_validate(dict(values))
        except ValidationError as exc:
            raise ValueError(short_errors(exc)) from None
        dumped: dict[str, Any] = parsed.model_dump()
        return dumped

    def salvage(self, values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """``values`` checked, keeping what is valid when only edits beside the action are not.

        Returns the values and the fields left out with the reason each was rejected: a reply
        whose move is valid keeps its move, and an edit the action space cannot hold (a splice
        position of 107654328946, which a grammar that ignores ``maximum`` lets through)
        becomes no edit, rejected with its reason, as the environment rejects a splice past
        the notebook's text. Raises ``ValueError`` (a short reason) when the action itself, or
        a field that is not an edit, is invalid.

        >>> from maze_envs.escape.types import Config
        >>> schema = escape_schema(Config(num_agents=1, notebook_mode="splice"))
        >>> values, rejected = schema.salvage(
        ...     {"move": "N", "notebook": {"start": 107654328946, "end": 0, "text": "x"}})
        >>> values["move"], values["notebook"], rejected
        ('N', None, {'notebook': 'notebook.start: Input should be less than or equal to 65536'})
        """
        try:
            return self.validate_model(values), {}
        except ValidationError as exc:
            bad: dict[str, list[str]] = {}
            for error in exc.errors():
                field_name = str(error["loc"][0]) if error["loc"] else ""
                if field_name not in self.salvageable:
                    raise ValueError(short_errors(exc)) from None
                where = ".".join(str(p) for p in error["loc"] if not _is_union_tag(p))
                bad.setdefault(field_name, []).append(f"{where}: {error['msg']}")
        kept = {**values, **dict.fromkeys(bad)}
        try:
            salvaged = self.validate_model(kept)
        except ValidationError as exc:
            raise ValueError(short_errors(exc)) from None
        return salvaged, {name: "; ".join(reasons[:2]) for name, reasons in bad.items()}

    def validate_model(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` checked by the model (pydantic's ``ValidationError`` otherwise)."""
        dumped: dict[str, Any] = self.model.model_validate(dict(values)).model_dump()
        return dumped


def _is_union_tag(part: Any) -> bool:
    """A location part pydantic adds for a union member (``SpliceReply``, ``str``, ...)."""
    return isinstance(part, str) and (part[:1].isupper() or part in ("str", "none"))


def short_errors(exc: ValidationError) -> str:
    """The first few errors of ``exc``, one short clause each (for a re-ask)."""
    parts = []
    for error in exc.errors()[:4]:
        where = ".".join(str(p) for p in error["loc"]) or "reply"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _descriptions() -> dict[str, Any]:
    return load("escape/reply.toml")


def _ordered(fields: list[str], order: Order) -> tuple[str, ...]:
    if isinstance(order, str):
        if order not in ("check_first", "move_first"):
            raise ValueError(
                f"order must be 'check_first', 'move_first' or a list of field names, got {order!r}"
            )
        reasoning = [f for f in fields if f in _REASONING_FIELDS]
        rest = [f for f in fields if f not in _REASONING_FIELDS]
        return tuple(reasoning + rest if order == "check_first" else rest + reasoning)
    listed = list(order)
    if sorted(listed) != sorted(fields):
        raise ValueError(f"order lists {listed}; it must list each of these fields once: {fields}")
    return tuple(listed)


# --- JSON schema cleaning: inline references, no titles or defaults, a fixed key order ------

_KEY_ORDER: Final = (
    "type",
    "enum",
    "anyOf",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "maximum",
    "minLength",
    "description",
)


def _clean(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs)
    if "const" in node and "enum" not in node:  # a one-value Literal: say it as an enum
        node = {**node, "enum": [node["const"]]}
    out: dict[str, Any] = {}
    for key in _KEY_ORDER:
        if key not in node:
            continue
        value = node[key]
        if key == "properties":
            out[key] = {name: _clean(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _clean(value, defs)
    if out.get("type") == "object" and "properties" in out:
        # strict structured output wants every key listed and nothing else
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
        out = {k: out[k] for k in _KEY_ORDER if k in out}
    return out


def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    cleaned: dict[str, Any] = _clean(raw, raw.get("$defs", {}))
    return cleaned


def _build(
    name: str,
    specs: dict[str, tuple[Any, Any]],
    order: tuple[str, ...],
    enums: dict[str, tuple[str, ...]],
    action_field: str,
    salvageable: frozenset[str] = frozenset(),
) -> ReplySchema:
    fields: dict[str, Any] = {f: specs[f] for f in order}  # built at run time
    model: type[BaseModel] = create_model(
        name.title().replace("_", ""), __config__=ConfigDict(extra="forbid"), **fields
    )
    nullable = frozenset(f for f in order if f in _NOTHING_FIELDS and specs[f][1].default is None)
    return ReplySchema(
        name=name,
        fields=order,
        model=model,
        json_schema=_json_schema(model),
        enums=enums,
        nullable=nullable,
        action_field=action_field,
        salvageable=salvageable & nullable,
    )


def _check_spec(check: Check, description: str) -> tuple[Any, Any]:
    if check == "required":
        return (str, Field(min_length=1, description=description))
    return (str | None, Field(None, description=description))


def escape_schema(
    config: Config, *, check: Check = "off", order: Order = "move_first"
) -> ReplySchema:
    """The Maze Escape reply schema for this game's notebook mode and radio."""
    if check not in ("off", "optional", "required"):
        raise ValueError(f"check must be 'off', 'optional' or 'required', got {check!r}")
    text = _descriptions()["escape"]
    specs: dict[str, tuple[Any, Any]] = {
        "move": (Literal[MOVES], Field(description=text["move"])),
    }
    if config.notebook_mode == "splice":
        specs["notebook"] = (
            _splice_model() | None,
            Field(None, description=text["notebook_splice"]),
        )
    else:
        specs["notebook"] = (str | None, Field(None, description=text["notebook_rolling_log"]))
    talk = config.radio and config.num_agents > 1  # nobody to talk to when playing alone
    if talk:
        specs["radio"] = (str | None, Field(None, description=text["radio"]))
    if check != "off":
        specs["check"] = _check_spec(check, text["check"])
    fields = ["move", "notebook", *(["radio"] if talk else []), "check"]
    present = [f for f in fields if f in specs]
    return _build(
        ESCAPE_SCHEMA_NAME,
        specs,
        _ordered(present, order),
        {"move": MOVES},
        "move",
        ESCAPE_EDITS,
    )


def agimaze_schema(
    action_names: Sequence[str],
    *,
    reasoning: Sequence[Literal["plan", "state"]] = (),
    check: Check = "off",
    order: Order = "check_first",
) -> ReplySchema:
    """The AGI Maze reply schema: ``action`` plus the history policy's ``plan`` / ``state``."""
    if not action_names:
        raise ValueError("an AGI Maze reply schema needs at least one action name")
    text = _descriptions()["agimaze"]
    names = tuple(dict.fromkeys(action_names))
    specs: dict[str, tuple[Any, Any]] = {
        "action": (Literal[names], Field(description=text["action"])),
    }
    for extra in reasoning:
        specs[extra] = (str, Field(min_length=1, description=text[extra]))
    if check != "off":
        specs["check"] = _check_spec(check, text["check"])
    present = [f for f in ("check", *reasoning, "action") if f in specs]
    return _build(AGIMAZE_SCHEMA_NAME, specs, _ordered(present, order), {"action": names}, "action")


def escape_action(values: Mapping[str, Any]) -> Action:
    """The typed Maze Escape action of validated reply values (nothing written = no edit)."""
    notebook = values.get("notebook")
    edit: SpliceEdit | AppendEdit | None
    if isinstance(notebook, Mapping):
        edit = SpliceEdit(start=notebook["start"], end=notebook["end"], text=notebook["text"])
    elif isinstance(notebook, str) and notebook:
        edit = AppendEdit(text=notebook)
    else:
        edit = None
    radio = values.get("radio") or None
    return Action(move=values["move"], notebook=edit, radio=radio)
