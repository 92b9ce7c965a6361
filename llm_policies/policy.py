"""LLM policies for both environments, on the policy interface's async side.

* :class:`EscapeLLMPolicy`: one Maze Escape agent. One call per turn and no conversation
  history: the prompt is the stable system part (prompt version, rules, advice, legend, reply
  format) and this turn's text (notebook, last turn's radio, colocated teammates' notebooks, the
  observation). An unusable reply after the retry budget, or an outage, plays ``STAY``.
* :class:`AgiMazeLLMPolicy`: the AGI Maze player, for ``AgiMaze-v0`` and ``AgiMazeSet-v0``.
  The system part is the single-labyrinth description; the history policy (observations,
  planning, world model; optional sliding window) decides what the model sees of earlier steps.
  In a labyrinth set the ``start`` action and the set's messages pass through to the model, and
  (``set_memory``, on by default) the conversation goes on from one labyrinth to the next.

Both return a :class:`~maze_envs.policies.interface.Decision` whose ``record`` holds the prompt
(stable part as a journal blob, stored once; the messages inline, a growing history as only its
new messages), each attempt's raw reply, the quirks applied, retries, usage, cost and latency;
``status`` is ``"fallback"`` or ``"outage"`` when the action is not the model's play; ``stop``
asks the runner to end the game when a cap is reached. ``harness()`` returns every harness
setting for the game's meta.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Generic, TypeVar

from llm_policies.accounting import Budget
from llm_policies.backends.base import ChatMessage, ModelBackend
from llm_policies.harness import HarnessSettings, Outcome, decide
from llm_policies.history import REASONING_FIELD, History
from llm_policies.prompts import resolve_version
from llm_policies.prompts.agimaze import AGIMAZE_PROMPT_VERSIONS, agimaze_system
from llm_policies.prompts.escape import escape_system, escape_user
from llm_policies.schema import ReplySchema, agimaze_schema, escape_action, escape_schema
from llm_policies.settings import ModelSettings
from maze_envs.agimaze.backends import rejected_action
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.set_env import (
    INITIAL_MESSAGE,
    START_ACTION,
    not_available_message,
    not_started_message,
)
from maze_envs.escape.types import Action, Config, Observation
from maze_envs.policies.interface import (
    AgiMazeEpisode,
    AsyncPolicyBase,
    Decision,
    EscapeEpisode,
    Usage,
)
from maze_envs.text.agimaze import render_agimaze
from maze_envs.text.wording import load_wording

log = logging.getLogger(__name__)

EpisodeT = TypeVar("EpisodeT")
ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")

#: Backend closes scheduled by ``close()`` inside a running event loop.
_CLOSING: set[asyncio.Task[None]] = set()
#: The Maze Escape action of a decision that is not the model's play.
ESCAPE_FALLBACK: Final = Action(move="STAY")


class _LLMPolicy(AsyncPolicyBase[EpisodeT, ObsT, ActT], Generic[EpisodeT, ObsT, ActT]):
    """What both LLM policies share: backend, settings, caps, counters, harness report."""

    privileged: ClassVar[bool] = False
    env_kind: ClassVar[str] = ""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        settings: ModelSettings | None = None,
        harness: HarnessSettings | None = None,
        run_budget: Budget | None = None,
        **harness_options: Any,
    ) -> None:
        if harness is not None and harness_options:
            raise ValueError("give harness= or harness options as keywords, not both")
        self.backend = backend
        self.settings = settings if settings is not None else ModelSettings()
        self.options = harness if harness is not None else HarnessSettings(**harness_options)
        mode = self.options.output_mode
        served = getattr(backend, "output_modes", None)
        if served and mode not in served and "output_mode" not in self.options.model_fields_set:
            # not chosen by the user: the backend's own first mode (Ollama: native JSON schema)
            self.options = self.options.model_copy(update={"output_mode": served[0]})
        elif served is not None and mode not in served:
            raise ValueError(
                f"output mode {mode!r} is not served by {backend.spec}; use one of "
                f"{', '.join(served)}"
            )
        self.run_budget = run_budget
        self.caps = self._game_budget()
        self.schema: ReplySchema | None = None
        self.system = ""
        self.failures_in_a_row = 0
        self.total_usage = Usage()
        self._previous_messages: tuple[ChatMessage, ...] | None = None
        self._harness_recorded = False

    # -- what the runner stores ------------------------------------------------------------

    def harness(self) -> dict[str, Any]:
        """Every harness setting of this policy, plain JSON for the game's meta."""
        options = self.options.model_dump(mode="json")
        return {
            "policy": type(self).__name__,
            "env": self.env_kind,
            "model": self.backend.spec,
            "local": bool(getattr(self.backend, "local", False)),
            "temperature": self.settings.temperature,
            "settings": self.settings.model_dump(mode="json"),
            "schema_order": list(self.schema.fields) if self.schema else None,
            **options,
        }

    # -- shared per-game bookkeeping -------------------------------------------------------

    def _game_budget(self) -> Budget:
        limits = (self.options.max_tokens_per_game, self.options.max_cost_per_game)
        if self.run_budget is not None:
            return self.run_budget.child(*limits, name="game")
        return Budget(*limits, name="game")

    def _start_game(self) -> None:
        self.caps = self._game_budget()
        self.failures_in_a_row = 0
        self._previous_messages = None
        self._harness_recorded = False

    def _stop_reason(self, outcome: Outcome) -> str | None:
        self.caps.charge(outcome.usage)  # a child budget charges the run budget too
        self.total_usage = self.total_usage + outcome.usage
        if outcome.status == "ok":
            self.failures_in_a_row = 0
        else:
            self.failures_in_a_row += 1
        reason = self.caps.exceeded()
        limit = self.options.max_consecutive_fallbacks
        if reason is None and limit is not None and self.failures_in_a_row >= limit:
            what = "model unavailable" if outcome.status == "outage" else "no usable reply"
            reason = f"{what} in {self.failures_in_a_row} decisions in a row: {outcome.error}"
        return reason

    async def _decide(
        self, messages: list[ChatMessage], check_values: Any = None, extra: str = ""
    ) -> Outcome:
        assert self.schema is not None, "reset() comes before the first decision"
        outcome = await decide(
            self.backend,
            system=self.system,
            messages=messages,
            schema=self.schema,
            settings=self.settings,
            harness=self.options,
            check_values=check_values,
            previous_messages=self._previous_messages,
            cache_key_extra=extra,
        )
        self._previous_messages = tuple(messages)
        if not self._harness_recorded:
            # the runner stores the game meta before the policies' reset, so the settings that
            # only the game decides (schema order, notebook mode) travel with the first decision
            outcome.record["harness"] = self.harness()
            self._harness_recorded = True
        return outcome

    async def aclose(self) -> None:
        """Close the backend's connections."""
        await self.backend.aclose()

    def close(self) -> None:
        """Close the backend: now when no event loop runs, else as a task of the running loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            try:
                asyncio.run(self.backend.aclose())
            except Exception:  # closing must never fail a run
                log.warning("closing %s failed", self.backend.spec, exc_info=True)
            return
        task = loop.create_task(self.backend.aclose())
        _CLOSING.add(task)  # keep a reference until it is done
        task.add_done_callback(_CLOSING.discard)


class EscapeLLMPolicy(_LLMPolicy[EscapeEpisode, Observation, Action]):
    """A language model playing one Maze Escape agent (see the module docstring).

    Example:
        >>> from llm_policies.backends.scripted import ScriptedBackend
        >>> from maze_envs.escape.types import Config
        >>> from maze_envs.policies.interface import EscapeEpisode
        >>> policy = EscapeLLMPolicy(ScriptedBackend(['{"move": "N"}']), output_mode="prompted")
        >>> policy.reset("A", 0, EscapeEpisode("maze_envs/MazeEscape-v1", "A", ("A",),
        ...                                    Config(num_agents=1)))
        >>> policy.harness()["schema_order"]
        ['move', 'notebook']
    """

    env_kind: ClassVar[str] = "escape"

    def __init__(self, backend: ModelBackend, **options: Any) -> None:
        super().__init__(backend, **options)
        self.version = resolve_version(self.options.prompt_version)
        self.config: Config | None = None

    def harness(self) -> dict[str, Any]:
        info = super().harness()
        info["prompt_version"] = self.version
        info["wording"] = load_wording("escape", self.options.wording).version
        info["notebook_mode"] = self.config.notebook_mode if self.config else None
        return info

    def reset(self, agent: str, seed: int | None, episode: EscapeEpisode) -> None:
        super().reset(agent, seed, episode)
        config = episode.config
        self.config = config
        self.schema = escape_schema(config, check=self.options.check, order=self.options.order)
        self.system = escape_system(
            config,
            agent,
            self.schema,
            self.options.output_mode,
            version=self.version,
            check=self.options.check,
            wording=self.options.wording,
        )
        self._start_game()

    def prompt(self, observation: Observation) -> list[ChatMessage]:
        """The messages of this turn's request (one user message)."""
        assert self.config is not None, "reset() comes before the first decision"
        text = escape_user(
            observation, self.config, version=self.version, wording=self.options.wording
        )
        return [ChatMessage("user", text)]

    async def aact(self, observation: Observation) -> Decision[Action]:
        outcome = await self._decide(self.prompt(observation), extra=f"escape:{self.version}")
        action = escape_action(outcome.values) if outcome.values is not None else ESCAPE_FALLBACK
        record = outcome.record
        record.update(
            agent=self.agent, turn=observation.turn, action=action.model_dump(mode="json")
        )
        return Decision(
            action,
            record=record,
            usage=outcome.usage,
            stop=self._stop_reason(outcome),
            status=outcome.status,
        )


