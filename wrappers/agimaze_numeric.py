"""Numeric AGI Maze observations for RL: :class:`AgiMazeNumericObservation`.

The raw ``AgiMaze-v0`` / ``AgiMazeSet-v0`` observation is a nested ``Dict`` with ``Text``
fields, which Stable-Baselines3 rejects and ``FlattenObservation`` turns into character indices.
This wrapper replaces it by flat numeric fields (``Discrete`` / ``MultiBinary`` / ``Box``) that
SB3's ``MultiInputPolicy`` accepts, or with ``flatten=True`` by a single ``Box`` for
``MlpPolicy``:

* ``status`` (``Discrete(2)``: success, blocked), ``observe`` (the tile or obstacle the last
  action met: one-hot ``MultiBinary`` or ``Discrete`` with ``observe_encoding="discrete"``),
  ``events`` (``MultiBinary``, one bit per event kind);
* ``inventory`` (``MultiBinary(5)``: key, treasure, exit key, boat, flashlight) and
  ``grenades`` (``Box`` in [0, 1]: the count held divided by 10, saturating at 10);
* ``budget`` (``Box(2)`` in [0, 1]: steps used / step budget, min(1, steps / max_steps));
* ``last_action`` (``Discrete(n + 1)``: the action index played last, ``n`` at the start);
* ``waiting`` (``Discrete(2)``, labyrinth sets only: 1 while the set waits for ``start``);
* ``local_map`` (with ``local_map=r``): a ``Box(0, 1, (2r+1, 2r+1, 12))`` egocentric grid
  centred on the player (rows top to bottom, columns left to right, channels last:
  :data:`MAP_CHANNELS`). SB3 flattens it (a float ``Box`` is not an image to it).

What the local map knows
------------------------
Only what the player experienced: the wrapper never reads the hidden labyrinth. It tracks the
player's position by dead reckoning from its own moves and the formal results (a ``moved``
event shifts it one cell; a river ride is read from the narration, which names each leg; a bump
or a refused exit leaves it in place). It records an *open* side for every edge crossed, a
*wall* side for every bump (wall or monolith), *exit* where the exit refused the player or a
flashlight beam ended at it, *item* where a locked chest or a beam showed an item still lying
there, *hazard* for rivers and pits entered or seen, and *visited* cells. A pit teleport puts
the player somewhere it cannot locate, so the map starts afresh there (the lost map is not
kept); a new labyrinth (reset, or ``start`` in a set) also starts an empty map. A bomb that
destroys a wall turns that side open. The open map text of tutorials is not used.

Example:
    >>> import gymnasium as gym
    >>> import maze_envs
    >>> env = AgiMazeNumericObservation(
    ...     gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0005.json"),
    ...     local_map=2)
    >>> obs, info = env.reset(seed=0)
    >>> obs["local_map"].shape, env.observation_space.contains(obs)
    ((5, 5, 12), True)
    >>> obs, *_ = env.step(0)  # "up" from this start: a wall
    >>> int(obs["status"]), obs["local_map"][2, 2, MAP_CHANNELS.index("wall_up")]
    (1, np.float32(1.0))
    >>> flat = AgiMazeNumericObservation(
    ...     gym.make("maze_envs/AgiMaze-v0", path="TUTORIAL/STAGE-01/0000.json"), flatten=True)
    >>> flat.reset(seed=0)[0].shape == flat.observation_space.shape
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, SupportsFloat, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from maze_envs._registration import env_ids
from maze_envs.agimaze.narration import read_ride
from maze_envs.agimaze.scoring import step_budget
from maze_envs.agimaze.spaces import EVENT_KINDS, INVENTORY_FLAGS, OBSERVE_KINDS
from maze_envs.agimaze.types import DIRECTIONS, MAX_SIDE, OPPOSITE_DIRECTION

#: Channels of the local map, by index.
MAP_CHANNELS: Final = (
    "visited",
    "wall_up",
    "wall_down",
    "wall_left",
    "wall_right",
    "open_up",
    "open_down",
    "open_left",
    "open_right",
    "exit",
    "item",
    "hazard",
)
_VISITED, _WALL, _OPEN, _EXIT, _ITEM, _HAZARD = 0, 1, 5, 9, 10, 11
_CHANNELS: Final = len(MAP_CHANNELS)
#: Grenades held at which the ``grenades`` feature saturates at 1.
GRENADE_SCALE: Final = 10
AGIMAZE_IDS: Final = " or ".join(env_ids("agimaze", labyrinth_set=None))
_DELTAS: Final = ((-1, 0), (1, 0), (0, -1), (0, 1))  # DIRECTIONS order: up, down, left, right
_OPPOSITE: Final = tuple(DIRECTIONS.index(OPPOSITE_DIRECTION[d]) for d in DIRECTIONS)
_DIRECTION_INDEX: Final[dict[str, int]] = {str(d): i for i, d in enumerate(DIRECTIONS)}
_ITEM_TILES: Final = frozenset(
    {"key", "treasure", "exit_key", "boat", "flashlight", "grenade_pack"}
)
_HAZARD_TILES: Final = frozenset({"river", "pit"})


class LocalMapMemory:
    """What the player learnt of one labyrinth, in dead-reckoned coordinates (see module doc).

    Example:
        >>> memory = LocalMapMemory(radius=1)
        >>> memory.update("right", {"status": "success", "observe": "empty",
        ...                         "events": ["moved"], "details": {}}, "")
        True
        >>> memory.window()[1, 1, MAP_CHANNELS.index("open_left")]
        np.float32(1.0)
    """

    def __init__(self, radius: int) -> None:
        if isinstance(radius, bool) or not isinstance(radius, int) or radius < 0:
            raise ValueError(f"radius must be an int >= 0, got {radius!r}")
        self.radius = radius
        # every dead-reckoned cell of a labyrinth, its window and its neighbours fit around it
        self._origin = MAX_SIDE + radius + 1
        side = 2 * self._origin + 1
        self._width = side
        # channel-last, so that a window is a few contiguous runs (a fast copy)
        self._grid = np.zeros((side, side, _CHANNELS), dtype=np.float32)
        # scalar writes through a memoryview are twice as fast as numpy indexing
        self._cells: Any = memoryview(cast(Any, self._grid.reshape(-1)))
        self._steps = (-side, side, -1, 1)  # DIRECTIONS order: up, down, left, right
        self._home = self._origin * side + self._origin  # cells are row * side + col
        self._here = self._home
        self.clear()

    def clear(self) -> None:
        """Forget everything; the player stands on the centre, visited."""
        self._grid.fill(0.0)
        self._here = self._home
        self._cells[self._home * _CHANNELS + _VISITED] = 1.0

    @property
    def position(self) -> tuple[int, int]:
        """The player's cell relative to where this map started (row, col)."""
        row, col = divmod(self._here, self._width)
        return row - self._origin, col - self._origin

    def window(self) -> np.ndarray:
        """A fresh ``(2r+1, 2r+1, channels)`` float32 array centred on the player."""
        r = self.radius
        row, col = divmod(self._here, self._width)
        return self._grid[row - r : row + r + 1, col - r : col + r + 1].copy()

    def write_window(self, out: np.ndarray) -> None:
        """Write :meth:`window` into ``out`` (any array of the same size, e.g. a flat slice)."""
        r = self.radius
        row, col = divmod(self._here, self._width)
        shape = (2 * r + 1, 2 * r + 1, _CHANNELS)
        out.reshape(shape)[...] = self._grid[row - r : row + r + 1, col - r : col + r + 1]

    def _mark(self, cell: int, side: int, channel: int) -> None:
        """Mark ``side`` of ``cell`` and the facing side of its neighbour wall or open."""
        cells = self._cells
        other = _WALL + _OPEN - channel
        at = cell * _CHANNELS + side
        cells[at + channel] = 1.0
        cells[at + other] = 0.0
        at = (cell + self._steps[side]) * _CHANNELS + _OPPOSITE[side]
        cells[at + channel] = 1.0
        cells[at + other] = 0.0

    def _move(self, side: int) -> bool:
        """Step one cell towards ``side`` through an open edge; False if it left the grid."""
        self._mark(self._here, side, _OPEN)
        cell = self._here + self._steps[side]
        if not self._inside(cell):  # impossible in a real labyrinth: start afresh
            self.clear()
            return False
        self._here = cell
        self._cells[cell * _CHANNELS + _VISITED] = 1.0
        return True

    def update(self, action: str, formal: Mapping[str, Any], text: str) -> bool:
        """Learn from one played action and its formal result; True when a new cell was entered.

        ``formal`` is the API's formal dict (``info["formal"]``); ``text`` the narration (read
        only for river rides, whose directions the formal observation omits).
        """
        events = formal.get("events") or ()
        side = _DIRECTION_INDEX.get(action)
        cells = self._cells
        if side is not None:  # a move
            if "moved" in events:
                fresh = not cells[(self._here + self._steps[side]) * _CHANNELS]
                if not self._move(side):
                    return fresh
                here = self._here
                cells[here * _CHANNELS + _ITEM] = 1.0 if "chest_locked" in events else 0.0
                if formal.get("observe") in _HAZARD_TILES:
                    cells[here * _CHANNELS + _HAZARD] = 1.0
                    if "pit_teleport" in events:  # somewhere unknown: a fresh map
                        self.clear()
                        return True
                    if "river_carried" in events:
                        return self._ride(text) or fresh
                return fresh
            if "bumped_wall" in events:
                self._mark(self._here, side, _WALL)
            elif "bumped_monolith" in events:  # the frame: nothing lies beyond it
                cells[self._here * _CHANNELS + _WALL + side] = 1.0
            elif "exit_blocked" in events or "exit_locked" in events:
                cells[self._here * _CHANNELS + _EXIT] = 1.0
            if "river_carried" in events:
                return self._ride(text)
            return False
        details = formal.get("details") or {}
        if "look" in events and isinstance(details.get("look"), Mapping):
            self._look(details["look"])
        elif "bomb_success" in events and action.startswith("bomb_"):
            bomb_side = _DIRECTION_INDEX.get(action[len("bomb_") :])
            if bomb_side is not None:
                self._mark(self._here, bomb_side, _OPEN)
        return False

    def _ride(self, text: str) -> bool:
        """Follow a river ride told in ``text``; a ride it cannot read starts a fresh map."""
        ride = read_ride(text)
        if ride is None:
            self.clear()
            return True
        fresh = False
        last = len(ride.moves) - 1
        cells = self._cells
        for i, move in enumerate(ride.moves):
            side = _DIRECTION_INDEX[move]
            fresh = fresh or not cells[(self._here + self._steps[side]) * _CHANNELS]
            if not self._move(side):
                return True
            mouth = ride.to_mouth and i == last
            cells[self._here * _CHANNELS + _HAZARD] = 0.0 if mouth else 1.0
        return fresh

    def _inside(self, cell: int) -> bool:
        row, col = divmod(cell, self._width)
        low, high = self.radius + 1, 2 * self._origin - self.radius - 1
        return low <= row <= high and low <= col <= high

    def _look(self, beam: Mapping[str, Any]) -> None:
        side = _DIRECTION_INDEX.get(str(beam.get("direction")))
        if side is None:
            return
        cells = self._cells
        cell = self._here
        for kind in beam.get("tiles") or ():
            self._mark(cell, side, _OPEN)
            cell += self._steps[side]
            if not self._inside(cell):
                return
            cells[cell * _CHANNELS + _ITEM] = 1.0 if kind in _ITEM_TILES else 0.0
            cells[cell * _CHANNELS + _HAZARD] = 1.0 if kind in _HAZARD_TILES else 0.0
        stop = beam.get("stop")
        if stop == "wall":
            self._mark(cell, side, _WALL)
        elif stop == "monolith":
            cells[cell * _CHANNELS + _WALL + side] = 1.0
        elif stop == "exit":
            cells[cell * _CHANNELS + _EXIT] = 1.0


