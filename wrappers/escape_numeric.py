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

from maze_envs.escape.spaces import max_distance_tenths
from maze_envs.escape.vocab import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
)
from wrappers.escape_base import EscapeWrapper, require_v1
from wrappers.escape_numeric_plan import NumericPlan, hash_text

__all__ = ["EscapeNumericObservation", "hash_text"]

TextMode = Literal["drop", "hash"]
EdgeMode = Literal["onehot", "codes"]
_LAST_ACTION: Final = (len(MOVE_RESULTS), len(NOTEBOOK_RESULTS), len(RADIO_RESULTS))


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
        n = self.n = config.num_agents
        self.slots = config.agents
        self._inv_turns = 1.0 / config.max_turns
        self._inv_cooldown = 1.0 / config.radio_cooldown if config.radio_cooldown else 0.0
        self._inv_top = 1.0 / max_distance_tenths(config)
        self._scale = np.array(
            [1.0 / max(1, config.width - 1), 1.0 / max(1, config.height - 1)], dtype=np.float32
        )
        frame_low = -1.0 if config.coordinates in ("own", "shared") else 0.0
        k = config.trail_length
        fields: dict[str, spaces.Space[Any]] = {
            "edges": (
                spaces.MultiBinary(len(DIRECTIONS) * len(EDGE_KINDS))
                if edges == "onehot"
                else spaces.MultiDiscrete([len(EDGE_KINDS)] * len(DIRECTIONS))
            ),
            "on_exit": spaces.Discrete(2),
            "landmark": spaces.Discrete(len(LANDMARK_NAMES) + 1),
            "time": spaces.Box(0.0, 1.0, (2,), np.float32),
            "last_action": spaces.MultiDiscrete(list(_LAST_ACTION)),
            "radio_cooldown": spaces.Box(0.0, 1.0, (1,), np.float32),
            "radio_heard": spaces.MultiBinary(n),
            "notebook_shown": spaces.MultiBinary(n),
        }
        if config.distance_sensor:
            fields["distances"] = spaces.Box(0.0, 1.0, (1 + n,), np.float32)
        if config.coordinates is not None:
            fields["position"] = spaces.Box(frame_low, 1.0, (2,), np.float32)
        if k:
            fields["trail"] = spaces.Box(frame_low, 1.0, (k, 2), np.float32)
            fields["trail_mask"] = spaces.MultiBinary(k)
        if config.meeting_alert:
            fields["colocated_with"] = spaces.MultiBinary(n)
        if config.used_exits:
            fields["used_exits"] = spaces.MultiBinary(len(DIRECTIONS))
        if text == "hash":
            fields["notebook_hash"] = spaces.MultiBinary(hash_buckets)
            fields["radio_hash"] = spaces.MultiBinary(n * hash_buckets)
            fields["teammate_hash"] = spaces.MultiBinary(n * hash_buckets)
            fields["reasons_hash"] = spaces.MultiBinary(hash_buckets)
        self.fields = fields
        self._layout = _FlatLayout(fields, config)
        space: spaces.Space[Any]
        if flatten:
            low, high = self._layout.bounds()
            space = spaces.Box(low, high, dtype=np.float32)
        else:
            space = spaces.Dict(fields)
        self._spaces = {a: space for a in env.possible_agents}
        self._plan = NumericPlan(self, below)

    # --- the transform --------------------------------------------------------------------------
    def observation(self, agent: str, obs: Any, raw: Any) -> Any:
        return self.encode([raw])[0]

    def observations(self, observations: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
        names = list(observations)
        return dict(zip(names, self.encode([raw[a] for a in names]), strict=True))

    def encode(self, raws: list[Any]) -> list[Any]:
        """The numeric observations of a list of the env's observations (one pass for all)."""
        return self._plan.encode(raws)

    def feature_names(self) -> list[str]:
        """A name per entry of the flattened vector (``edges[N=open]``, ``time[0]``, ...):
        binary and one-hot features first, then the continuous ones.

        Example:
            >>> from maze_envs import maze_escape_v1
            >>> env = EscapeNumericObservation(maze_escape_v1.parallel_env(width=7, height=7))
            >>> env.feature_names()[:4]
            ['edges[N=open]', 'edges[N=interior_wall]', 'edges[N=outer_brick]', 'edges[E=open]']
            >>> len(env.feature_names()) == env._layout.size
            True
        """
        return list(self._layout.names)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]


#: The fields of the flattened vector, in order: binary and one-hot fields, then continuous.
_BINARY: Final = (
    "edges",
    "on_exit",
    "landmark",
    "last_action",
    "radio_heard",
    "notebook_shown",
    "trail_mask",
    "colocated_with",
    "used_exits",
    "notebook_hash",
    "radio_hash",
    "teammate_hash",
    "reasons_hash",
)
_CONTINUOUS: Final = ("time", "radio_cooldown", "distances", "position", "trail")


def _flat_size(space: spaces.Space[Any]) -> int:
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(space.nvec.sum())
    return int(np.prod(space.shape or (1,)))


class _FlatLayout:
    """Where each field starts in the flattened vector, its bounds and its feature names."""

    def __init__(self, fields: dict[str, spaces.Space[Any]], config: Any) -> None:
        order = [key for key in (*_BINARY, *_CONTINUOUS) if key in fields]
        self.fields = {key: fields[key] for key in order}
        self.start: dict[str, int] = {}
        self.names: list[str] = []
        offset = 0
        for key, space in self.fields.items():
            size = len(DIRECTIONS) * len(EDGE_KINDS) if key == "edges" else _flat_size(space)
            self.start[key] = offset
            self.names += _names(key, size, config.agents)
            offset += size
        self.size = offset

    def bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        low = np.zeros(self.size, dtype=np.float32)
        high = np.ones(self.size, dtype=np.float32)
        for key, space in self.fields.items():
            if isinstance(space, spaces.Box):
                start = self.start[key]
                low[start : start + _flat_size(space)] = space.low.ravel()
                high[start : start + _flat_size(space)] = space.high.ravel()
        return low, high


def _names(key: str, size: int, slots: tuple[str, ...]) -> list[str]:
    """The feature names of one field in the flattened vector."""
    if key == "edges":
        return [f"edges[{d}={k}]" for d in DIRECTIONS for k in EDGE_KINDS]
    if key == "landmark":
        return ["landmark=none"] + [f"landmark={name}" for name in LANDMARK_NAMES]
    if key == "last_action":
        return (
            [f"last_action.move={r}" for r in MOVE_RESULTS]
            + [f"last_action.notebook={r}" for r in NOTEBOOK_RESULTS]
            + [f"last_action.radio={r}" for r in RADIO_RESULTS]
        )
    if key in ("radio_heard", "notebook_shown", "colocated_with"):
        return [f"{key}[{s}]" for s in slots]
    if key == "distances":
        return ["distances[exit]"] + [f"distances[{s}]" for s in slots]
    if key == "trail":
        return [f"trail[{i}].{c}" for i in range(size // 2) for c in "xy"]
    if key == "used_exits":
        return [f"used_exits[{d}]" for d in DIRECTIONS]
    return [f"{key}[{i}]" for i in range(size)]