class AgiMazeLLMPolicy(_LLMPolicy[AgiMazeEpisode, AgiMazeObservation, str]):
    """A language model playing AGI Maze (one labyrinth, or a labyrinth set).

    The fallback after unusable replies follows the environment's handling of a bad action
    where one exists: in a labyrinth set, an action that is not valid at the moment is not
    played and uses no budget (``start`` during a labyrinth; a move while the set waits). The
    single-labyrinth environment has no action that costs nothing, so there the fallback is the
    labyrinth's first action and uses a step like any other (recorded as ``fallback``). Before
    falling back, each unusable reply is answered with the environment's own rejection text.
    """

    env_kind: ClassVar[str] = "agimaze"

    def __init__(self, backend: ModelBackend, **options: Any) -> None:
        super().__init__(backend, **options)
        version = self.options.prompt_version
        self.version = AGIMAZE_PROMPT_VERSIONS[-1] if version == "latest" else version
        if self.version not in AGIMAZE_PROMPT_VERSIONS:
            raise ValueError(
                f"unknown AGI Maze prompt version {version!r}; choose "
                f"{', '.join(AGIMAZE_PROMPT_VERSIONS)} or 'latest'"
            )
        self.history = History(self.options.history, self.options.window)
        self._message_cache: dict[tuple[str, str], ChatMessage] = {}
        self._set_index: int | None = None
        self._set_seed: int | None = None
        self.is_set = False
        self.actions: tuple[str, ...] = ()

    def harness(self) -> dict[str, Any]:
        info = super().harness()
        info["prompt_version"] = self.version
        info["wording"] = load_wording("agimaze", self.options.wording).version
        return info

    def reset(self, agent: str, seed: int | None, episode: AgiMazeEpisode) -> None:
        super().reset(agent, seed, episode)
        names = tuple(episode.action_names)
        self.is_set = START_ACTION in names or episode.env_id.endswith("AgiMazeSet-v0")
        self.actions = tuple(n for n in names if n != START_ACTION)
        enum = (START_ACTION, *self.actions) if self.is_set else self.actions
        reasoning = REASONING_FIELD[self.options.history]
        self.schema = agimaze_schema(
            enum, reasoning=reasoning, check=self.options.check, order=self.options.order
        )
        self.system = agimaze_system(
            episode,
            self.schema,
            self.options.output_mode,
            history=self.options.history,
            window=self.options.window,
            check=self.options.check,
            version=self.version,
            wording=self.options.wording,
        )
        index = episode.extra.get("index") if isinstance(episode.extra, Mapping) else None
        continuing = (
            self.options.set_memory
            and self.is_set
            and isinstance(index, int)
            and self._set_index is not None
            and index > self._set_index
            and seed == self._set_seed
        )
        self._set_index = index if isinstance(index, int) else None
        self._set_seed = seed
        if continuing:
            return  # the next labyrinth of the same set: history, caps and counters go on
        self.history = History(self.options.history, self.options.window, self.schema.fields)
        self._message_cache = {}
        self._start_game()

    def _allowed(self, observation: AgiMazeObservation) -> tuple[str, ...]:
        return (START_ACTION,) if observation.waiting else self.actions

    def _rejection(self, observation: AgiMazeObservation, action: str) -> str:
        """The environment's own text for an action it would not play now."""
        if observation.waiting:
            first = (observation.message or "").startswith(INITIAL_MESSAGE[:24])
            return not_started_message(action, first=first)
        if self.is_set:
            return not_available_message(action, self.actions)
        return rejected_action(action, list(self.actions), dict(observation.inventory)).text

    def _fallback(self, observation: AgiMazeObservation) -> str:
        if self.is_set:
            # not played, no budget used: the set's documented handling of a bad action
            return self.actions[0] if observation.waiting and self.actions else START_ACTION
        return self.actions[0]

    def prompt(self, observation: AgiMazeObservation) -> tuple[str, list[ChatMessage]]:
        """This step's observation text and the request's messages (history first)."""
        assert self.episode is not None, "reset() comes before the first decision"
        current = render_agimaze(observation, self.episode, wording=self.options.wording)
        cache = self._message_cache
        messages = []
        for role, content in self.history.messages(current):
            message = cache.get((role, content))
            if message is None:
                message = ChatMessage(role, content)
                if len(cache) < 4096:  # the same texts come back every step
                    cache[(role, content)] = message
            messages.append(message)
        return current, messages

    async def aact(self, observation: AgiMazeObservation) -> Decision[str]:
        current, messages = self.prompt(observation)
        allowed = self._allowed(observation)

        def check(values: Mapping[str, Any]) -> str | None:
            action = values["action"]
            return None if action in allowed else self._rejection(observation, action)

        outcome = await self._decide(messages, check, extra=f"agimaze:{self.version}")
        if outcome.values is not None:
            action = str(outcome.values["action"])
            self.history.add(current, outcome.values)
        else:
            action = self._fallback(observation)
            self.history.add(current, {"action": action})
        record = outcome.record
        record.update(agent=self.agent, step=observation.step, action=action)
        if outcome.values is None:
            record["fallback_action"] = action
        return Decision(
            action,
            record=record,
            usage=outcome.usage,
            stop=self._stop_reason(outcome),
            status=outcome.status,
        )
