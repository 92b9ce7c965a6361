"""Numeric observations of Maze Escape for reinforcement learning (SB3 ``MultiInputPolicy`` or
``MlpPolicy``).

:class:`EscapeNumericObservation` turns each agent's observation (text fields, nested dicts)
into a flat ``Dict`` of ``Box`` / ``MultiBinary`` / ``Discrete`` / ``MultiDiscrete`` spaces, the
same space for every agent (it needs ``maze_escape_v1``). Keys, with ``n`` agents, a trail of
``K`` turns and ``B`` hash buckets (optional keys only when their feature is on in the config):

==================  =====================  ==================================================
key                 space                  value
==================  =====================  ==================================================
edges               MultiBinary(12)        one-hot edge kinds, direction-major: N open, N
                                           interior wall, N outer brick, E open, ... W outer
                                           brick (``edges="codes"``: MultiDiscrete([3]*4),
                                           the env's codes)
on_exit             Discrete(2)            1 on the exit cell
landmark            Discrete(25)           0 none, else 1 + index into ``LANDMARK_NAMES``
time                Box([0,1], (2,))       ``[turn, turns_left] / max_turns``
last_action         MultiDiscrete([6,3,3]) last move, notebook and radio result codes
radio_cooldown      Box([0,1], (1,))       turns until the radio may send / ``radio_cooldown``
radio_heard         MultiBinary(n)         1 per agent slot that radioed last turn
notebook_shown      MultiBinary(n)         1 per agent slot whose notebook is shown here
distances           Box([0,1], (1+n,))     exit then agents, tenths / the maze's diagonal
position            Box((2,))              ``[x, y] / [width-1, height-1]`` (own/shared
                                           frames: in [-1, 1]; absolute: in [0, 1])
trail               Box((K, 2))            the trail, scaled like ``position``
trail_mask          MultiBinary(K)         1 for the rows of the trail that are real
colocated_with      MultiBinary(n)         the env's meeting alert
used_exits          MultiBinary(4)         the env's used exits
notebook_hash       MultiBinary(B)         ``text="hash"`` only: hashed words of the notebook
radio_hash          MultiBinary(n*B)       ... of each slot's radio message (slot-major)
teammate_hash       MultiBinary(n*B)       ... of each shown teammate notebook
reasons_hash        MultiBinary(B)         ... of the last action's rejection reasons
==================  =====================  ==================================================

Agent slots are every agent in name order, the agent's own slot blank (as in ``maze_escape_v1``).
Free text is dropped (``text="drop"``, the default: only the presence flags ``radio_heard`` and
``notebook_shown`` remain) or hashed (``text="hash"``): lower-cased words (``\\w+``), each
setting bucket ``crc32(word) % hash_buckets`` (a stable hash: the same in every process).
Float boxes are ``float32``, binary arrays ``int8``; every observation is a member of the
declared space and new (shared with no other observation: the arrays of one turn are
non-overlapping views of a buffer allocated for that turn; see :mod:`wrappers.escape_numeric_plan`).

``flatten=True`` gives one ``Box(float32)`` instead, for ``MlpPolicy``: the binary fields
first (in the table's order; ``edges``, ``on_exit``, ``landmark`` and ``last_action`` one-hot,
the ``MultiBinary`` ones as 0/1), then the boxes' values (``time``, ``radio_cooldown``,
``distances``, ``position``, ``trail``). ``feature_names()`` names every entry of the vector.

The fields of the optional features (``distances`` ... ``used_exits``) are those the features
declare (:mod:`maze_envs.escape.features`, their ``numeric``), so a new feature comes with its
numeric form and none is dropped. The wrapper reads the integers the environment exposes
(:meth:`~maze_envs.escape.env.MazeEscapeEnv.observation_arrays`), not the Dict observation.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.escape_numeric import EscapeNumericObservation
    >>> base = maze_escape_v1.parallel_env(preset="full", width=7, height=7)
    >>> env = EscapeNumericObservation(base)
    >>> observations, infos = env.reset(seed=2)
    >>> observations["A"]["edges"].reshape(4, 3).argmax(axis=1).tolist()  # back to edge codes
    [2, 0, 0, 0]
    >>> env.observation_space("A").contains(observations["A"])
    True
    >>> flat = EscapeNumericObservation(maze_escape_v1.parallel_env(preset="sparse"), flatten=True)
    >>> flat.observation_space("B").shape
    (64,)
"""

