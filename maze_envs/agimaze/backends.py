"""Where an AGI Maze game runs: the :class:`Backend` protocol and the embedded engine's backend.

:class:`~maze_envs.agimaze.env.AgiMazeEnv` plays through a backend object given as
``backend=`` (pydantic-ai's ``provider=``, Jumanji's injected generator): :class:`LocalBackend`
(the default) runs the embedded engine, :class:`~maze_envs.agimaze.api.HttpBackend` a server
speaking the public HTTP API, with its own options (base URL, timeout, retries...). Both report
what happened in the same two records (:class:`EpisodeStart`, :class:`StepOutcome`), so the env,
its spaces and its bookkeeping never know which one runs. This module is where the game and its
HTTP API meet: both import it, and the game never imports the API.

Example:
    >>> backend = LocalBackend().open("TRAINING/S0-keys/STAGE-01/0005.json")
    >>> start = backend.start(seed=0)
    >>> start.text, start.actions, start.max_steps
    ('Game has started.', ['up', 'down', 'left', 'right'], 70)
    >>> outcome = backend.step("fly")  # not an action of this labyrinth: nothing is played
    >>> outcome.steps_used, outcome.error["error"]
    (0, 'bad_action')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np

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
from maze_envs.agimaze.spaces import clean_text
from maze_envs.agimaze.types import BOMB_ACTIONS, DIRECTIONS, LOOK_ACTIONS, Bundle, Labyrinth

_CANONICAL_ACTIONS: Final = (*DIRECTIONS, *LOOK_ACTIONS, *BOMB_ACTIONS)
#: What an env plays: a pack path (a bundle or a directory) or a labyrinth object.
Source = str | Labyrinth | Bundle


def ordered_actions(names: Iterable[str]) -> list[str]:
    """Distinct action names in the API's order (moves, look_*, bomb_*, then others as met).

    >>> ordered_actions(["bomb_up", "left", "up", "dance", "left"])
    ['up', 'left', 'bomb_up', 'dance']
    """
    seen = list(dict.fromkeys(names))
    known = [a for a in _CANONICAL_ACTIONS if a in seen]
    return known + [a for a in seen if a not in _CANONICAL_ACTIONS]


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
    """What a backend reports for one action.

    ``error`` is set for a rejected action (nothing was played). ``steps_used`` is how many
    steps the game really advanced for this call: 1 for a played action, 0 for a rejected one,
    and 2 when an HTTP step whose reply was lost earlier turned out to be applied on the server
    before this one (the env adds it to its step count, so its count always equals the
    server's).
    """

    text: str
    formal: dict[str, Any]
    won: bool
    map: str | None
    error: dict[str, Any] | None = None
    steps_used: int = 1


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
    return StepOutcome(text, formal, False, None, error, steps_used=0)


class Backend(Protocol):
    """Where the game runs: the embedded engine or a server over HTTP.

    The env is given a backend holding only its options and calls ``open(source,
    pack_root=...)``, which returns a new backend of the same kind bound to that pack path (or
    labyrinth object); opening never changes the object it is called on, so one backend object
    can serve many envs (a vector env's copies). On an opened backend, ``actions`` (the action
    names, known before any episode: the env's action space) and ``open_map`` (whether
    observations carry a map) are fixed; ``start(seed)`` begins an episode (a directory path
    draws its bundle from ``seed``), ``step(name)`` plays one action by name, ``render()`` is
    the full map text (what a spectator sees; may be empty when a server shows no map),
    ``close()`` frees connections.
    """

    @property
    def actions(self) -> list[str]: ...

    @property
    def open_map(self) -> bool: ...

    def open(self, source: Source, *, pack_root: str | Path | None = None) -> Backend: ...

    def start(self, seed: int) -> EpisodeStart: ...

    def step(self, action: str) -> StepOutcome: ...

    def render(self) -> str: ...

    def close(self) -> None: ...


class LocalBackend:
    """Runs labyrinths on the embedded engine: the env's default backend (it has no options).

    ``open(source, pack_root=None)`` binds a copy to a pack path (a bundle, or a directory from
    which each start draws one bundle with ``numpy.random.default_rng(seed)``, the same draw as
    ``maze-envs agimaze serve``) under ``pack_root`` (default: the shipped packs), or to a
    labyrinth object. A bad path raises :class:`~maze_envs.agimaze.packs.PackPathError`.
    """

    def __init__(self) -> None:
        #: the labyrinths an opened backend may play (one, or a directory's bundles)
        self.candidates: list[Bundle] = []
        #: action names over the candidates, in the API's order (empty until opened)
        self.actions: list[str] = []
        #: whether some candidate shows its map (TUTORIAL)
        self.open_map = False
        self._directory: str | None = None
        self._root: Path | None = None
        #: pack name -> (compiled labyrinth, reference budget); compiled once per bundle
        self._compiled_cache: dict[str, tuple[CompiledLabyrinth, int | None]] = {}
        self._fixed: tuple[str, tuple[CompiledLabyrinth, int | None]] | None = None
        self._opened = False
        self._compiled: CompiledLabyrinth | None = None
        self._state: PlayerState | None = None
        self._show_map = False

    def __repr__(self) -> str:
        return "LocalBackend()"

    def open(self, source: Source, *, pack_root: str | Path | None = None) -> LocalBackend:
        """A new backend bound to ``source`` (see the class docstring)."""
        opened = LocalBackend()
        opened._bind(source, pack_root)
        return opened

    def _bind(self, source: Source, root: str | Path | None) -> None:
        self._root = None if root is None else pack_root(Path(root))
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
        elif isinstance(source, (Labyrinth, Bundle)):
            if root is not None:
                raise ValueError("a pack root goes with a pack path, not with a labyrinth object")
            name = "<labyrinth>"
            bundle = source if isinstance(source, Bundle) else Bundle(labyrinth=source)
            self.candidates = [bundle]
        else:
            raise ValueError(
                "a local backend opens a pack path or a Labyrinth / Bundle, got "
                f"{type(source).__name__}"
            )
        self._fixed = None if self._directory else (name, self._compile(name, bundle))
        self.actions = ordered_actions(a for b in self.candidates for a in b.labyrinth.actions)
        self.open_map = any(b.labyrinth.open_map for b in self.candidates)
        self._opened = True

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
            budget = reference_max_steps(bundle)
            cached = self._compiled_cache[name] = (compile_labyrinth(bundle.labyrinth), budget)
        return cached

    def start(self, seed: int) -> EpisodeStart:
        if not self._opened:
            raise RuntimeError("open(source) the backend first (AgiMazeEnv does it)")
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


__all__ = [
    "Backend",
    "EpisodeStart",
    "LocalBackend",
    "Source",
    "StepOutcome",
    "ordered_actions",
    "reference_max_steps",
    "rejected_action",
]
