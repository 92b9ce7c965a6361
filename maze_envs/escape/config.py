"""Maze Escape configuration: every rule and switchable feature, the presets, the agent names.

Also the two layout versions of the environment (``EnvVersion``): version 0 keys per-teammate
observation fields by the *other* agents only, version 1 by *all* agents (see
:mod:`maze_envs.escape.observe`). The version is the environment's, not the config's: the same
config plays the same game in both, only the observation layout differs.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from maze_envs._registration import versions
from maze_envs.escape.vocab import LANDMARK_NAMES

#: Largest UTF-8 text an action may carry at all. Anything up to this reaches the rules (which may
#: reject it with a reason); anything longer is not a valid action and raises ``ValueError``.
ACTION_TEXT_MAX_BYTES: Final = 65536
#: Largest rejection/refusal reason in the observation.
REASON_MAX_BYTES: Final = 256
MAX_AGENTS: Final = 26
#: Most radio symbols a game may have (``Config.radio_symbols``).
RADIO_SYMBOLS_MAX: Final = 64
#: Marks a :class:`Config` field as the switch of an optional observation feature (each has a
#: declaration in :mod:`maze_envs.escape.features`; a test checks both agree).
FEATURE_SWITCH: Final[dict[str, Any]] = {"observation_feature": True}

Frame = Literal["own", "shared", "absolute"]
NotebookMode = Literal["splice", "rolling_log"]
RewardMode = Literal["exit_and_team", "team_sparse"]


def feature_switches() -> list[str]:
    """The :class:`Config` fields that switch an optional observation feature on.

    Example:
        >>> feature_switches()
        ['distance_sensor', 'coordinates', 'trail_length', 'meeting_alert', 'used_exits',
         'radio_symbols']
    """
    return [
        name
        for name, field in Config.model_fields.items()
        if isinstance(field.json_schema_extra, dict)
        and field.json_schema_extra.get("observation_feature")
    ]


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
    # Optional observation features (each declared in maze_envs.escape.features)
    distance_sensor: bool = Field(
        True,
        description="straight-line distances to the exit and to each teammate",
        json_schema_extra=FEATURE_SWITCH,
    )
    coordinates: Frame | None = Field(
        None,
        json_schema_extra=FEATURE_SWITCH,
        description="None: no coordinates; else the frame of position and trail, [x, y] with x "
        "east and y north: 'absolute' origin (0, 0) at the south-west corner cell, 'own' at the "
        "agent's own start cell, 'shared' at agent A's start cell",
    )
    trail_length: int = Field(
        0,
        ge=0,
        le=1000,
        description="cells where the agent ended each of the last K turns (0: off); the last "
        "entry is last turn's cell, which equals the current cell after a bump or STAY",
        json_schema_extra=FEATURE_SWITCH,
    )
    meeting_alert: bool = Field(
        False,
        description="the teammates on the agent's cell",
        json_schema_extra=FEATURE_SWITCH,
    )
    used_exits: bool = Field(
        False,
        description="the edges of the agent's cell it has crossed",
        json_schema_extra=FEATURE_SWITCH,
    )
    radio_symbols: int = Field(
        0,
        ge=0,
        le=RADIO_SYMBOLS_MAX,
        description="the radio also carries one of K symbols (0: off): an action's "
        "radio_symbol 1..K is heard by every teammate next turn (radio_symbols in the "
        "observation), under the radio's rules (one message per cooldown, text and symbol "
        "together); the only radio of the batched engine (maze_escape_v1.vector_env)",
        json_schema_extra=FEATURE_SWITCH,
    )

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

    @model_serializer(mode="wrap")
    def _without_unused_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dump leaves ``radio_symbols`` out while it is 0, so configs (and the journals
        that store them) without radio symbols are exactly what they were before the option."""
        data: dict[str, Any] = handler(self)
        if not self.radio_symbols:
            data.pop("radio_symbols", None)
        return data

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


EnvVersion = Literal[0, 1]
#: Environment version -> the id its games are registered and journaled under (from the table
#: of environments, :mod:`maze_envs._registration`).
ENV_IDS: Final[dict[int, str]] = versions("escape")


def teammates(config: Config, agent: str) -> tuple[str, ...]:
    """The other agents, in name order (the order of every per-teammate field in version 0)."""
    return _teammates(config.num_agents, agent)


@cache
def _teammates(num_agents: int, agent: str) -> tuple[str, ...]:
    return tuple(name for name in agent_names(num_agents) if name != agent)


def slot_names(config: Config, agent: str, version: int) -> tuple[str, ...]:
    """The keys of the per-agent observation fields of ``agent``: its teammates in version 0,
    every agent (itself included, its entry blank) in version 1; always in name order."""
    return config.agents if version == 1 else teammates(config, agent)
