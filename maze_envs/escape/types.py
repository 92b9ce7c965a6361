"""Maze Escape data: the configuration, its presets, the engine state and the typed models.

Conventions used everywhere in the package:

* **Cells** are addressed internally as flat indices ``row * width + column`` (row 0 is the
  northern row, as in :mod:`maze_envs.grid`).
* **Coordinates** shown to agents are ``[x, y]`` with *x growing east* and *y growing north*,
  so a successful ``N`` move adds 1 to ``y`` and an ``E`` move adds 1 to ``x``. Frames:
  ``absolute`` has its origin at the south-west corner cell, ``own`` at the agent's own start
  cell, ``shared`` at agent A's start cell.
* **Edges** and **moves** are listed in the order N, E, S, W.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Final, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator

MOVES: Final = ("N", "E", "S", "W", "STAY")
DIRECTIONS: Final = ("N", "E", "S", "W")
EDGE_KINDS: Final = ("open", "interior_wall", "outer_brick")
MOVE_RESULTS: Final = (
    "none",
    "moved",
    "stayed",
    "bumped_interior_wall",
    "bumped_outer_brick",
    "doorway",
)
NOTEBOOK_RESULTS: Final = ("none", "applied", "rejected")
RADIO_RESULTS: Final = ("none", "sent", "refused")

#: Landmark names, in the order their indices appear in the observation space (index + 1).
LANDMARK_NAMES: Final = (
    "tree",
    "picture",
    "piano",
    "candle",
    "key",
    "clock",
    "mirror",
    "lamp",
    "vase",
    "bell",
    "chair",
    "globe",
    "harp",
    "anchor",
    "statue",
    "fountain",
    "drum",
    "book",
    "kettle",
    "compass",
    "telescope",
    "rug",
    "shield",
    "crown",
)

#: Largest UTF-8 text an action may carry at all. Anything up to this reaches the rules (which may
#: reject it with a reason); anything longer is not a valid action and raises ``ValueError``.
ACTION_TEXT_MAX_BYTES: Final = 65536
#: Largest rejection/refusal reason in the observation.
REASON_MAX_BYTES: Final = 256
MAX_AGENTS: Final = 26

Frame = Literal["own", "shared", "absolute"]
NotebookMode = Literal["splice", "rolling_log"]
RewardMode = Literal["exit_and_team", "team_sparse"]


@cache
def agent_names(num_agents: int) -> tuple[str, ...]:
    """Agent names A, B, C, ... for ``num_agents`` agents."""
    return tuple(chr(ord("A") + i) for i in range(num_agents))


class Config(BaseModel):
    """Every rule and switchable feature of a Maze Escape game (JSON-serializable, immutable).

    Build one directly, from a preset with :meth:`from_preset`, or let
    ``maze_escape_v0.parallel_env(preset=..., **overrides)`` do it. The defaults are the
    ``sparse`` setup on a 10x10 maze with 120 turns. Presets (:data:`PRESETS`) switch on:

    ============  =========  ===========  =====  =======  ==========  ===========  =========
    preset        distances  coordinates  trail  meeting  used exits  notebook     turns
    ============  =========  ===========  =====  =======  ==========  ===========  =========
    sparse        yes        --           --     --       --          splice       120
    navigator     --         own          30     yes      --          rolling_log  600 (*)
    shared_frame  --         shared       30     yes      --          splice       120
    full          yes        own          30     yes      yes         splice       120
    ============  =========  ===========  =====  =======  ==========  ===========  =========

    (*) ``navigator`` also places more landmarks (``landmark_density="many"``). Radio is on in
    every preset.

    Example:
        >>> from maze_envs.escape.types import Config
        >>> Config.from_preset("navigator", width=17, height=17).coordinates
        'own'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The maze
    width: int = Field(10, ge=5, le=41, description="cells west to east")
    height: int = Field(10, ge=5, le=41, description="cells north to south")
    maze_algorithm: str = Field("wilson", description="generator name, see generator.GENERATORS")
    landmark_count: int | None = Field(
        None, ge=0, le=len(LANDMARK_NAMES), description="None: scale with size (landmark_density)"
    )
    landmark_density: Literal["few", "many"] = Field(
        "few",
        description="default count: few ~ cells/33 (3 on 10x10); many: 10 on 9x9 .. 14 on 17x17",
    )
    num_agents: int = Field(3, ge=1, le=MAX_AGENTS)
    min_start_distance: int = Field(
        1, ge=1, description="starts are distinct cells at least this many moves from the exit"
    )
    max_turns: int = Field(120, ge=1, le=100_000)
    # Rewards
    reward_mode: RewardMode = "exit_and_team"
    exit_reward: float = Field(1.0, description="to an agent on its first exit visit")
    team_bonus: float = Field(1.0, description="to every agent on team success")
    # Notebook and radio
    notebook_mode: NotebookMode = "splice"
    notebook_max_bytes: int = Field(8192, ge=1, le=ACTION_TEXT_MAX_BYTES)
    notebook_turn_bytes: int = Field(1024, ge=1, le=ACTION_TEXT_MAX_BYTES)
    radio: bool = True
    radio_max_bytes: int = Field(280, ge=1, le=ACTION_TEXT_MAX_BYTES)
    radio_cooldown: int = Field(5, ge=0, le=10_000)
    # Optional observation features
    distance_sensor: bool = True
    coordinates: Frame | None = None
    trail_length: int = Field(0, ge=0, le=1000, description="0 switches the trail off")
    meeting_alert: bool = False
    used_exits: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Config:
        if self.notebook_turn_bytes > self.notebook_max_bytes:
            raise ValueError(
                f"notebook_turn_bytes ({self.notebook_turn_bytes}) must not exceed "
                f"notebook_max_bytes ({self.notebook_max_bytes})"
            )
        if self.meeting_alert and self.num_agents < 2:
            raise ValueError("meeting_alert needs at least 2 agents (it names teammates)")
        if self.trail_length and self.coordinates is None:
            raise ValueError(
                "trail_length > 0 needs a coordinate frame: set coordinates to "
                "'own', 'shared' or 'absolute' (the trail is given in that frame)"
            )
        return self

    @property
    def agents(self) -> tuple[str, ...]:
        return agent_names(self.num_agents)

    @classmethod
    def from_preset(cls, preset: str | None = None, **overrides: Any) -> Config:
        """The named preset (see :data:`PRESETS`) with keyword overrides applied and validated."""
        if preset is None:
            return cls(**overrides)
        try:
            base = PRESETS[preset]
        except KeyError:
            raise ValueError(
                f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}"
            ) from None
        return cls(**{**base, **overrides})