from __future__ import annotations

from typing import Any, Final, Literal

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo.utils.env import ParallelEnv

from maze_envs.escape.config import Config
from maze_envs.escape.features import NumericField, enabled_features
from maze_envs.escape.features.base import scaled
from maze_envs.escape.vocab import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
)
from wrappers.escape_base import EscapeWrapper, require_v1
from wrappers.escape_numeric_plan import NumericPlan, field_size, hash_text, is_binary

__all__ = ["EscapeNumericObservation", "hash_text"]

TextMode = Literal["drop", "hash"]
EdgeMode = Literal["onehot", "codes"]
_LAST_ACTION: Final = (len(MOVE_RESULTS), len(NOTEBOOK_RESULTS), len(RADIO_RESULTS))


def _flags(entries: NDArray[np.int64], j: int, float32: bool) -> NDArray[np.float32]:
    return entries.astype(np.float32)


def base_fields(config: Config, edges: EdgeMode) -> list[NumericField]:
    """The fields every numeric observation has (the features' follow them)."""
    slots = config.agents
    n = len(slots)
    edge_names = tuple(f"edges[{d}={k}]" for d in DIRECTIONS for k in EDGE_KINDS)
    codes = spaces.MultiDiscrete([len(EDGE_KINDS)] * len(DIRECTIONS))
    cooldown = 1.0 / config.radio_cooldown if config.radio_cooldown else 0.0
    return [
        NumericField(
            "edges",
            spaces.MultiBinary(len(edge_names)) if edges == "onehot" else codes,
            "edges",
            edge_names,
            onehot=(len(EDGE_KINDS),) * len(DIRECTIONS) if edges == "onehot" else (),
        ),
        NumericField("on_exit", spaces.Discrete(2), "on_exit", ("on_exit[0]", "on_exit[1]")),
        NumericField(
            "landmark",
            spaces.Discrete(len(LANDMARK_NAMES) + 1),
            "landmark",
            ("landmark=none", *(f"landmark={name}" for name in LANDMARK_NAMES)),
        ),
        NumericField(
            "time",
            spaces.Box(0.0, 1.0, (2,), np.float32),
            ("turn", "turns_left"),
            ("time[0]", "time[1]"),
            scaled([1.0 / config.max_turns]),
        ),
        NumericField(
            "last_action",
            spaces.MultiDiscrete(list(_LAST_ACTION)),
            ("last_action.move", "last_action.notebook", "last_action.radio"),
            (
                *(f"last_action.move={r}" for r in MOVE_RESULTS),
                *(f"last_action.notebook={r}" for r in NOTEBOOK_RESULTS),
                *(f"last_action.radio={r}" for r in RADIO_RESULTS),
            ),
        ),
        NumericField(
            "radio_cooldown",
            spaces.Box(0.0, 1.0, (1,), np.float32),
            "last_action.radio_cooldown",
            ("radio_cooldown[0]",),
            scaled([cooldown]),
        ),
        NumericField(
            "radio_heard",
            spaces.MultiBinary(n),
            "radio_heard",
            tuple(f"radio_heard[{s}]" for s in slots),
            _flags,
        ),
        NumericField(
            "notebook_shown",
            spaces.MultiBinary(n),
            "notebook_shown",
            tuple(f"notebook_shown[{s}]" for s in slots),
            _flags,
        ),
    ]


def hash_fields(n: int, buckets: int) -> list[NumericField]:
    """The hashed-text fields (``text="hash"``), written apart from the scatter."""

    def field(key: str, size: int) -> NumericField:
        return NumericField(
            key, spaces.MultiBinary(size), (), tuple(f"{key}[{i}]" for i in range(size))
        )

    return [
        field("notebook_hash", buckets),
        field("radio_hash", n * buckets),
        field("teammate_hash", n * buckets),
        field("reasons_hash", buckets),
    ]


