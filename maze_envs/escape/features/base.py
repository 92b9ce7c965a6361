"""The parts every optional observation feature is declared with (see :mod:`.` for the list).

:class:`Feature` is the declaration; :class:`FeatureContext` what its computation of one game
may read; :class:`NumericField` one field of its numeric observation; :func:`template` and
:class:`Templates` the read-only arrays a computation copies into observations.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from maze_envs.escape.config import Config, EnvVersion, agent_names
from maze_envs.grid import straight_line

if TYPE_CHECKING:  # duck-typed at run time: the engine and the models import this module
    from maze_envs.escape.engine import Board
    from maze_envs.escape.types import Observation, State

__all__ = [
    "AgentSlots",
    "Computation",
    "Feature",
    "FeatureContext",
    "NumericField",
    "Templates",
    "agent_slots",
    "coordinate_bounds",
    "flags",
    "frame_scale",
    "ints",
    "max_distance_tenths",
    "scaled",
    "template",
    "tenths",
]

#: A feature's computation of one game: writes its keys of one turn into every agent's
#: observation dict (agents in name order), from the engine state.
Computation = Callable[["State", list[dict[str, Any]]], None]


def template(values: Any, dtype: Any = np.int64) -> NDArray[Any]:
    """A read-only array kept by a computation; observations get copies of it (a copy of a
    small array costs less than building it)."""
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


class Templates(dict[Any, NDArray[Any]]):
    """Read-only template arrays by key, built by ``make(key)`` on first use (a dict's
    ``__missing__`` keeps the hits in C)."""

    def __init__(self, make: Callable[[Any], Any], dtype: Any = np.int64) -> None:
        super().__init__()
        self._make, self._dtype = make, dtype

    def __missing__(self, key: Any) -> NDArray[Any]:
        array = self[key] = template(self._make(key), self._dtype)
        return array


def coordinate_bounds(config: Config) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Lowest and highest ``[x, y]`` in the configured frame."""
    span = np.array([config.width - 1, config.height - 1], dtype=np.int64)
    low = np.zeros(2, dtype=np.int64) if config.coordinates == "absolute" else -span
    return low, span


def max_distance_tenths(config: Config) -> int:
    """The longest straight-line distance between two cells of the maze, in tenths of a cell."""
    return math.ceil(10 * straight_line(config.width - 1, config.height - 1))


class AgentSlots(NamedTuple):
    """One agent's slots in an observation dict of one layout version (:func:`agent_slots`)."""

    agent: str
    #: the dict's per-agent keys: the teammates (version 0) or every agent (version 1)
    slots: tuple[str, ...]
    #: the agent's teammates, in name order (the typed model's per-teammate keys)
    others: tuple[str, ...]
    #: where each teammate is in ``slots``
    other_at: tuple[int, ...]


@cache
def agent_slots(num_agents: int, agent: str, version: EnvVersion) -> AgentSlots:
    """The :class:`AgentSlots` of ``agent`` in a game of ``num_agents`` agents."""
    names = agent_names(num_agents)
    slots = names if version == 1 else tuple(name for name in names if name != agent)
    others = tuple(name for name in names if name != agent)
    return AgentSlots(agent, slots, others, tuple(slots.index(name) for name in others))


class FeatureContext:
    """What the features' computations of one game share: the board, the agent slots, frames.

    Agent slots are the keys of the per-teammate fields: for agent ``i``, ``slot_indices[i]``
    are the teammates in name order (version 0) or every agent (version 1).
    """

    def __init__(self, board: Board, config: Config, version: EnvVersion) -> None:
        self.board, self.config, self.version = board, config, version
        n = config.num_agents
        self.names = config.agents
        self.slot_indices = [tuple(j for j in range(n) if version == 1 or j != i) for i in range(n)]
        self.slot_names = [tuple(self.names[j] for j in idx) for idx in self.slot_indices]

    @cached_property
    def frames(self) -> NDArray[np.int64]:
        """``(agents * (cells + 1), 2)``: row ``agent * (cells + 1) + cell`` is the agent's
        ``[x, y]`` of that cell in the game's frame; row ``cells`` of each agent is zero (trail
        padding). The row numbers are the trail keys of :class:`~maze_envs.escape.types.State`,
        so one ``take`` turns keys into coordinates."""
        board, config = self.board, self.config
        n = config.num_agents
        xy = np.array(board.xy, dtype=np.int64)
        if config.coordinates == "own":
            origins = xy[list(board.starts)]
        elif config.coordinates == "shared":
            origins = np.repeat(xy[board.starts[0]][None, :], n, axis=0)
        else:
            origins = np.zeros((n, 2), dtype=np.int64)
        frames = xy[None, :, :] - origins[:, None, :]
        frames = np.concatenate([frames, np.zeros((n, 1, 2), dtype=np.int64)], axis=1)
        flat = frames.reshape(-1, 2)
        flat.flags.writeable = False
        return flat


