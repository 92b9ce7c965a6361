"""Maze Escape data: the engine state, the typed models, and (re-exported) the configuration and
the vocabularies, so ``from maze_envs.escape.types import ...`` reaches every data name.

Conventions used everywhere in the package:

* **Cells** are addressed internally as flat indices ``row * width + column``. Where a cell is
  shown as ``(row, column)`` (``row_col``) row 0 is the northern row and column 0 the western
  column, as in :mod:`maze_envs.grid`.
* **Coordinates** shown to agents, and ``xy`` in infos, are ``[x, y]`` with *x growing east*
  and *y growing north*, so a successful ``N`` move adds 1 to ``y`` and an ``E`` move adds 1 to
  ``x``. Frames: ``absolute`` has its origin ``(0, 0)`` at the south-west corner cell (so the
  north-west corner of a ``W x H`` maze is ``(0, H - 1)``), ``own`` at the agent's own start cell,
  ``shared`` at agent A's start cell. ``xy`` in infos is always absolute.
* **Edges** and **moves** are listed in the order N, E, S, W (:mod:`maze_envs.escape.vocab`).

The typed models are for policies and research code; they are the same for both layout
versions (their per-teammate fields list teammates only). Conversions: the models' methods,
:mod:`maze_envs.escape.jsonform` and :mod:`maze_envs.escape.convert`.

This module is data only, as Jumanji's ``types.py``: of its package it imports the configuration,
the vocabularies and the actions' plain form, nothing that computes. The models' conversion
methods (``from_space``, ``to_space``) call the mapping of :mod:`maze_envs.escape.jsonform`,
which reads the optional features (and they read this module's ``State``), so it sits above this
module and hands its four functions down when it is imported (:func:`register_json_form`);
importing anything of ``maze_envs.escape`` imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import add
from typing import Any, Final, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from maze_envs.escape.actions import NotebookEdit, SpliceArgs
from maze_envs.escape.config import (
    ACTION_TEXT_MAX_BYTES,
    ENV_IDS,
    MAX_AGENTS,
    PRESETS,
    RADIO_SYMBOLS_MAX,
    REASON_MAX_BYTES,
    Config,
    EnvVersion,
    Frame,
    NotebookMode,
    RewardMode,
    agent_names,
)
from maze_envs.escape.vocab import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    MOVES,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
    Direction,
    EdgeKind,
    EdgeKindName,
    Move,
    MoveName,
    MoveResult,
    MoveResultName,
    NotebookResult,
    NotebookResultName,
    RadioResult,
    RadioResultName,
)

__all__ = [
    "ACTION_TEXT_MAX_BYTES",
    "DIRECTIONS",
    "EDGE_KINDS",
    "ENV_IDS",
    "LANDMARK_NAMES",
    "MAX_AGENTS",
    "MOVES",
    "MOVE_RESULTS",
    "NOTEBOOK_RESULTS",
    "PRESETS",
    "RADIO_RESULTS",
    "REASON_MAX_BYTES",
    "Action",
    "AppendEdit",
    "Config",
    "Direction",
    "EdgeKind",
    "EdgeKindName",
    "EnvVersion",
    "Frame",
    "JsonForm",
    "LastActionResult",
    "Move",
    "MoveName",
    "MoveResult",
    "MoveResultName",
    "NotebookEdit",
    "NotebookMode",
    "NotebookResult",
    "NotebookResultName",
    "Observation",
    "RadioResult",
    "RadioResultName",
    "RewardMode",
    "SpliceArgs",
    "SpliceEdit",
    "State",
    "agent_names",
    "register_json_form",
]

#: Optional fields added after the JSON form was first released: left out of it while off, so
#: the JSON form of every game without them is what it was.
LATER_FIELDS: Final = frozenset({"radio_symbols"})


class JsonForm(NamedTuple):
    """The mapping between the typed models' JSON form and the space dicts, as the models'
    conversion methods call it: :mod:`maze_envs.escape.jsonform`'s functions of these names."""

    observation_values: Callable[[Mapping[str, Any], Config, str], dict[str, Any]]
    observation_from_json: Callable[[Mapping[str, Any], Config, str, EnvVersion], dict[str, Any]]
    action_to_json: Callable[[Any, Config], dict[str, Any]]
    action_from_json: Callable[[Mapping[str, Any], Config], dict[str, Any]]


_JSON_FORM: list[JsonForm] = []


def register_json_form(form: JsonForm) -> None:
    """Hand the models their conversions (:mod:`maze_envs.escape.jsonform` calls this once, as
    it is imported)."""
    _JSON_FORM[:] = [form]


def _json_form() -> JsonForm:
    if not _JSON_FORM:  # only if this file were loaded outside its package
        raise RuntimeError("the typed models convert through maze_envs.escape.jsonform: import it")
    return _JSON_FORM[0]


