"""AGI Maze as a Gymnasium environment: one labyrinth per episode.

Example:
    >>> import gymnasium as gym
    >>> import maze_envs  # registers the environments
    >>> env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0005.json")
    >>> obs, info = env.reset(seed=0)
    >>> obs["text"], info["max_steps"], env.unwrapped.action_names
    ('Game has started.', 70, ['up', 'down', 'left', 'right'])
    >>> obs, reward, terminated, truncated, info = env.unwrapped.step_name("up")
    >>> sorted(info)
    ['error', 'events', 'formal', 'max_steps', 'name', 'solved', 'steps']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from maze_envs.agimaze.compiled import CompiledLabyrinth, PlayerState
from maze_envs.agimaze.engine import (
    InvalidActionError,
    compile_labyrinth,
    initial_state,
    transition,
)
from maze_envs.agimaze.formal import inventory, start_formal
from maze_envs.agimaze.mapfmt import render_map
from maze_envs.agimaze.narration import START as START_TEXT
from maze_envs.agimaze.packs import list_bundles, pack_root, resolve_pack_path
from maze_envs.agimaze.scoring import DEFAULT_FACTOR, rhae
from maze_envs.agimaze.spaces import (
    MAP_MAX_LENGTH,
    clean_text,
    encode_formal,
    encode_inventory,
    formal_space,
    inventory_space,
    text_space,
)
from maze_envs.agimaze.types import BOMB_ACTIONS, DIRECTIONS, LOOK_ACTIONS, Bundle, Labyrinth

#: Reference budget used when neither the labyrinth nor the caller gives one (the public agents'
#: fallback when ``max_steps`` is missing).
FALLBACK_MAX_STEPS: Final = 200
#: Evaluation budget as a multiple of the reference ``max_steps`` (EnvTraverse uses 5).
DEFAULT_BUDGET_FACTOR: Final = 5.0
#: Extra reward of ``reward_shaping=True``, per event (each happens at most once an episode).
SHAPING_REWARDS: Final[dict[str, float]] = {
    "picked_key": 0.1,
    "opened_treasure": 0.1,
    "picked_exit_key": 0.1,
}
#: Gymnasium metadata of both AGI Maze environments.
RENDER_METADATA: Final[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
_CANONICAL_ACTIONS: Final = (*DIRECTIONS, *LOOK_ACTIONS, *BOMB_ACTIONS)


def ordered_actions(names: Iterable[str]) -> list[str]:
    """Distinct action names in the API's order (moves, look_*, bomb_*, then others as met)."""
    seen = list(dict.fromkeys(names))
    known = [a for a in _CANONICAL_ACTIONS if a in seen]
    return known + [a for a in seen if a not in _CANONICAL_ACTIONS]


def action_name(names: Sequence[str], action: Any) -> str:
    """The name of ``action``, an element of ``Discrete(len(names))`` (an index into ``names``).

    Accepts what ``Discrete.contains`` accepts (Python and numpy integers, 0-d integer arrays);
    raises ValueError for anything else (out of range, a float, a string), never rounding.
    """
    if isinstance(action, (int, np.integer)) or (
        isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu"
    ):
        index = int(action)
        if 0 <= index < len(names):
            return names[index]
    raise ValueError(
        f"action {action!r} is outside Discrete({len(names)}); give an integer index of "
        f"{', '.join(names)}"
    )


def action_index(names: Sequence[str], name: str) -> int:
    """The index of action ``name`` in ``names``; ValueError listing the names otherwise."""
    try:
        return names.index(name)
    except ValueError:
        raise ValueError(f"unknown action {name!r}; the actions are {', '.join(names)}") from None


def reference_max_steps(bundle: Bundle) -> int | None:
    """The reference step budget of a bundle: the labyrinth's, else its stage's hard limit."""
    return bundle.labyrinth.max_steps or bundle.meta.hard_max_steps


@dataclass(slots=True)
class EpisodeStart:
    """What a backend reports when an episode starts."""

    name: str
    actions: list[str]
    max_steps: int | None
    open_map: bool
    text: str
    formal: dict[str, Any]
    map: str | None


@dataclass(slots=True)
class StepOutcome:
    """What a backend reports for one action; ``error`` is set for a rejected action."""

    text: str
    formal: dict[str, Any]
    won: bool
    map: str | None
    error: dict[str, Any] | None = None


def rejected_action(action: str, allowed: list[str], held: dict[str, Any]) -> StepOutcome:
    """The outcome of an action the current labyrinth does not offer: nothing is played."""
    formal: dict[str, Any] = {
        "status": "blocked",
        "observe": "other",
        "events": [],
        "inventory": held,
        "details": {},
    }
    # a remote server chooses the names: keep the text inside the observation space
    text = clean_text(f"Invalid action {action!r}: this labyrinth allows {', '.join(allowed)}.")
    error = {"error": "bad_action", "action": action, "allowed": list(allowed)}
    return StepOutcome(text, formal, False, None, error)