@dataclass(frozen=True)
class NumericField:
    """One field of the numeric observation (:mod:`maze_envs.escape.numeric`).

    It encodes the integer observation input(s) ``source``: an array key of the observation
    dict, or a column of :attr:`~maze_envs.escape.observe.ObservationArrays.base` (``turn``,
    ``last_action.move``, ...), or several of them in turn; ``repeat`` copies the source's
    entries that many times (the trail mask reads the trail length once per row). ``space`` says
    how: a ``Discrete``/``MultiDiscrete`` field is its code(s) (one-hot in the flattened vector;
    a ``MultiBinary`` field with ``onehot`` is the one-hot codes in either form); otherwise
    entry ``j`` of the inputs, an integer, becomes ``value(entries, j, float32)`` at column
    ``j`` (``float32``: the Dict form's arithmetic, float32 throughout; else float64, then
    rounded to float32, the flattened form's). A ``MultiBinary`` field (flags, hashed words) goes
    in the binary part of the flattened vector, a float ``Box`` in the continuous part. ``names``
    name each entry of the flattened vector. A field without ``source`` is written apart (the
    hashed text).
    """

    key: str
    space: spaces.Space[Any]
    source: str | tuple[str, ...]
    names: tuple[str, ...]
    value: Callable[[NDArray[np.int64], int, bool], NDArray[np.float32]] | None = None
    repeat: int = 1
    #: a binary field that is one-hot codes: the number of values of each entry
    onehot: tuple[int, ...] = ()


def flags(entries: NDArray[np.int64], j: int, float32: bool) -> NDArray[np.float32]:
    return entries.astype(np.float32)


def scaled(scales: Sequence[float]) -> Callable[[NDArray[np.int64], int, bool], Any]:
    """Entry ``j`` times ``scales[j % len(scales)]`` (Dict form in float32 arithmetic)."""

    def value(entries: NDArray[np.int64], j: int, float32: bool) -> NDArray[np.float32]:
        scale = scales[j % len(scales)]
        if float32:
            return entries.astype(np.float32) * np.float32(scale)
        return (entries * scale).astype(np.float32)

    return value


class Feature(ABC):
    """One optional observation feature (see the module docstring for what each part is for)."""

    #: Its name (what the conformance test reports).
    name: ClassVar[str]
    #: The :class:`~maze_envs.escape.config.Config` field that switches it on (default: its name).
    switch: ClassVar[str]
    #: Its keys in the observation dict, in order.
    keys: ClassVar[tuple[str, ...]]
    #: Its fields of the typed :class:`~maze_envs.escape.types.Observation` (JSON form alike;
    #: default: its keys).
    fields: ClassVar[tuple[str, ...]]
    #: Config overrides that switch it on (what tests and examples use; default: the switch
    #: ``True``).
    example: ClassVar[Mapping[str, Any]]
    #: When its keys' values change from one turn to the next (the change hint the journal is
    #: handed, :meth:`~maze_envs.escape.observe.Observer.changes`): ``"own_move"`` only when
    #: the agent moves, ``"any_move"`` when any agent moves, ``"turn"`` every turn.
    changes: ClassVar[Literal["own_move", "any_move", "turn"]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A declaration's defaults: its switch is the ``Config`` field of its name, its typed
        fields are its keys, and its example switches it on (``{switch: True}``)."""
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return
        if "switch" not in cls.__dict__:
            cls.switch = cls.name
        if "fields" not in cls.__dict__:
            cls.fields = cls.keys
        if "example" not in cls.__dict__:
            cls.example = {cls.switch: True}

    def enabled(self, config: Config) -> bool:
        """Whether the feature is on in ``config``."""
        return bool(getattr(config, self.switch))

    @abstractmethod
    def spaces(self, config: Config, slots: int) -> dict[str, spaces.Space[Any]]:
        """Its observation keys -> spaces, for an agent with ``slots`` agent slots."""

    @abstractmethod
    def observer(self, context: FeatureContext) -> Computation:
        """Its computation of one game (see :data:`Computation`); it runs every turn, so it
        is written for speed, and every array it hands out is new."""

    @abstractmethod
    def to_model(self, obs: Mapping[str, Any], slots: AgentSlots, values: dict[str, Any]) -> None:
        """Write its typed-model fields of one observation dict into ``values``, as plain Python
        values (the typed model is built from them without validating them again: give each
        field its type)."""

    @abstractmethod
    def from_model(
        self, data: Mapping[str, Any], config: Config, slots: AgentSlots
    ) -> dict[str, Any]:
        """Its observation-dict entries of the typed fields (or their JSON form) in ``data``."""

    @abstractmethod
    def legend(self, config: Config, legend: Mapping[str, str], trail: str) -> str:
        """Its line of the text legend (``legend``: the wording's legend section; ``trail``:
        the trail wording, ``"precise"`` or ``"plain"``)."""

    @abstractmethod
    def text(self, obs: Observation, label: Callable[[str], str]) -> list[str]:
        """Its lines of the text a model reads (``label``: the wording's labels)."""

    @abstractmethod
    def numeric(self, config: Config, slots: tuple[str, ...]) -> list[NumericField]:
        """Its fields of the numeric observation (agent slots: every agent, version 1)."""

    @abstractmethod
    def panel(self, data: Mapping[str, Any], config: Config) -> list[tuple[str, str]]:
        """Its rows (label, text) in the viewer, from the observation's JSON form."""


def frame_scale(config: Config) -> tuple[float, float]:
    """``[1 / (width - 1), 1 / (height - 1)]`` as float32 values (the numeric coordinates)."""
    scale = np.array(
        [1.0 / max(1, config.width - 1), 1.0 / max(1, config.height - 1)], dtype=np.float32
    )
    return float(scale[0]), float(scale[1])


def ints(value: Any) -> list[Any]:
    """An array (or sequence) as a list of plain Python values."""
    return value.tolist() if type(value) is np.ndarray else list(value)


def tenths(value: int) -> str:
    """A distance in tenths of a cell as cells with one decimal (``"3.2"``)."""
    return f"{value / 10:.1f}"