class EscapeNumericObservation(EscapeWrapper):
    """Maze Escape observations as numeric arrays (see the module docstring for the keys)."""

    def __init__(
        self,
        env: ParallelEnv[str, Any, Any],
        *,
        text: TextMode = "drop",
        hash_buckets: int = 32,
        flatten: bool = False,
        edges: EdgeMode = "onehot",
    ) -> None:
        super().__init__(env)
        require_v1(env, "EscapeNumericObservation")
        if text not in ("drop", "hash"):
            raise ValueError(f"text must be 'drop' or 'hash', got {text!r}")
        if edges not in ("onehot", "codes"):
            raise ValueError(f"edges must be 'onehot' or 'codes', got {edges!r}")
        if isinstance(hash_buckets, bool) or not isinstance(hash_buckets, int) or hash_buckets < 1:
            raise ValueError(f"hash_buckets must be an int >= 1, got {hash_buckets!r}")
        below = env.observation_space(env.possible_agents[0])
        if not isinstance(below, spaces.Dict) or "action_mask" in below.spaces:
            raise ValueError(
                "EscapeNumericObservation needs the env's own observations below it: apply it "
                "directly to the env (or over MoveOnlyActions), and EscapeActionMasks outside it"
            )
        self.text, self.hash_buckets, self.flatten, self.edge_mode = (
            text,
            hash_buckets,
            flatten,
            edges,
        )
        config = self.config
        self.n = config.num_agents
        self.slots = config.agents
        numeric = base_fields(config, edges)
        for feature in enabled_features(config):  # every feature declares its numeric form
            numeric += feature.numeric(config, self.slots)
        if text == "hash":
            numeric += hash_fields(self.n, hash_buckets)
        self.numeric_fields = numeric
        self.fields: dict[str, spaces.Space[Any]] = {f.key: f.space for f in numeric}
        self._names = [
            name
            for f in [
                *(f for f in numeric if is_binary(f.space)),
                *(f for f in numeric if not is_binary(f.space)),
            ]
            for name in f.names
        ]
        self._plan = NumericPlan(
            numeric,
            below,
            self.slots,
            flatten=flatten,
            hash_buckets=hash_buckets if text == "hash" else None,
        )
        space: spaces.Space[Any]
        if flatten:
            low, high = self._bounds(numeric)
            space = spaces.Box(low, high, dtype=np.float32)
        else:
            space = spaces.Dict(self.fields)
        self._spaces = {a: space for a in env.possible_agents}
        self._agent_rows = {a: i for i, a in enumerate(env.possible_agents)}

    def _bounds(
        self, numeric: list[NumericField]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        width = self._plan.width
        low = np.zeros(width, dtype=np.float32)
        high = np.ones(width, dtype=np.float32)
        for field in numeric:
            if isinstance(field.space, spaces.Box):
                start, size = self._plan.start[field.key], field_size(field)
                low[start : start + size] = field.space.low.ravel()
                high[start : start + size] = field.space.high.ravel()
        return low, high

    # --- the transform --------------------------------------------------------------------------
    def observation(self, agent: str, obs: Any, raw: Any) -> Any:
        arrays = self._arrays_of(raw, agent)
        if arrays is not None:
            return self._plan.encode_arrays(arrays, [self._agent_rows[agent]])[0]
        return self.encode([raw])[0]

    def observations(self, observations: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
        names = list(observations)
        arrays = self._arrays_of(raw[names[0]], names[0]) if names else None
        if arrays is not None and names == self.base_env.possible_agents:
            encoded = self._plan.encode_arrays(arrays)
        else:
            encoded = self.encode([raw[a] for a in names])
        return dict(zip(names, encoded, strict=True))

    def _arrays_of(self, raw: Any, agent: str) -> Any:
        """The env's observation arrays when ``raw`` is its latest observation of ``agent``."""
        try:
            arrays = self.base_env.observation_arrays()
        except (RuntimeError, ValueError):
            return None
        return arrays if arrays.observations[self._agent_rows[agent]] is raw else None

    def encode(self, raws: list[Any]) -> list[Any]:
        """The numeric observations of a list of the env's observation dicts (one pass)."""
        return self._plan.encode(raws)

    def feature_names(self) -> list[str]:
        """A name per entry of the flattened vector (``edges[N=open]``, ``time[0]``, ...):
        binary and one-hot features first, then the continuous ones.

        Example:
            >>> from maze_envs import maze_escape_v1
            >>> env = EscapeNumericObservation(maze_escape_v1.parallel_env(width=7, height=7))
            >>> env.feature_names()[:4]
            ['edges[N=open]', 'edges[N=interior_wall]', 'edges[N=outer_brick]', 'edges[E=open]']
            >>> len(env.feature_names()) == env._plan.width
            True
        """
        return list(self._names)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]