class Backend(Protocol):
    """Where the game runs: the embedded engine or a server over HTTP."""

    def start(self, seed: int) -> EpisodeStart: ...

    def step(self, action: str) -> StepOutcome: ...

    def render(self) -> str: ...

    def close(self) -> None: ...


class LocalBackend:
    """Runs labyrinths on the embedded engine.

    ``source`` is a pack path (a bundle, or a directory from which each start draws one bundle
    with ``numpy.random.default_rng(seed)``, the same draw as ``maze-envs agimaze serve``) under
    ``root`` (default: the shipped packs), or a labyrinth object.
    """

    def __init__(
        self,
        source: str | Labyrinth | Bundle,
        max_steps: int | None = None,
        root: str | Path | None = None,
    ) -> None:
        self._max_steps_override = max_steps
        self._directory: str | None = None
        self._root = None if root is None else pack_root(Path(root))
        #: pack name -> (compiled labyrinth, reference budget); compiled once per bundle
        self._compiled_cache: dict[str, tuple[CompiledLabyrinth, int | None]] = {}
        if isinstance(source, str):
            # validates the path and loads the first bundle
            name, bundle = resolve_pack_path(source, root=self._root)
            if name == source:  # a bundle file; a directory resolves to a file below it
                self.candidates = [bundle]
            else:
                self._directory = source
                prefix = source.removesuffix("/") + "/"
                self.candidates = [
                    resolve_pack_path(n, root=self._root)[1]
                    for n in list_bundles(prefix, root=self._root)
                ]
        else:
            if root is not None:
                raise ValueError("a pack root goes with a pack path, not with a labyrinth object")
            name = "<labyrinth>"
            bundle = source if isinstance(source, Bundle) else Bundle(labyrinth=source)
            self.candidates = [bundle]
        self._fixed = None if self._directory else (name, self._compile(name, bundle))
        self._compiled: CompiledLabyrinth | None = None
        self._state: PlayerState | None = None
        self._show_map = False

    @property
    def labyrinth(self) -> Labyrinth | None:
        """The labyrinth of the current episode (None before the first start)."""
        return None if self._compiled is None else self._compiled.labyrinth

    @property
    def state(self) -> PlayerState | None:
        """The engine state of the current episode (immutable)."""
        return self._state

    def _compile(self, name: str, bundle: Bundle) -> tuple[CompiledLabyrinth, int | None]:
        cached = self._compiled_cache.get(name)
        if cached is None:
            budget = self._max_steps_override or reference_max_steps(bundle)
            cached = self._compiled_cache[name] = (compile_labyrinth(bundle.labyrinth), budget)
        return cached

    def start(self, seed: int) -> EpisodeStart:
        if self._fixed is not None:
            name, (compiled, max_steps) = self._fixed
        else:
            assert self._directory is not None
            rng = np.random.default_rng(seed)
            name, bundle = resolve_pack_path(self._directory, rng, root=self._root)
            compiled, max_steps = self._compile(name, bundle)
        lab = compiled.labyrinth
        self._compiled = compiled
        self._state = initial_state(compiled)
        self._show_map = lab.open_map
        return EpisodeStart(
            name=name,
            actions=list(compiled.actions),
            max_steps=max_steps,
            open_map=lab.open_map,
            text=START_TEXT,
            formal=start_formal(self._state),
            map=render_map(lab, self._state) if lab.open_map else None,
        )

    def step(self, action: str) -> StepOutcome:
        compiled, state = self._compiled, self._state
        assert compiled is not None and state is not None, "start() comes first"
        try:
            result = transition(compiled, state, action)
        except InvalidActionError as exc:
            return rejected_action(action, exc.allowed, inventory(state))
        self._state = result.state
        shown = render_map(compiled.labyrinth, result.state) if self._show_map else None
        return StepOutcome(result.text, result.formal, result.won, shown)

    def render(self) -> str:
        if self._compiled is None:
            return ""
        return render_map(self._compiled.labyrinth, self._state)

    def close(self) -> None:
        return None


