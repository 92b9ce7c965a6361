"""Text observations: every observation as the text a language model reads.

* :class:`TextObservation` (Gymnasium ``ObservationWrapper``) for ``AgiMaze-v0`` and
  ``AgiMazeSet-v0``: the observation becomes :func:`maze_envs.text.render_agimaze` of the typed
  :class:`~maze_envs.agimaze.observation.AgiMazeObservation` (narration, status, events,
  inventory, step and budget, open map, the set's messages), in a ``Text`` space.
* :class:`EscapeTextObservation` (PettingZoo ``BaseParallelWrapper``) for Maze Escape v0 and v1:
  each agent's observation becomes :func:`maze_envs.text.render_escape` of its typed
  :class:`~maze_envs.escape.types.Observation` (notebook, radio, teammates' notebooks, this
  turn), optionally after the legend (:func:`maze_envs.text.escape_legend`).

Both call the one renderer the LLM policies use (:mod:`llm_policies`), with the same options
(``wording`` version; Maze Escape: ``trail`` wording), so what the wrapper returns is
byte-identical to what a model is sent for the same observation.

Example:
    >>> import gymnasium as gym
    >>> import maze_envs
    >>> env = TextObservation(gym.make("maze_envs/AgiMaze-v0",
    ...                                path="TRAINING/S0-keys/STAGE-01/0005.json"))
    >>> text, info = env.reset(seed=0)
    >>> print(text)
    Step 0 of 350.
    Result: Game has started.
    Status: success; you see: empty.
    You carry: nothing.
    >>> env.observation_space.contains(text)
    True
    >>> text, *_ = env.step(env.unwrapped.action_index("up"))
    >>> text.splitlines()[1]
    'Your action: up.'
"""

from __future__ import annotations

from typing import Any, Final

import gymnasium as gym
import numpy as np
from pettingzoo.utils.env import ParallelEnv
from pettingzoo.utils.wrappers.base_parallel import BaseParallelWrapper

from llm_policies.prompts.escape import agent_line
from maze_envs._registration import env_ids
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.shared_text import SharedText
from maze_envs.agimaze.spaces import CHARSET, MAP_MAX_LENGTH, TEXT_MAX_LENGTH
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.spaces import Utf8Text
from maze_envs.escape.types import Config
from maze_envs.policies.episodes import agimaze_episode
from maze_envs.text import escape_legend, render_agimaze, render_escape
from maze_envs.text.escape import TrailWording

__all__ = ["AGIMAZE_TEXT_MAX_LENGTH", "EscapeTextObservation", "TextObservation"]

#: Longest AGI Maze observation text: narration, set message, map, and the fixed lines around.
AGIMAZE_TEXT_MAX_LENGTH: Final = 2 * TEXT_MAX_LENGTH + MAP_MAX_LENGTH + 4096
_TRAILS: Final = ("precise", "plain")


def _check_trail(trail: str) -> TrailWording:
    if trail not in _TRAILS:
        raise ValueError(f"trail must be 'precise' or 'plain', got {trail!r}")
    return trail  # type: ignore[return-value]


class TextObservation(gym.ObservationWrapper[str, np.int64, dict[str, Any]]):
    """AGI Maze observations (single labyrinth or labyrinth set) as the text a model reads.

    The observation space is a ``Text`` over the AGI Maze character set (printable ASCII,
    newline, U+FFFD) of at most :data:`AGIMAZE_TEXT_MAX_LENGTH` characters; actions, rewards and
    ``info`` pass through unchanged. ``wording`` picks the wording version (default: newest), as
    the LLM policies' ``wording`` option does. :meth:`description` is the labyrinth's
    description (what an LLM policy puts in its system prompt), :attr:`typed` the last typed
    observation.
    """

    def __init__(self, env: gym.Env[Any, Any], *, wording: str | None = None) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not hasattr(base, "action_names") or not hasattr(base, "budget_factor"):
            raise ValueError(
                "TextObservation wraps AGI Maze environments "
                f"({', '.join(env_ids('agimaze', labyrinth_set=None))}), got "
                f"{type(base).__name__}; for Maze Escape use "
                "EscapeTextObservation"
            )
        from maze_envs.text.wording import load_wording

        load_wording("agimaze", wording)  # an unknown version fails here, not at the first step
        self.wording = wording
        self.observation_space = SharedText(
            max_length=AGIMAZE_TEXT_MAX_LENGTH, min_length=0, charset=CHARSET
        )
        self.typed: AgiMazeObservation | None = None
        self._info: dict[str, Any] = {}
        self._last_action: str | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._info, self._last_action = info, None
        return self.observation(obs), info

    def step(self, action: np.int64) -> tuple[str, float, bool, bool, dict[str, Any]]:
        names = self.env.unwrapped.action_names  # type: ignore[attr-defined]
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._info, self._last_action = info, names[int(action)]
        return self.observation(obs), float(reward), terminated, truncated, info

    def observation(self, observation: Any) -> str:
        """The text of one raw observation (with the ``info`` and action of its step)."""
        self.typed = AgiMazeObservation.from_env(
            observation, self._info, last_action=self._last_action, env=self.env
        )
        text = render_agimaze(self.typed, wording=self.wording)
        if len(text) > AGIMAZE_TEXT_MAX_LENGTH:  # far beyond any labyrinth; keeps the space true
            text = text[:AGIMAZE_TEXT_MAX_LENGTH]
        return text

    def description(self) -> str:
        """The description of the labyrinth being played (rules, task, map, actions)."""
        from maze_envs.text import agimaze_description

        return agimaze_description(agimaze_episode(self.env, self._info), wording=self.wording)


