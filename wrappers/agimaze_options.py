"""AGI Maze options as wrappers: the open/hidden map switch and reward shaping.

* :class:`MapVisibility` (and its shorthand :class:`HiddenMap`) blanks the public ``map`` text,
  or checks that the labyrinth shows one.
* :class:`RewardShaping` adds named, documented terms to the env's reward: the only way to
  shape it (the env's reward is +1 for a win, nothing else).

The step budget is not a wrapper: it is a rule of the game, set by the env's ``budget_factor``
and ``max_steps`` arguments (recorded in its journal and used by its score).

Both work on ``AgiMaze-v0`` and ``AgiMazeSet-v0``, however the env was built, and compose with
:class:`~wrappers.agimaze_numeric.AgiMazeNumericObservation` (put them inside it).

Example:
    >>> import gymnasium as gym
    >>> import maze_envs
    >>> env = gym.make("maze_envs/AgiMaze-v0", path="TUTORIAL/STAGE-01/0000.json")
    >>> env = RewardShaping(HiddenMap(env), step_penalty=0.01)
    >>> obs, info = env.reset(seed=0)
    >>> obs["map"], info["max_steps"]
    ('', 30)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> reward, info["reward_terms"]["step_penalty"]
    (-0.01, -0.01)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, SupportsFloat

import gymnasium as gym
from gymnasium import spaces

from maze_envs._registration import env_ids
from maze_envs.agimaze.types import BLOCKED_EVENTS
from wrappers.agimaze_numeric import LocalMapMemory

#: Events that count as progress for ``item_bonus`` (each happens at most once a labyrinth).
ITEM_EVENTS: Final = (
    "picked_key",
    "opened_treasure",
    "picked_exit_key",
    "picked_boat",
    "picked_flashlight",
    "picked_grenades",
)
#: Events of an action that met an obstacle, for ``bump_penalty``.
BUMP_EVENTS: Final = BLOCKED_EVENTS
_ITEMS: Final = frozenset(ITEM_EVENTS)
_BUMPS: Final = frozenset(BUMP_EVENTS)


def _check_agimaze(env: gym.Env[Any, Any], who: str) -> None:
    space = env.observation_space
    if not (isinstance(space, spaces.Dict) and "formal" in space.spaces):
        raise ValueError(
            f"{who} wraps an AGI Maze env ({' or '.join(env_ids('agimaze', labyrinth_set=None))}) "
            f"with its Dict observation; got observation space {space}"
        )


def _number(value: object, name: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)


class MapVisibility(gym.ObservationWrapper[Any, Any, Any]):
    """The open/hidden map switch of AGI Maze.

    Tutorial labyrinths (``open_map``) show the public map text with the player in the
    observation's ``map`` field; the others never do (``AgiMaze-v0`` has no ``map`` field for
    them, ``AgiMazeSet-v0`` leaves it empty). ``show=False`` blanks ``map`` to ``""`` (the field
    and the space stay, so vector envs and text renderers see the same layout): the player
    must build its own picture from the narration, as in the target labyrinths. ``show=True``
    keeps the map where the labyrinth allows and refuses, with a ValueError, an env that never
    shows one (a hidden labyrinth's map cannot be shown without leaking the labyrinth). The
    spectator ``render()`` is not affected.

    Example:
        >>> import gymnasium as gym
        >>> import maze_envs
        >>> env = MapVisibility(gym.make("maze_envs/AgiMaze-v0",
        ...                              path="TUTORIAL/STAGE-01/0000.json"), show=False)
        >>> env.reset(seed=0)[0]["map"]
        ''
    """

    def __init__(self, env: gym.Env[Any, Any], show: bool = False) -> None:
        super().__init__(env)
        _check_agimaze(env, "MapVisibility")
        if show not in (True, False):
            raise ValueError(f"show must be True or False, got {show!r}")
        assert isinstance(env.observation_space, spaces.Dict)  # checked above
        self._has_map = "map" in env.observation_space.spaces
        if show and not self._has_map:
            raise ValueError(
                "show=True needs a labyrinth with an open map (TUTORIAL, or a labyrinth set): "
                "this env never shows a map; use show=False or an open-map labyrinth"
            )
        self.show = bool(show)

    def observation(self, observation: Any) -> Any:
        if self.show or not self._has_map:
            return observation
        out = dict(observation)
        out["map"] = ""
        return out


class HiddenMap(MapVisibility):
    """:class:`MapVisibility` with ``show=False``: the ``map`` text is always blank.

    Example:
        >>> import gymnasium as gym
        >>> import maze_envs
        >>> env = HiddenMap(gym.make("maze_envs/AgiMazeSet-v0"))
        >>> env.reset(seed=0)[0]["map"]
        ''
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env, show=False)