class AgiMazeEnv(gym.Env[dict[str, Any], np.int64]):
    """AGI Maze: leave a labyrinth with the treasure in as few steps as possible.

    ## Description

    A grid labyrinth with walls, one exit gap in its outer frame (the monolith), a key, a chest
    holding the treasure and, depending on the pack, an exit key, rivers that carry the player,
    pit cycles that teleport, and extension items (boat, grenades, flashlight). The rules and
    narration are those of the public AGI Maze service (see ``docs/agimaze-rules.md``); the game
    runs on the embedded engine (``backend="local"``) or against a server speaking the public
    HTTP API (``backend="http"``: the real service or ``maze-envs agimaze serve``).

    ## Action Space

    ``Discrete(n)`` over the labyrinth's action names, exposed as ``env.unwrapped.action_names``
    (``up, down, left, right`` then ``look_*`` / ``bomb_*`` where the labyrinth offers them). For
    a pack directory the list is the union over its bundles. ``env.unwrapped.step_name("up")``
    steps by name. An action the current labyrinth does not offer (possible with a directory
    union, or when a server disagrees) is not played: the observation says so, ``status`` is
    blocked, ``info["error"]`` holds the server-style ``bad_action`` body, and no step is used.

    ## Observation Space

    ``Dict`` with
    * ``text``: ``Text`` narration, exactly the engine's (``"Game has started."`` at reset);
    * ``formal``: ``Dict(status: Discrete(2), observe: Discrete, events: MultiBinary)`` indexing
      :data:`~maze_envs.agimaze.spaces.STATUS_KINDS`, ``OBSERVE_KINDS`` and ``EVENT_KINDS``;
    * ``inventory``: ``Dict`` of 0/1 flags ``key, treasure, exit_key, boat, flashlight`` and the
      ``grenades`` count;
    * ``map`` (open-map, i.e. TUTORIAL, labyrinths only): the map text with the player.
    The full formal dict of the API (with ``details``) is in ``info["formal"]``.

    ## Rewards

    +1 for leaving the labyrinth with the treasure, 0 otherwise. ``reward_shaping=True`` adds
    :data:`SHAPING_REWARDS` (0.1 for the key, the treasure and the exit key, once each).

    ## Starting State

    The labyrinth's start cell, empty-handed. A pack directory draws one bundle per reset from
    the reset seed.

    ## Episode End

    Terminated when the player leaves with the treasure. Truncated after
    ``budget_factor × max_steps`` steps (default 5 ×, the EnvTraverse evaluation budget), where
    ``max_steps`` is the labyrinth's reference budget (``max_steps=`` overrides it; 200 when
    neither gives one). ``info`` always has ``name``, ``steps``, ``max_steps``, ``solved``,
    ``events``, ``formal`` and ``error``; at the end it adds ``rhae`` (RHAE70) and ``budget``.

    ## Arguments

    * ``path``: pack path (``TRAINING/S0-keys/STAGE-01/0005.json`` or a directory), or
    * ``labyrinth``: a :class:`~maze_envs.agimaze.types.Labyrinth` or ``Bundle`` (local only);
    * ``pack_root`` (local only): the bundle tree ``path`` is relative to, instead of the shipped
      packs (the local twin of ``maze-envs agimaze serve --pack-root``);
    * ``budget_factor`` (5.0), ``max_steps`` (None), ``reward_shaping`` (False),
      ``render_mode`` (``"ansi"`` returns the full map text with the player, ``"human"`` prints it);
    * ``backend``: ``"local"`` or ``"http"`` with ``base_url``, ``agent``, ``timeout``, ``retries``
      (see :class:`~maze_envs.agimaze.client.HttpBackend`). The HTTP backend starts one
      throw-away session at construction to learn the action list, then one session per reset
      with a seed drawn from the reset seed, so a seeded run is reproducible on a server that
      honours seeds (``maze-envs agimaze serve`` makes the same directory draw as the local
      backend).

    ## Version History

    * v0: initial release.
    """

    metadata = RENDER_METADATA

    def __init__(
        self,
        path: str | None = None,
        labyrinth: Labyrinth | Bundle | None = None,
        *,
        budget_factor: float = DEFAULT_BUDGET_FACTOR,
        max_steps: int | None = None,
        reward_shaping: bool = False,
        render_mode: str | None = None,
        backend: Literal["local", "http"] = "local",
        base_url: str | None = None,
        agent: str = "maze-envs",
        timeout: float = 30.0,
        retries: int = 3,
        pack_root: str | Path | None = None,
    ) -> None:
        if (path is None) == (labyrinth is None):
            raise ValueError("give exactly one of path= (a pack path) or labyrinth=")
        if path is not None and not isinstance(path, str):
            raise ValueError(f"path= is a pack path string, got {type(path).__name__}")
        if labyrinth is not None and not isinstance(labyrinth, (Labyrinth, Bundle)):
            raise ValueError(
                f"labyrinth= is a Labyrinth or a Bundle, got {type(labyrinth).__name__}"
            )
        if not (
            isinstance(budget_factor, (int, float))
            and math.isfinite(budget_factor)
            and budget_factor > 0
        ):
            raise ValueError(f"budget_factor must be a finite number > 0, got {budget_factor!r}")
        if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive int or None, got {max_steps!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        self.budget_factor = float(budget_factor)
        self.reward_shaping = reward_shaping
        self.render_mode = render_mode
        self._backend: Backend
        if backend == "local":
            source = path if path is not None else labyrinth
            assert source is not None  # checked above: exactly one is given
            local = LocalBackend(source, max_steps=max_steps, root=pack_root)
            actions = ordered_actions(a for b in local.candidates for a in b.labyrinth.actions)
            show_map = any(b.labyrinth.open_map for b in local.candidates)
            self._backend = local
        elif backend == "http":
            from maze_envs.agimaze.client import HttpBackend

            if path is None or base_url is None:
                raise ValueError('backend="http" needs path= (a pack path) and base_url=')
            if pack_root is not None:
                raise ValueError(
                    'pack_root= is for backend="local"; a server chooses its own pack root '
                    "(maze-envs agimaze serve --pack-root)"
                )
            remote = HttpBackend(base_url, path, agent=agent, timeout=timeout, retries=retries)
            actions, show_map = remote.probe()
            self._backend = remote
        else:
            raise ValueError(f'backend must be "local" or "http", got {backend!r}')
        self._max_steps_override = max_steps
        self._action_names = actions
        self._show_map = show_map
        fields: dict[str, spaces.Space[Any]] = {
            "text": text_space(),
            "formal": formal_space(),
            "inventory": inventory_space(),
        }
        if show_map:
            fields["map"] = text_space(MAP_MAX_LENGTH)
        self.observation_space = spaces.Dict(fields)
        self.action_space = spaces.Discrete(len(actions))
        self._name = ""
        self._steps = 0
        self._limit = 0
        self._max_steps = 0
        self._over = True
        self._solved = False

    # -- public helpers -------------------------------------------------------------------------

    @property
    def action_names(self) -> list[str]:
        """Action names by action index (a fresh list)."""
        return list(self._action_names)

    def action_index(self, name: str) -> int:
        """The action index of ``name``; ValueError listing the names otherwise."""
        return action_index(self._action_names, name)

    def step_name(self, name: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """``step`` by action name, e.g. ``env.unwrapped.step_name("up")``."""
        return self.step(np.int64(self.action_index(name)))

    @property
    def backend(self) -> Backend:
        """The backend running the game (``LocalBackend`` or ``HttpBackend``)."""
        return self._backend

    # -- Gymnasium API --------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        start = self._backend.start(int(self.np_random.integers(2**31 - 1)))
        self._name = start.name
        # the caller's max_steps wins over the labyrinth's (or the server's) reference budget
        reference = self._max_steps_override or start.max_steps or FALLBACK_MAX_STEPS
        self._max_steps = reference
        self._limit = max(1, math.floor(self.budget_factor * reference))
        self._steps = 0
        self._over = False
        self._solved = False
        obs = self._observation(start.text, start.formal, start.map)
        info = self._info(start.formal, None)
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(
        self, action: np.int64 | int
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._over:
            raise RuntimeError(
                "the episode is over (or reset() was never called); call reset() first"
            )
        outcome = self._backend.step(action_name(self._action_names, action))
        if outcome.error is None:
            self._steps += 1
        formal = outcome.formal
        won = outcome.won
        reward = 1.0 if won else 0.0
        if self.reward_shaping:
            for event in formal["events"]:
                reward += SHAPING_REWARDS.get(event, 0.0)
        truncated = not won and self._steps >= self._limit
        self._solved = won
        self._over = won or truncated
        obs = self._observation(outcome.text, formal, outcome.map)
        info = self._info(formal, outcome.error)
        if self.render_mode == "human":
            self.render()
        return obs, reward, won, truncated, info

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn('render() needs render_mode="ansi" or "human" at construction')
            return None
        text = self._backend.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self._backend.close()

    # -- internals ------------------------------------------------------------------------------

    def _observation(
        self, text: str, formal: dict[str, Any], map_text: str | None
    ) -> dict[str, Any]:
        obs = {
            "text": text,
            "formal": encode_formal(formal),
            "inventory": encode_inventory(formal["inventory"]),
        }
        if self._show_map:
            obs["map"] = map_text or ""
        return obs

    def _info(self, formal: dict[str, Any], error: dict[str, Any] | None) -> dict[str, Any]:
        info = {
            "name": self._name,
            "steps": self._steps,
            "max_steps": self._max_steps,
            "solved": self._solved,
            "events": list(formal["events"]),
            "formal": formal,
            "error": error,
        }
        if self._over:
            info["budget"] = self._limit
            info["rhae"] = rhae(self._steps, self._max_steps, self._solved, DEFAULT_FACTOR)
        return info
