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
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from maze_envs.agimaze import recording
from maze_envs.agimaze.backends import Backend, LocalBackend
from maze_envs.agimaze.packs import version_root
from maze_envs.agimaze.scoring import DEFAULT_BUDGET_FACTOR, DEFAULT_FACTOR, rhae, step_budget
from maze_envs.agimaze.spaces import play_spaces, play_values
from maze_envs.agimaze.types import Bundle, Labyrinth
from maze_envs.journal.recorder import Recorder

#: Reference budget used when neither the labyrinth nor the caller gives one (the public agents'
#: fallback when ``max_steps`` is missing).
FALLBACK_MAX_STEPS: Final = 200
#: Gymnasium metadata of both AGI Maze environments.
RENDER_METADATA: Final[dict[str, Any]] = {
    "render_modes": ["ansi", "human", "rgb_array"],
    "render_fps": 4,
}


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


class AgiMazeEnv(recording.RecordedEpisodes, gym.Env[dict[str, Any], np.int64]):
    """AGI Maze: leave a labyrinth with the treasure in as few steps as possible.

    ## Description

    A grid labyrinth with walls, one exit gap in its outer frame (the monolith), a key, a chest
    holding the treasure and, depending on the pack, an exit key, rivers that carry the player,
    pit cycles that teleport, and extension items (boat, grenades, flashlight). The rules and
    narration are those of the public AGI Maze service (see ``docs/agimaze-rules.md``); the game
    runs on the embedded engine (the default backend) or against a server speaking the public
    HTTP API (``backend=HttpBackend(base_url)``: the real service or ``maze-envs agimaze
    serve``).

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

    +1 for leaving the labyrinth with the treasure, 0 otherwise. Shaping terms (bonuses for
    items, penalties for steps or bumps, ...) are added by the
    :class:`~wrappers.agimaze_options.RewardShaping` wrapper: the env has one reward.

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
    * ``pack_version`` (local only): a shipped pack version by name (default: the current one,
      :data:`~maze_envs.agimaze.packs.DEFAULT_PACK_VERSION`; ``"agimaze-packs-2"`` reproduces
      results obtained on the earlier packs; see :data:`~maze_envs.agimaze.packs.PACK_VERSIONS`);
      the env opens its path on the local backend under that version's bundle tree, and the
      journal config records the version played;
    * ``budget_factor`` (5.0) and ``max_steps`` (None): the step budget (see Episode End; the
      only way to set it: there is no budget wrapper), ``render_mode`` (``"ansi"`` returns the
      full map text with the player, ``"human"`` prints it, ``"rgb_array"`` draws it with a
      caption: see :mod:`maze_envs.agimaze.viewer`);
    * ``journal``: a path or a :class:`~maze_envs.journal.Journal` to record every episode
      (local backend only; format in :mod:`maze_envs.agimaze.recording`; ``maze-envs verify``
      replays them); ``env.recorder`` is its :class:`~maze_envs.journal.recorder.Recorder`.
      ``reset(seed=None)`` draws the episode's seed from the env's generator first, journal or
      not, so every episode has a seed that reproduces it;
    * ``backend``: where the game runs, a :class:`~maze_envs.agimaze.backends.Backend` object
      holding its own options: :class:`~maze_envs.agimaze.backends.LocalBackend` (the default)
      or :class:`~maze_envs.agimaze.api.HttpBackend` with a base URL, ``agent``, ``timeout``
      (the deadline of each HTTP call), ``retries``, ``backoff`` and ``actions``. The env opens
      its path on it (``env.backend`` is the opened copy; the object given is left unchanged,
      so one can serve many envs). The HTTP backend sends nothing at construction: its action
      space is ``actions=`` or the list the pack path implies
      (:func:`~maze_envs.agimaze.api.expected_actions`: the four moves, plus ``look_*`` /
      ``bomb_*`` under ``EXTENDED/flashlight`` / ``EXTENDED/grenades``). Each reset starts one
      session with a seed drawn from the reset seed, so a seeded run is reproducible on a
      server that honours seeds (``maze-envs agimaze serve`` makes the same directory draw as
      the local backend). A step that failed after it may have been applied is resent with the
      same ``seq`` by the next step, so no step is applied twice and ``info["steps"]`` always
      equals the server's count.

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
        render_mode: str | None = None,
        pack_root: str | Path | None = None,
        journal: Any = None,
        backend: Backend | None = None,
        pack_version: str | None = None,
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
        chosen: Any = LocalBackend() if backend is None else backend
        if isinstance(chosen, str) or not callable(getattr(chosen, "open", None)):
            raise ValueError(
                "backend= is a backend object: LocalBackend() (the default) or "
                "maze_envs.agimaze.api.HttpBackend(base_url, ...), got "
                f"{type(backend).__name__} {backend!r}"
            )
        if journal is not None and not isinstance(chosen, LocalBackend):
            raise ValueError(
                "journal= needs the local backend: a game played on a server cannot be "
                "replayed offline to verify it"
            )
        self.budget_factor = float(budget_factor)
        self.render_mode = render_mode
        if pack_version is not None:
            if pack_root is not None:
                raise ValueError("give pack_root= or pack_version=, not both")
            if not isinstance(chosen, LocalBackend):
                raise ValueError(
                    "pack_version= is for the local backend; a server serves its own packs"
                )
            pack_root = version_root(pack_version)  # PackPathError naming the versions
        source = path if path is not None else labyrinth
        assert source is not None  # checked above: exactly one is given
        # the actions and the map are known once opened (an HTTP backend sends nothing yet)
        self._backend: Backend = chosen.open(source, pack_root=pack_root)
        self._max_steps_override = max_steps
        self._action_names = list(self._backend.actions)
        self._show_map = self._backend.open_map
        self.observation_space = spaces.Dict(play_spaces(self._show_map))
        self.action_space = spaces.Discrete(len(self._action_names))
        self._name = ""
        self._steps = 0
        self._limit = 0
        self._max_steps = 0
        self._over = True
        self._solved = False
        #: Writes every episode to the journal (None without ``journal=``).
        self.recorder = (
            None
            if journal is None
            else Recorder(
                journal,
                env_id=recording.ENV_ID,
                config=recording.env_config(
                    path=path,
                    labyrinth=labyrinth,
                    budget_factor=self.budget_factor,
                    max_steps=max_steps,
                    pack_root=None if pack_version is not None else pack_root,
                    pack_version=pack_version,
                ),
            )
        )

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
        """The backend running the game: the copy of ``backend=`` opened on this env's path."""
        return self._backend

    # -- Gymnasium API --------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        seed = self._start_episode(seed)
        super().reset(seed=seed)
        start = self._backend.start(int(self.np_random.integers(2**31 - 1)))
        self._name = start.name
        # the caller's max_steps wins over the labyrinth's (or the server's) reference budget
        reference = self._max_steps_override or start.max_steps or FALLBACK_MAX_STEPS
        self._max_steps = reference
        self._limit = step_budget(self.budget_factor, reference)
        self._steps = 0
        self._over = False
        self._solved = False
        obs = self._observation(start.text, start.formal, start.map)
        info = self._info(start.formal, None)
        if self.recorder is not None:
            event = recording.start_event(start.name, start.text, start.formal)
            self.recorder.start(seed, {"player": obs}, self.state_digest(), {"player": event})
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
        if self.recorder is not None:
            self.recorder.check()  # an episode the journal stopped recording takes no more steps
        outcome = self._backend.step(action_name(self._action_names, action))
        self._steps += outcome.steps_used  # 0 for a rejected action; see StepOutcome
        formal = outcome.formal
        won = outcome.won
        reward = 1.0 if won else 0.0
        truncated = not won and self._steps >= self._limit
        self._solved = won
        self._over = won or truncated
        obs = self._observation(outcome.text, formal, outcome.map)
        info = self._info(formal, outcome.error)
        if self.recorder is not None:
            event = recording.step_event(action_name(self._action_names, action), obs["text"], info)
            self._record_turn(action, obs, event, self._over)
        if self.render_mode == "human":
            self.render()
        return obs, reward, won, truncated, info

    def render(self) -> Any:
        if self.render_mode is None:
            gym.logger.warn('render() needs render_mode="ansi" or "human" at construction')
            return None
        if self.render_mode == "rgb_array":
            return self.picture()
        text = self._backend.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def picture(self, *, canvas: tuple[int, int] | None = None, title: str | None = None) -> Any:
        """The spectator picture (``render_mode="rgb_array"``): map, steps/budget, outcome.

        ``canvas`` pads it to a fixed board size; ``title`` replaces the labyrinth name.
        """
        from maze_envs.agimaze.viewer import backend_picture

        started = self._limit > 0
        outcome = (
            "not started"
            if not started
            else "solved"
            if self._solved
            else "budget exhausted"
            if self._over
            else "playing"
        )
        budget = self._limit if started else None
        name = title or self._name
        return backend_picture(self._backend, name, self._steps, budget, outcome, canvas=canvas)

    def _close_game(self) -> None:
        self._backend.close()

    def state_digest(self) -> bytes:
        """SHA-256 of everything that affects later steps (:mod:`~maze_envs.agimaze.recording`)."""
        return recording.state_digest(
            name=self._name,
            steps=self._steps,
            limit=self._limit,
            max_steps=self._max_steps,
            over=self._over,
            solved=self._solved,
            state=getattr(self._backend, "state", None),
        )

    def _journal_outcome(self) -> dict[str, Any]:
        score = rhae(self._steps, self._max_steps, self._solved, DEFAULT_FACTOR)
        return recording.outcome(
            name=self._name,
            steps=self._steps,
            max_steps=self._max_steps,
            budget=self._limit,
            solved=self._solved,
            rhae=score,
        )

    # -- internals ------------------------------------------------------------------------------

    def _observation(
        self, text: str, formal: dict[str, Any], map_text: str | None
    ) -> dict[str, Any]:
        return play_values(text, formal, (map_text or "") if self._show_map else None)

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