class RewardShaping(gym.Wrapper[Any, Any, Any, Any]):
    """Add named shaping terms to the env's reward (+1 for leaving with the treasure).

    Terms (all default 0, so the wrapper starts as the identity):

    * ``step_penalty``: subtracted for every played step (one that used budget);
    * ``bump_penalty``: subtracted when the action met an obstacle (:data:`BUMP_EVENTS`:
      wall, monolith, the exit refusing the player);
    * ``item_bonus``: added per progress event (:data:`ITEM_EVENTS`: key, treasure, exit key,
      boat, flashlight, grenades), each at most once a labyrinth;
    * ``exploration_bonus``: added when the player enters a cell it has not visited before in
      this labyrinth (dead-reckoned from its own moves as in
      :class:`~wrappers.agimaze_numeric.LocalMapMemory`: no hidden state is read);
    * ``solve_bonus``: added on top of the env's +1 when the labyrinth is solved.

    ``info["reward_terms"]`` holds each term's contribution this step and ``"env"``, the env's
    own reward (+1 for a win). The env's former ``reward_shaping=True`` (0.1 for the key, the
    treasure and the exit key) is ``item_bonus=0.1`` on labyrinths without extension items.
    Shaping changes the return, not the score: RHAE (``info["rhae"]``) still measures steps
    only.

    Example:
        >>> import gymnasium as gym
        >>> import maze_envs
        >>> env = RewardShaping(gym.make("maze_envs/AgiMaze-v0",
        ...     path="TRAINING/S0-keys/STAGE-01/0005.json"), bump_penalty=0.1)
        >>> _ = env.reset(seed=0)
        >>> env.step(0)[1]  # "up" bumps a wall here
        -0.1
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        *,
        step_penalty: float = 0.0,
        bump_penalty: float = 0.0,
        item_bonus: float = 0.0,
        exploration_bonus: float = 0.0,
        solve_bonus: float = 0.0,
    ) -> None:
        super().__init__(env)
        _check_agimaze(env, "RewardShaping")
        self.terms: dict[str, float] = {
            "step_penalty": _number(step_penalty, "step_penalty"),
            "bump_penalty": _number(bump_penalty, "bump_penalty"),
            "item_bonus": _number(item_bonus, "item_bonus"),
            "exploration_bonus": _number(exploration_bonus, "exploration_bonus"),
            "solve_bonus": _number(solve_bonus, "solve_bonus"),
        }
        names = getattr(env.unwrapped, "action_names", None)
        self._names: list[str] = list(names) if names is not None else []
        self._memory = LocalMapMemory(radius=0) if exploration_bonus else None
        self._labyrinth: Any = None
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._new_labyrinth(info)
        return obs, info

    def _new_labyrinth(self, info: Mapping[str, Any]) -> None:
        self._labyrinth = (info.get("index"), info.get("name"))
        self._steps = int(info.get("steps") or 0)
        if self._memory is not None:
            self._memory.clear()

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        env_reward = float(reward)
        step_term = bump_term = item_term = explore_term = solve_term = 0.0
        formal = info.get("formal")
        steps = info.get("steps")
        if steps is not None and isinstance(formal, Mapping):
            if (info.get("index"), info.get("name")) != self._labyrinth:  # a set's next one
                self._new_labyrinth(info)
            played = int(steps) - self._steps
            self._steps = int(steps)
            events = formal.get("events") or ()
            weights = self.terms
            step_term = -weights["step_penalty"] * played
            for event in events:
                if event in _BUMPS:
                    bump_term = -weights["bump_penalty"]
                elif event in _ITEMS:
                    item_term += weights["item_bonus"]
                elif event == "exited" and info.get("solved"):
                    solve_term = weights["solve_bonus"]
            memory = self._memory
            index = int(action)
            if (
                memory is not None
                and played
                and 0 <= index < len(self._names)
                and memory.update(self._names[index], formal, str(obs.get("text", "")))
            ):
                explore_term = weights["exploration_bonus"]
        info["reward_terms"] = {
            "env": env_reward,
            "step_penalty": step_term,
            "bump_penalty": bump_term,
            "item_bonus": item_term,
            "exploration_bonus": explore_term,
            "solve_bonus": solve_term,
        }
        shaped = env_reward + step_term + bump_term + item_term + explore_term + solve_term
        return obs, shaped, terminated, truncated, info