def escape_text_max_bytes(config: Config, legend: bool) -> int:
    """An upper bound of the UTF-8 size of one agent's text in a game of ``config``."""
    agents = config.num_agents
    size = agents * (config.notebook_max_bytes + config.radio_max_bytes + 256)
    size += 48 * config.trail_length + 4096
    if legend:
        size += len(escape_legend(config, trail="plain").encode()) + 2048
    return size


class EscapeTextObservation(BaseParallelWrapper[str, str, Any]):
    """Maze Escape (v0 or v1) observations as the text each agent's model reads.

    Each agent's observation is a string in a :class:`~maze_envs.escape.spaces.Utf8Text`
    space; actions, rewards and infos pass through. ``legend=True`` starts every text with the
    legend of the game's setup (so it reads on its own; an LLM policy keeps the legend in its
    system prompt instead and is sent the text of ``legend=False``); ``trail`` is the trail
    wording (``"precise"`` or ``"plain"``, as the prompt version chooses it) and ``wording`` the
    wording version. ``prompt_version`` is the LLM prompt version whose user message the text
    is (default the newest): from ``v14`` that message opens with the line naming the agent
    ("You are agent A."), up to ``v13`` it is the observation alone.

    Example:
        >>> from maze_envs import maze_escape_v1
        >>> env = EscapeTextObservation(maze_escape_v1.parallel_env(preset="full", width=6,
        ...                                                         height=6))
        >>> texts, infos = env.reset(seed=3)
        >>> texts["A"].splitlines()[:3]
        ['You are agent A.', '', 'Your notebook:']
        >>> env.observation_space("A").contains(texts["A"])
        True
        >>> texts, *_ = env.step({agent: {"move": 4, "notebook": {"edit": 0, "start": 0,
        ...     "end": 0, "text": ""}, "radio": ""} for agent in env.agents})
        >>> "Turn: 1" in texts["B"]
        True
    """

    def __init__(
        self,
        env: ParallelEnv[str, Any, Any],
        *,
        legend: bool = False,
        trail: str = "precise",
        wording: str | None = None,
        prompt_version: str = "latest",
    ) -> None:
        super().__init__(env)
        config = getattr(env.unwrapped, "config", None)
        if not isinstance(config, Config):
            raise ValueError(
                f"EscapeTextObservation wraps Maze Escape environments (maze_escape_v0/v1), got "
                f"{type(env.unwrapped).__name__}; for AGI Maze use TextObservation"
            )
        from maze_envs.text.wording import load_wording

        load_wording("escape", wording)
        agent_line("A", version=prompt_version)  # an unknown version fails here, naming the known
        self.prompt_version = prompt_version
        self.config = config
        self.legend = legend
        self.trail = _check_trail(trail)
        self.wording = wording
        space = Utf8Text(escape_text_max_bytes(config, legend))
        self._spaces = {agent: space for agent in env.possible_agents}

    def observation_space(self, agent: str) -> Utf8Text:
        return self._spaces[agent]

    def text(self, observation: dict[str, Any], agent: str) -> str:
        """The text of ``agent``'s raw observation dict."""
        model = observation_to_model(observation, self.config, agent)
        text = agent_line(agent, version=self.prompt_version) + render_escape(
            model, self.config, trail=self.trail, wording=self.wording
        )
        if not self.legend:
            return text
        return escape_legend(self.config, trail=self.trail, wording=self.wording) + "\n\n" + text

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        return {a: self.text(o, a) for a, o in observations.items()}, infos

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, str],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        texts = {a: self.text(o, a) for a, o in observations.items()}
        return texts, rewards, terminations, truncations, infos