class AgiMazeNumericObservation(gym.Wrapper[Any, Any, Any, Any]):
    """Numeric observation of an AGI Maze env (``AgiMaze-v0`` or ``AgiMazeSet-v0``).

    Args:
        env: an AGI Maze environment (possibly wrapped, e.g. by ``RewardShaping``).
        local_map: ``None`` (no map) or the radius ``r`` of the egocentric map.
        flatten: one float32 ``Box`` in [0, 1] instead of the ``Dict`` (layout:
            :attr:`flat_layout`), for ``MlpPolicy``.
        observe_encoding: ``"one_hot"`` (``MultiBinary``) or ``"discrete"`` for ``observe``.

    The budget is the env's, ``floor(budget_factor × max_steps)`` (``info["budget"]`` at an
    episode's end). Actions pass through.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        local_map: int | None = None,
        *,
        flatten: bool = False,
        observe_encoding: Literal["one_hot", "discrete"] = "one_hot",
    ) -> None:
        super().__init__(env)
        if observe_encoding not in ("one_hot", "discrete"):
            raise ValueError(
                f'observe_encoding must be "one_hot" or "discrete", got {observe_encoding!r}'
            )
        if flatten not in (True, False):
            raise ValueError(f"flatten must be True or False, got {flatten!r}")
        raw = env.observation_space
        if not (isinstance(raw, spaces.Dict) and {"formal", "inventory"} <= set(raw.spaces)):
            raise ValueError(
                f"AgiMazeNumericObservation wraps an AGI Maze env ({AGIMAZE_IDS}) whose "
                f"observation has formal and inventory; got {raw}"
            )
        names = getattr(env.unwrapped, "action_names", None)
        if not isinstance(env.action_space, spaces.Discrete) or names is None:
            raise ValueError("AgiMazeNumericObservation needs a Discrete AGI Maze action space")
        self._names: list[str] = list(names)
        self._set = "waiting" in raw.spaces
        self._memory = LocalMapMemory(local_map) if local_map is not None else None
        self._flatten = flatten
        self._one_hot = observe_encoding == "one_hot"
        n = len(self._names)
        fields: dict[str, spaces.Space[Any]] = {
            "status": spaces.Discrete(2),
            "observe": (
                spaces.MultiBinary(len(OBSERVE_KINDS))
                if self._one_hot
                else spaces.Discrete(len(OBSERVE_KINDS))
            ),
            "events": spaces.MultiBinary(len(EVENT_KINDS)),
            "inventory": spaces.MultiBinary(len(INVENTORY_FLAGS)),
            "grenades": spaces.Box(0.0, 1.0, (1,), np.float32),
            "budget": spaces.Box(0.0, 1.0, (2,), np.float32),
            "last_action": spaces.Discrete(n + 1),
        }
        if self._set:
            fields["waiting"] = spaces.Discrete(2)
        if self._memory is not None:
            side = 2 * self._memory.radius + 1
            fields["local_map"] = spaces.Box(0.0, 1.0, (side, side, _CHANNELS), np.float32)
        self._dict_space = spaces.Dict(fields)
        sizes = {
            "status": 2,
            "observe": len(OBSERVE_KINDS),
            "events": len(EVENT_KINDS),
            "inventory": len(INVENTORY_FLAGS),
            "grenades": 1,
            "budget": 2,
            "last_action": n + 1,
            "waiting": 2,
            "local_map": len(MAP_CHANNELS) * (2 * self._memory.radius + 1) ** 2
            if self._memory is not None
            else 0,
        }
        layout: dict[str, slice] = {}
        offset = 0
        for key in fields:
            layout[key] = slice(offset, offset + sizes[key])
            offset += sizes[key]
        #: Where each field lies in the ``flatten=True`` vector (Discrete fields one-hot).
        self.flat_layout: dict[str, slice] = layout
        self._size = offset
        self.observation_space = (
            spaces.Box(0.0, 1.0, (offset,), np.float32) if flatten else self._dict_space
        )
        self._at = {key: where.start for key, where in layout.items()}
        self._none = n  # the last_action value before any action
        self._observe_rows = list(np.eye(len(OBSERVE_KINDS), dtype=np.int8))  # copied per use
        self._held_cache: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        factor = getattr(env.unwrapped, "budget_factor", None)
        self._factor = float(factor) if isinstance(factor, (int, float)) else 0.0
        self._steps = 0
        self._max_steps = 0
        self._budget = 0
        self._last = n
        self._episode_key: tuple[Any, ...] = ()

    @property
    def memory(self) -> LocalMapMemory | None:
        """The local map memory (None without ``local_map``)."""
        return self._memory

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._steps = int(info.get("steps") or 0)
        self._max_steps = int(info.get("max_steps") or 0)
        self._budget = self._budget_of(info)
        self._last = self._none
        self._episode_key = (info.get("index"), bool(obs.get("waiting", 0)))
        if self._memory is not None:
            self._memory.clear()
        return self._encode(obs), info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        index = int(action)
        if not 0 <= index < self._none:
            index = self._none
        waiting = False
        if self._set:
            waiting = bool(obs["waiting"])
            key = (info.get("index"), waiting)
            if key != self._episode_key:  # a labyrinth of the set started or ended: a new map
                self._episode_key = key
                if self._memory is not None:
                    self._memory.clear()
        steps = info.get("steps")
        if steps is not None:  # an action played in a running labyrinth
            self._steps = int(steps)
            if info.get("max_steps") != self._max_steps or "budget" in info:
                self._max_steps = int(info.get("max_steps") or 0)
                self._budget = self._budget_of(info)
        if waiting:
            self._steps = self._max_steps = self._budget = 0
        memory = self._memory
        if memory is not None and not waiting and index < self._none:
            formal = info.get("formal")
            if isinstance(formal, Mapping) and info.get("error") is None:
                memory.update(self._names[index], formal, str(obs.get("text", "")))
        self._last = index
        return self._encode(obs), reward, terminated, truncated, info

    def _budget_of(self, info: Mapping[str, Any]) -> int:
        given = info.get("budget")
        if given:
            return int(given)
        max_steps = int(info.get("max_steps") or 0)
        factor = self._factor
        return step_budget(factor, max_steps) if factor and max_steps else 0

    def _features(self) -> list[float]:
        used = min(1.0, self._steps / self._budget) if self._budget else 0.0
        ref = min(1.0, self._steps / self._max_steps) if self._max_steps else 0.0
        return [used, ref]

    def _held(self, inventory: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The inventory as float32 [key, ..., flashlight, grenades / 10], then its int8 flags
        and its float32 grenades part (cached templates: copy before returning them)."""
        key = tuple(inventory.values())
        held = self._held_cache.get(key)
        if held is None:
            grenades = min(1.0, int(inventory["grenades"]) / GRENADE_SCALE)
            flags = [int(inventory[k]) for k in INVENTORY_FLAGS]
            held = (
                np.array([*flags, grenades], dtype=np.float32),
                np.array(flags, dtype=np.int8),
                np.array([grenades], dtype=np.float32),
            )
            self._held_cache[key] = held
        return held

    def _encode(self, obs: Mapping[str, Any]) -> Any:
        formal = obs["formal"]
        observe = int(formal["observe"])
        held, flags, grenades = self._held(obs["inventory"])
        if self._flatten:
            return self._encode_flat(obs, formal, held, observe)
        out: dict[str, Any] = {
            "status": int(formal["status"]),
            "observe": self._observe_rows[observe].copy() if self._one_hot else observe,
            "events": self._events(formal["events"]),
            "inventory": flags.copy(),
            "grenades": grenades.copy(),
            "budget": np.array(self._features(), dtype=np.float32),
            "last_action": self._last,
        }
        if self._set:
            out["waiting"] = int(obs["waiting"])
        if self._memory is not None:
            out["local_map"] = self._memory.window()
        return out

    @staticmethod
    def _events(events: Any) -> np.ndarray:
        """The env's event flags as our own array: the int8 array the env encoded for this
        step is new and reaches no one but this wrapper, so it is handed on as it is (a copy
        for anything else)."""
        if type(events) is np.ndarray and events.dtype == np.int8 and events.base is None:
            return events
        return np.array(events, dtype=np.int8)

    def _encode_flat(
        self, obs: Mapping[str, Any], formal: Mapping[str, Any], held: np.ndarray, observe: int
    ) -> np.ndarray:
        at = self._at
        vec = np.zeros(self._size, dtype=np.float32)
        vec[at["status"] + int(formal["status"])] = 1.0
        vec[at["observe"] + observe] = 1.0
        vec[at["events"] : at["inventory"]] = formal["events"]
        vec[at["inventory"] : at["budget"]] = held  # inventory then grenades
        used, ref = self._features()
        vec[at["budget"]] = used
        vec[at["budget"] + 1] = ref
        vec[at["last_action"] + self._last] = 1.0
        if self._set:
            vec[at["waiting"] + int(obs["waiting"])] = 1.0
        if self._memory is not None:
            self._memory.write_window(vec[self.flat_layout["local_map"]])
        return vec