@dataclass
class State:
    """Everything that changes during a game (the layout is fixed and lives in ``Board``).

    Cells are flat indices. Lists are indexed by agent number (A = 0).
    """

    turn: int
    positions: list[int]
    visited_exit: list[bool]
    first_visit_turn: list[int]  # -1 until the agent first stands on the exit
    notebooks: list[str]
    notebook_bytes: list[int]  # UTF-8 size of each notebook (so no rule encodes it again)
    radio_outbox: list[str]  # message each agent sent in the last resolved turn ("" = none)
    radio_ready_turn: list[int]  # first turn number whose action may send again
    # (agents, 2 * trail_length): the trail as a ring stored twice over, so the last
    # trail_length entries are always one slice (see ``trail``). Entries are *trail keys*,
    # agent * (cells + 1) + cell (cell == cells pads): one index space for every agent, so a
    # single table lookup turns all trails into coordinates.
    trail_ring: NDArray[np.int64]
    used_exits: list[bytearray]  # per agent, per cell: bit mask of edges crossed
    wall_bumps: list[int]
    doorway_moves: list[int]
    moves: list[int]
    move_result: list[int]  # MoveResult codes
    notebook_result: list[int]  # NotebookResult codes
    notebook_reason: list[str]
    radio_result: list[int]  # RadioResult codes
    radio_reason: list[str]
    success: bool = False
    trail_head: int = 0  # where the oldest trail entry is in trail_ring
    trail_offsets: tuple[int, ...] = ()  # agent * (cells + 1): trail key of each agent's cell 0
    radio_symbols: list[int] = field(default_factory=list)  # symbol sent last turn (0: none)
    # trail_ring as one flat run of 64-bit integers, made on the first push: a write through it
    # costs a fraction of a numpy item assignment (never copied or pickled: see __getstate__)
    _trail_cells: memoryview | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_trail_cells": None}  # a memoryview cannot be copied

    @property
    def trail_keys(self) -> NDArray[np.int64]:
        """(agents, trail_length) trail keys, oldest first (a view of the state)."""
        head = self.trail_head
        return self.trail_ring[:, head : head + self.trail_ring.shape[1] // 2]

    @property
    def trail(self) -> NDArray[np.int64]:
        """(agents, trail_length): the cells where each agent ended each of the last turns,
        oldest first, newest (last turn's cell) last; padding is the cell count (one past the
        last cell). A new array."""
        offsets = np.array(self.trail_offsets, dtype=np.int64).reshape(-1, 1)
        return self.trail_keys - offsets

    def push_trail(self, cells: list[int]) -> None:
        """Append each agent's cell to its trail (the oldest entry drops out)."""
        ring, head = self.trail_ring, self.trail_head
        width = ring.shape[1]
        length = width // 2
        flat = self._trail_cells
        if flat is None or flat.obj is not ring:
            flat = self._trail_cells = ring.data.cast("B").cast("q")
        # Writing both copies of the ring keeps ring[:, head : head + length] the whole trail.
        at = head
        for key in map(add, cells, self.trail_offsets):  # map: no comprehension call
            flat[at] = key
            flat[at + length] = key
            at += width
        self.trail_head = head + 1 if head + 1 < length else 0


# --- typed models for LLM and research code -------------------------------------------------


class SpliceEdit(BaseModel):
    """Replace the characters ``start:end`` of the notebook with ``text`` (``splice`` mode).

    ``start`` and ``end`` are character positions in ``0..65536`` (the action space; anything
    else is a validation error). Positions inside that range but past the notebook's current
    text, or ``start > end``, are not errors: the rules reject the edit, the notebook stays as
    it was, and the next observation's ``last_action.notebook_reason`` says why.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    start: int = Field(ge=0, le=ACTION_TEXT_MAX_BYTES)
    end: int = Field(ge=0, le=ACTION_TEXT_MAX_BYTES)
    text: str = ""


class AppendEdit(BaseModel):
    """Append ``text`` as one or more lines (``rolling_log`` mode)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    text: str = Field(min_length=1)


class LastActionResult(BaseModel):
    """What happened to the agent's previous action."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    move: MoveResultName
    notebook: NotebookResultName
    notebook_reason: str
    radio: RadioResultName
    radio_reason: str
    radio_cooldown: int = Field(ge=0)


class Observation(BaseModel):
    """One agent's observation; optional features are ``None`` when switched off.

    ``position`` and ``trail`` are ``[x, y]`` in the game's frame (x east, y north); the
    trail's last entry is last turn's cell (equal to ``position`` after a bump or STAY).
    ``last_action`` tells what became of the previous action; a splice that was inside the
    action space but past the notebook's text shows as ``notebook == "rejected"`` with the reason
    in ``notebook_reason`` (see :class:`Action` for the boundary). Convert with
    :meth:`from_space` / :meth:`to_space` or the functions of :mod:`maze_envs.escape.convert`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    edges: dict[Direction, EdgeKindName]
    on_exit: bool
    landmark: str | None
    turn: int
    turns_left: int
    notebook: str
    radio: dict[str, str] = Field(description="sender -> message sent last turn")
    teammate_notebooks: dict[str, str] = Field(description="teammates on this cell -> notebook")
    last_action: LastActionResult
    distance_to_exit: int | None = None
    distance_to_teammates: dict[str, int] | None = None
    position: tuple[int, int] | None = None
    trail: list[tuple[int, int]] | None = None
    colocated_with: list[str] | None = None
    used_exits: list[Direction] | None = None
    radio_symbols: dict[str, int] | None = Field(
        None, description="sender -> radio symbol (1..K) sent last turn"
    )

    @model_serializer(mode="wrap")
    def _without_unused_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dump leaves the fields of :data:`LATER_FIELDS` out
        while they are off (as before those options), so the JSON form of every other game is
        what it was."""
        data: dict[str, Any] = handler(self)
        for name in LATER_FIELDS:
            if data.get(name, False) is None:
                del data[name]
        return data

    @classmethod
    def from_space(cls, obs: Mapping[str, Any], config: Config, agent: str) -> Observation:
        """The model of ``agent``'s observation dict (either layout version).

        Built straight from the dict's values (:func:`~maze_envs.escape.jsonform.
        observation_values`), without validating them again: ``obs`` is a member of
        ``agent``'s observation space (what the environment returns, or a sample of the
        space), which fixes every value's type and range. A dict without that layout raises
        ``ValueError``. (``Observation.model_validate`` builds one from the JSON form, checked.)
        """
        values = _json_form().observation_values(obs, config, agent)
        values["last_action"] = _built(LastActionResult, values["last_action"], _LAST_FIELDS)
        fields = _OBSERVATION_FIELDS
        for name in LATER_FIELDS:  # not in the JSON form while off, so not set
            if values[name] is None:
                fields = fields - {name}
        return _built(cls, values, fields)

    def to_space(self, config: Config, agent: str, version: EnvVersion = 0) -> dict[str, Any]:
        """The observation dict of layout ``version``, a member of ``agent``'s space."""
        values = dict(self)
        values["last_action"] = dict(self.last_action)
        return _json_form().observation_from_json(values, config, agent, version)


_Model = TypeVar("_Model", bound=BaseModel)


def _built(cls: type[_Model], values: dict[str, Any], fields: frozenset[str]) -> _Model:
    """A model of ``values`` that already have its fields' types (every field given: the keys
    of ``values`` are ``fields``, the model's).

    What ``model_construct`` does, without its per-field Python work: the instance's fields are
    ``values`` itself and every field counts as set, as ``model_validate`` leaves a model of the
    same data (``tests/escape/test_spaces.py`` checks that they are equal).
    """
    model = cls.__new__(cls)
    _set = object.__setattr__
    _set(model, "__dict__", values)
    # a set of its own (model_copy(update=) adds to it); copying a frozenset of the same
    # strings costs less than hashing the dict's keys again
    _set(model, "__pydantic_fields_set__", set(fields))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_LAST_FIELDS: Final = frozenset(LastActionResult.model_fields)
_OBSERVATION_FIELDS: Final = frozenset(Observation.model_fields)


class Action(BaseModel):
    """One agent's action: a move, an optional notebook edit and an optional radio message.

    The splice boundary (what language-model policies most often get wrong): a
    :class:`SpliceEdit` position outside ``0..65536`` (negative, or beyond the action space)
    is invalid, so building the model raises a validation error and ``env.step`` raises
    ``ValueError`` before anything changes; a position inside ``0..65536`` but past the end of the
    notebook's text (or ``start > end``) is a valid action that the rules reject: the notebook is
    unchanged and the next observation's ``last_action.notebook == "rejected"`` with the reason
    in ``last_action.notebook_reason``.

    >>> Action(move="N", notebook=SpliceEdit(start=0, end=0, text="hi")).move
    'N'
    >>> Action(notebook=SpliceEdit(start=-1, end=0))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    pydantic_core._pydantic_core.ValidationError: ...
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    move: MoveName = "STAY"
    notebook: SpliceEdit | AppendEdit | None = None
    radio: str | None = Field(None, min_length=1)
    radio_symbol: int | None = Field(
        None, ge=1, le=RADIO_SYMBOLS_MAX, description="a radio symbol 1..K (radio_symbols=K)"
    )

    @model_serializer(mode="wrap")
    def _without_unused_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dump leaves ``radio_symbol`` out when none is sent (as before the option)."""
        data: dict[str, Any] = handler(self)
        if self.radio_symbol is None:
            data.pop("radio_symbol", None)
        return data

    @classmethod
    def from_space(cls, action: Mapping[str, Any], config: Config) -> Action:
        """The model of an action dict (checked against the action space)."""
        return cls.model_validate(_json_form().action_to_json(action, config))

    def to_space(self, config: Config) -> dict[str, Any]:
        """The action dict, a member of the action space."""
        return _json_form().action_from_json(self.model_dump(mode="json"), config)