#: Named setups researchers compare. Values are Config overrides on top of the defaults.
PRESETS: Final[dict[str, dict[str, Any]]] = {
    # The original sparse rules: distance sensors only, splice notebook, radio.
    "sparse": {"distance_sensor": True, "coordinates": None, "notebook_mode": "splice"},
    # Own-frame coordinates with a 30-turn trail, meeting alert, rolling log; no sensors.
    "navigator": {
        "distance_sensor": False,
        "coordinates": "own",
        "trail_length": 30,
        "meeting_alert": True,
        "notebook_mode": "rolling_log",
        "landmark_density": "many",
        "max_turns": 600,
    },
    # One frame for everyone (origin at A's start), trail, meeting alert; no sensors.
    "shared_frame": {
        "distance_sensor": False,
        "coordinates": "shared",
        "trail_length": 30,
        "meeting_alert": True,
    },
    # Every optional feature on.
    "full": {
        "distance_sensor": True,
        "coordinates": "own",
        "trail_length": 30,
        "meeting_alert": True,
        "used_exits": True,
    },
}


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
    radio_outbox: list[str]  # message each agent sent in the last resolved turn ("" = none)
    radio_ready_turn: list[int]  # first turn number whose action may send again
    trail: NDArray[np.int64]  # (agents, trail_length): earlier cells, newest last; pad = cells
    used_exits: list[bytearray]  # per agent, per cell: bit mask of edges crossed
    wall_bumps: list[int]
    doorway_moves: list[int]
    moves: list[int]
    move_result: list[int]  # index into MOVE_RESULTS
    notebook_result: list[int]
    notebook_reason: list[str]
    radio_result: list[int]
    radio_reason: list[str]
    success: bool = False


# --- typed models for LLM and research code -------------------------------------------------

MoveName = Literal["N", "E", "S", "W", "STAY"]
Direction = Literal["N", "E", "S", "W"]
EdgeKind = Literal["open", "interior_wall", "outer_brick"]
MoveResult = Literal[
    "none", "moved", "stayed", "bumped_interior_wall", "bumped_outer_brick", "doorway"
]


class SpliceEdit(BaseModel):
    """Replace the characters ``start:end`` of the notebook with ``text`` (``splice`` mode)."""

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
    move: MoveResult
    notebook: Literal["none", "applied", "rejected"]
    notebook_reason: str
    radio: Literal["none", "sent", "refused"]
    radio_reason: str
    radio_cooldown: int = Field(ge=0)


class Observation(BaseModel):
    """One agent's observation; optional features are ``None`` when switched off.

    Convert with :func:`maze_envs.escape.convert.observation_to_model` and
    :func:`maze_envs.escape.convert.observation_from_model`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    edges: dict[Direction, EdgeKind]
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

    @classmethod
    def from_space(cls, obs: Mapping[str, Any], config: Config, agent: str) -> Observation:
        """The model of ``agent``'s observation dict (see :mod:`maze_envs.escape.convert`)."""
        from maze_envs.escape.convert import observation_to_model

        return observation_to_model(obs, config, agent)

    def to_space(self, config: Config, agent: str) -> dict[str, Any]:
        """The observation dict, a member of ``agent``'s observation space."""
        from maze_envs.escape.convert import observation_from_model

        return observation_from_model(self, config, agent)


class Action(BaseModel):
    """One agent's action: a move, an optional notebook edit and an optional radio message."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    move: MoveName = "STAY"
    notebook: SpliceEdit | AppendEdit | None = None
    radio: str | None = Field(None, min_length=1)

    @classmethod
    def from_space(cls, action: Mapping[str, Any], config: Config) -> Action:
        """The model of an action dict (checked against the action space)."""
        from maze_envs.escape.convert import action_to_model

        return action_to_model(action, config)

    def to_space(self, config: Config) -> dict[str, Any]:
        """The action dict, a member of the action space."""
        from maze_envs.escape.convert import action_from_model

        return action_from_model(self, config)
