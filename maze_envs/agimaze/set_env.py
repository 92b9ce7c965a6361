"""AGI Maze labyrinth sets: an ordered run of labyrinths (tutorials first), one Gymnasium episode.

This is the labyrinth-set environment of the EnvTraverse evaluation: the agent starts each
labyrinth with the ``start`` action, plays it under its own budget, and gets a fixed message
when it is solved or its budget runs out; a failure does not end the set.

Example:
    >>> import gymnasium as gym
    >>> import maze_envs
    >>> env = gym.make("maze_envs/AgiMazeSet-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs["message"] == INITIAL_MESSAGE, obs["waiting"], info["count"]
    (True, 1, 8)
    >>> obs, reward, terminated, truncated, info = env.unwrapped.step_name("start")
    >>> obs["text"], obs["waiting"], info["index"]
    ('Game has started.', 0, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from maze_envs.agimaze import recording
from maze_envs.agimaze.backends import LocalBackend, ordered_actions
from maze_envs.agimaze.compiled import PlayerState
from maze_envs.agimaze.env import (
    DEFAULT_BUDGET_FACTOR,
    RENDER_METADATA,
    AgiMazeEnv,
    action_index,
    action_name,
)
from maze_envs.agimaze.model_text import (
    FAILED_FINAL_MESSAGE,
    FAILED_MESSAGE,
    INITIAL_MESSAGE,
    SET_DESCRIPTION,
    SOLVED_FINAL_MESSAGE,
    SOLVED_MESSAGE,
    not_available_message,
    not_started_message,
)
from maze_envs.agimaze.spaces import play_spaces, play_values, text_space
from maze_envs.agimaze.types import Bundle, Labyrinth
from maze_envs.journal.recorder import Recorder

START_ACTION: Final = "start"
#: The seven tutorials, in order, that open the default set.
TUTORIAL_PATHS: Final = tuple(f"TUTORIAL/STAGE-{i:02d}/0000.json" for i in range(1, 8))
#: The target labyrinth that closes the default set (the EnvTraverse targets are the 0005 and
#: 0009 bundles of CLASSIC and EXTENDED).
DEFAULT_TARGET: Final = "CLASSIC/MEDIUM/keys/6x6/0005.json"


#: The formal observation shown while no labyrinth runs.
_IDLE_FORMAL: Final[dict[str, Any]] = {"status": "success", "observe": "empty", "events": []}


def _budget_phrase(message: str, factor: float) -> str:
    """The fixed texts say "five times"; another budget factor is stated truthfully instead."""
    if factor == 5:
        return message
    return message.replace("five times", f"{factor:g} times")


class AgiMazeSetEnv(recording.RecordedEpisodes, gym.Env[dict[str, Any], np.int64]):
    """An ordered set of AGI Maze labyrinths played in one episode.

    ## Description

    By default the seven tutorials ``TUTORIAL/STAGE-01..07/0000.json`` (open maps) and then one
    target labyrinth (:data:`DEFAULT_TARGET`). Before each labyrinth the environment waits for
    the ``start`` action; each labyrinth is an :class:`~maze_envs.agimaze.env.AgiMazeEnv` episode
    with its own budget of ``budget_factor × max_steps`` steps. Solving a labyrinth or running
    out of budget sends the fixed EnvTraverse message (:data:`SOLVED_MESSAGE`,
    :data:`FAILED_MESSAGE`, :data:`SOLVED_FINAL_MESSAGE`, :data:`FAILED_FINAL_MESSAGE`); a failed
    labyrinth does not end the set.

    ## Action Space

    ``Discrete`` over ``["start"]`` followed by the union of the labyrinths' action names
    (``env.unwrapped.action_names``; ``env.unwrapped.step_name(name)`` steps by name). An action
    that is not valid at the moment (a move while waiting, ``start`` during a labyrinth, or an
    action the running labyrinth lacks) is not played and uses no budget; the observation's
    ``message`` says what is expected (:func:`not_started_message`,
    :func:`not_available_message`).

    ## Observation Space

    ``Dict`` with ``message`` (Text: the fixed and invalid-action messages, otherwise empty),
    ``text``, ``formal`` and ``inventory`` as in ``AgiMaze-v0`` (empty / zero while waiting),
    ``map`` (Text: the current open map during tutorial labyrinths, otherwise empty),
    ``labyrinth`` (``Discrete(count)``: index of the running or next labyrinth) and ``waiting``
    (``Discrete(2)``: 1 while the set waits for ``start``).

    ## Rewards

    +1 for every labyrinth solved (shaping terms: the
    :class:`~wrappers.agimaze_options.RewardShaping` wrapper, which follows the set's labyrinths).

    ## Starting State

    Waiting for ``start`` before the first labyrinth, with :data:`INITIAL_MESSAGE`; the reset
    ``info["description"]`` holds the set description (:data:`SET_DESCRIPTION`). The reset seed
    seeds each labyrinth's reset in turn (pack directories draw from it).

    ## Episode End

    Terminated when the final labyrinth is solved or exhausts its budget. ``info`` has
    ``index``, ``count``, ``waiting`` and ``results`` (one dict per finished labyrinth: ``name``,
    ``steps``, ``max_steps``, ``budget``, ``solved``, ``rhae``); an action played in a running
    labyrinth adds that labyrinth's ``name``, ``steps``, ``max_steps``, ``solved``, ``events``
    and ``formal`` (an action that is not played adds nothing).

    ## Arguments

    * ``paths``: the full ordered list of pack paths (default: tutorials + ``target``);
    * ``target``: the final labyrinth of the default set (:data:`DEFAULT_TARGET`);
    * ``labyrinths``: labyrinth objects instead of paths;
    * ``pack_root``: the bundle tree the paths are relative to (default: the shipped packs);
    * ``pack_version``: a shipped pack version by name instead (default: the current one; see
      :data:`~maze_envs.agimaze.packs.PACK_VERSIONS`);
    * ``journal``: a path or a :class:`~maze_envs.journal.Journal` to record every set episode
      as one game (format in :mod:`maze_envs.agimaze.recording`); ``reset(seed=None)`` draws
      the episode's seed first, journal or not;
    * ``budget_factor`` (5.0), ``render_mode`` (``"ansi"``: the full
      map of the running labyrinth; ``"rgb_array"``: its picture, captioned, all frames the size
      of the set's largest board).

    ## Version History

    * v0: initial release.
    """

    metadata = RENDER_METADATA

    def __init__(
        self,
        paths: Sequence[str] | None = None,
        target: str = DEFAULT_TARGET,
        labyrinths: Sequence[Labyrinth | Bundle] | None = None,
        *,
        budget_factor: float = DEFAULT_BUDGET_FACTOR,
        render_mode: str | None = None,
        pack_root: str | Path | None = None,
        journal: Any = None,
        pack_version: str | None = None,
    ) -> None:
        if paths is not None and labyrinths is not None:
            raise ValueError("give paths= or labyrinths=, not both")
        if isinstance(paths, str):
            raise ValueError(f"paths= is a list of pack paths, got the single string {paths!r}")
        sources: list[str | Labyrinth | Bundle]
        if labyrinths is not None:
            sources = list(labyrinths)
        elif paths is not None:
            sources = list(paths)
        else:
            sources = [*TUTORIAL_PATHS, target]
        if not sources:
            raise ValueError("a labyrinth set needs at least one labyrinth")
        self.render_mode = render_mode
        self._paths = [s if isinstance(s, str) else None for s in sources]
        self._envs = [
            AgiMazeEnv(
                path=s if isinstance(s, str) else None,
                labyrinth=None if isinstance(s, str) else s,
                budget_factor=budget_factor,
                render_mode="ansi" if render_mode is not None else None,
                pack_root=pack_root if isinstance(s, str) else None,
                pack_version=pack_version if isinstance(s, str) else None,
            )
            for s in sources
        ]
        self.budget_factor = float(budget_factor)  # validated by AgiMazeEnv
        boards: list[Labyrinth] = []
        for env in self._envs:
            backend = env.backend
            assert isinstance(backend, LocalBackend)  # a set always plays on the embedded engine
            boards += [bundle.labyrinth for bundle in backend.candidates]
        #: rgb_array frames are drawn on the largest board of the set: one size for the video
        self._canvas = (max(b.rows for b in boards), max(b.cols for b in boards))
        names = ordered_actions(a for env in self._envs for a in env.action_names)
        self._action_names = [START_ACTION, *names]
        self.action_space = spaces.Discrete(len(self._action_names))
        self.observation_space = spaces.Dict(
            {
                "message": text_space(),
                **play_spaces(map_shown=True),
                "labyrinth": spaces.Discrete(len(self._envs)),
                "waiting": spaces.Discrete(2),
            }
        )
        self._index = 0
        self._waiting = True
        self._finished = True
        self._results: list[dict[str, Any]] = []
        self._seeds: list[int] = []
        self._last_inner: dict[str, Any] = {}
        #: Writes every set episode to the journal as one game (None without ``journal=``).
        self.recorder = (
            None
            if journal is None
            else Recorder(
                journal,
                env_id=recording.SET_ENV_ID,
                config=recording.set_config(
                    paths=paths,
                    target=target,
                    labyrinths=labyrinths,
                    budget_factor=self.budget_factor,
                    pack_root=pack_root,
                    pack_version=pack_version,
                ),
            )
        )

    # -- public helpers -------------------------------------------------------------------------

    @property
    def action_names(self) -> list[str]:
        """Action names by index; index 0 is ``start``."""
        return list(self._action_names)

    @property
    def labyrinth(self) -> Labyrinth | None:
        """The labyrinth being played (immutable); None while the set waits or is over."""
        if self._waiting or self._finished:
            return None
        backend = self._envs[self._index].backend
        assert isinstance(backend, LocalBackend)  # a set always plays on the embedded engine
        return backend.labyrinth

    def labyrinth_state(self, index: int) -> tuple[Labyrinth | None, PlayerState | None]:
        """Labyrinth ``index`` of the set and its engine state (both None before it started).

        The state stays readable after that labyrinth ended (solved or out of budget), so a
        viewer or an analysis can see where the player finished.
        """
        backend = self._envs[index].backend
        assert isinstance(backend, LocalBackend)  # a set always plays on the embedded engine
        return backend.labyrinth, backend.state

    @property
    def labyrinth_paths(self) -> list[str | None]:
        """The pack path of each labyrinth, in set order (None for a labyrinth object)."""
        return list(self._paths)

    def step_name(self, name: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """``step`` by action name (``"start"``, ``"up"``, ...)."""
        return self.step(np.int64(action_index(self._action_names, name)))

    # -- Gymnasium API --------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        seed = self._start_episode(seed)
        super().reset(seed=seed)
        self._seeds = [int(s) for s in self.np_random.integers(2**31 - 1, size=len(self._envs))]
        self._index = 0
        self._waiting = True
        self._finished = False
        self._results = []
        self._last_inner = {}
        info = self._info(None)
        info["description"] = SET_DESCRIPTION
        obs = self._waiting_obs(INITIAL_MESSAGE)
        if self.recorder is not None:
            event = recording.set_event(None, obs, info)
            self.recorder.start(seed, {"player": obs}, self.state_digest(), {"player": event})
        return obs, info

    def step(
        self, action: np.int64 | int
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.recorder is not None:
            self.recorder.check()  # an episode the journal stopped recording takes no more steps
        result = self._play(action)
        if self.recorder is not None:
            obs, _, terminated, truncated, info = result
            event = recording.set_event(action_name(self._action_names, action), obs, info)
            self._record_turn(action, obs, event, terminated or truncated)
        return result

    def _play(
        self, action: np.int64 | int
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._finished:
            raise RuntimeError("the labyrinth set is complete (or never reset); call reset()")
        name = action_name(self._action_names, action)
        env = self._envs[self._index]
        if self._waiting:
            if name != START_ACTION:
                message = not_started_message(name, first=self._index == 0 and not self._results)
                return self._waiting_obs(message), 0.0, False, False, self._info(None)
            self._waiting = False
            obs, info = env.reset(seed=self._seeds[self._index])
            return self._play_obs(obs, ""), 0.0, False, False, self._info(info)
        if name not in env.action_names:
            message = not_available_message(name, env.action_names)
            return self._play_obs(None, message), 0.0, False, False, self._info(None)
        obs, reward, terminated, truncated, info = env.step(np.int64(env.action_index(name)))
        if not (terminated or truncated):
            return self._play_obs(obs, ""), reward, False, False, self._info(info)
        self._results.append(
            {
                "name": info["name"],
                "steps": info["steps"],
                "max_steps": info["max_steps"],
                "budget": info["budget"],
                "solved": info["solved"],
                "rhae": info["rhae"],
            }
        )
        final = self._index == len(self._envs) - 1
        if final:
            message = SOLVED_FINAL_MESSAGE if terminated else FAILED_FINAL_MESSAGE
            self._finished = True
        else:
            message = SOLVED_MESSAGE if terminated else FAILED_MESSAGE
            self._index += 1
            self._waiting = True
        message = _budget_phrase(message, self.budget_factor)
        return self._waiting_obs(message), reward, final, False, self._info(info)

    def render(self) -> Any:
        if self.render_mode is None:
            gym.logger.warn('render() needs render_mode="ansi" or "human" at construction')
            return None
        if self.render_mode == "rgb_array":  # one frame size for every labyrinth of the set
            name = self._paths[self._index] or "labyrinth object"
            title = f"labyrinth {self._index + 1}/{len(self._envs)}: {name}"
            return self._envs[self._index].picture(canvas=self._canvas, title=title)
        text = self._envs[self._index].render() or ""
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _close_game(self) -> None:
        for env in self._envs:
            env.close()

    def state_digest(self) -> bytes:
        """SHA-256 of everything that affects later steps (:mod:`~maze_envs.agimaze.recording`)."""
        playing = not (self._waiting or self._finished)
        return recording.set_state_digest(
            index=self._index,
            waiting=self._waiting,
            finished=self._finished,
            results=self._results,
            seeds=self._seeds,
            last_inner=self._last_inner,
            labyrinth=self._envs[self._index].state_digest() if playing else None,
        )

    def _journal_outcome(self) -> dict[str, Any]:
        return recording.set_outcome(self._results, len(self._envs))

    # -- internals ------------------------------------------------------------------------------

    def _waiting_obs(self, message: str) -> dict[str, Any]:
        return {
            "message": message,
            **play_values("", _IDLE_FORMAL, ""),
            "labyrinth": self._index,
            "waiting": int(self._waiting),
        }

    def _play_obs(self, inner: dict[str, Any] | None, message: str) -> dict[str, Any]:
        if inner is None:  # an invalid action: repeat the last state with the message
            inner = self._last_inner
        else:
            self._last_inner = inner
        return {
            "message": message,
            "text": inner["text"],
            "formal": {k: np.copy(v) if k == "events" else v for k, v in inner["formal"].items()},
            "inventory": dict(inner["inventory"]),
            "map": inner.get("map", ""),
            "labyrinth": self._index,
            "waiting": 0,
        }

    def _info(self, inner: dict[str, Any] | None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "index": self._index,
            "count": len(self._envs),
            "waiting": self._waiting,
            "results": [dict(r) for r in self._results],
        }
        if inner is not None:
            for key in ("name", "steps", "max_steps", "solved", "events", "formal"):
                info[key] = inner[key]
        return info
