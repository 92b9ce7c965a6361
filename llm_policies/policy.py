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
asks the runner to end the game when a cap is reached, when a Maze Escape prompt cannot fit the
model's context window (``"context: ..."``), or when the server rejects the output mode
(``"config: ..."``). An AGI Maze history that would not fit is trimmed instead (its oldest steps
left out, recorded). ``harness()`` returns every harness setting for the game's meta.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pydantic import ValidationError

from llm_policies.backends.base import ChatMessage, ModelBackend
from llm_policies.harness import Outcome
from llm_policies.history import REASONING_FIELD, History
from llm_policies.policy_base import LLMPolicyBase
from llm_policies.prompt_data import resolve_version
from llm_policies.prompts.agimaze import AGIMAZE_PROMPT_VERSIONS, agimaze_system
from llm_policies.prompts.escape import escape_system, escape_user
from llm_policies.schema import agimaze_schema, escape_action, escape_schema, short_errors
from llm_policies.settings import OutputMode
from llm_policies.tokens import estimate_count, reply_reserve
from maze_envs._registration import env_ids
from maze_envs.agimaze.backends import rejected_action
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.set_env import (
    INITIAL_MESSAGE,
    START_ACTION,
    not_available_message,
    not_started_message,
)
from maze_envs.escape.types import Action, Config, Observation
from maze_envs.policies.interface import AgiMazeEpisode, Decision, EscapeEpisode
from maze_envs.text.agimaze import render_agimaze
from maze_envs.text.wording import load_wording

#: The Maze Escape action of a decision that is not the model's play.
ESCAPE_FALLBACK: Final = Action(move="STAY")
#: An AGI Maze history trimmed to fit is cut to this share of the room, so that it is not cut
#: again at the next step (each cut changes the prompt's start: no provider cache hit).
TRIM_TARGET: Final = 0.75
#: The env ids of the labyrinth set (its episodes begin each labyrinth with ``start``).
SET_IDS: Final = env_ids("agimaze", labyrinth_set=True)
#: Trims of one AGI Maze decision after context-length errors before the game stops.
CONTEXT_RETRIES: Final = 4


class EscapeLLMPolicy(LLMPolicyBase[EscapeEpisode, Observation, Action]):
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
        #: edits of the last played reply that were rejected (field -> reason), shown to the
        #: model in the next observation as the environment shows a rejected splice
        self.rejected: dict[str, str] = {}

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
        self.system = self._build_system(self.mode) if self.mode is not None else ""
        self.rejected = {}
        # the agents of one game share its caps: the game is the config object the env gave
        # every agent, reset together before the first turn (llm_policies.game)
        key = ("escape", id(config), episode.env_id, tuple(episode.agents))
        self._start_game(agent, key, config)

    def _build_system(self, mode: OutputMode) -> str:
        assert self.config is not None and self.schema is not None
        return escape_system(
            self.config,
            self.agent,
            self.schema,
            mode,
            version=self.version,
            check=self.options.check,
            wording=self.options.wording,
        )

    def prompt(self, observation: Observation) -> list[ChatMessage]:
        """The messages of this turn's request (one user message)."""
        assert self.config is not None, "reset() comes before the first decision"
        text = escape_user(
            with_rejections(observation, self.rejected),
            self.config,
            self.agent or "",
            version=self.version,
            wording=self.options.wording,
        )
        return [ChatMessage("user", text)]

    async def aact(self, observation: Observation) -> Decision[Action]:
        outcome = await self._decide(
            lambda: self.prompt(observation), action_error, extra=f"escape:{self.version}"
        )
        action = escape_action(outcome.values) if outcome.values is not None else ESCAPE_FALLBACK
        self.rejected = dict(outcome.record.get("rejected_fields") or {})
        record = outcome.record
        record.update(
            agent=self.agent, turn=observation.turn, action=action.model_dump(mode="json")
        )
        if outcome.values is None:
            record["fallback_action"] = record["action"]
        return self._decision(action, outcome)


def with_rejections(observation: Observation, rejected: Mapping[str, str]) -> Observation:
    """``observation`` with the edits of the last reply that were rejected (salvaged replies:
    the move was played, the edit left out) reported in ``last_action`` the way the environment
    reports an edit its rules reject: ``notebook`` ``"rejected"``, ``radio`` ``"refused"``, each
    with its reason."""
    if not rejected:
        return observation
    update: dict[str, Any] = {}
    if "notebook" in rejected:
        update.update(notebook="rejected", notebook_reason=rejected["notebook"])
    if "radio" in rejected:
        update.update(radio="refused", radio_reason=rejected["radio"])
    last = observation.last_action.model_copy(update=update)
    return observation.model_copy(update={"last_action": last})


def action_error(values: Mapping[str, Any]) -> str | None:
    """Why reply values make no Maze Escape action (a splice position beyond the action space
    that a schema without bounds let through...), for the re-ask; ``None`` when they do."""
    try:
        escape_action(values)
    except ValueError as exc:  # pydantic's ValidationError included
        return short_errors(exc) if isinstance(exc, ValidationError) else str(exc)
    return None


class AgiMazeLLMPolicy(LLMPolicyBase[AgiMazeEpisode, AgiMazeObservation, str]):
    """A language model playing AGI Maze (one labyrinth, or a labyrinth set).

    The fallback after unusable replies follows the environment's handling of a bad action
    where one exists: in a labyrinth set, an action that is not valid at the moment is not
    played and uses no budget (``start`` during a labyrinth; a move while the set waits). The
    single-labyrinth environment has no action that costs nothing, so there the fallback is the
    labyrinth's first action and uses a step like any other (recorded as ``fallback``). Before
    falling back, each unusable reply is answered with the environment's own rejection text.

    When the context window is known and the history would not fit it (with room for the
    reply), the oldest steps are left out, as a window would, down to :data:`TRIM_TARGET` of
    the room; the decision records ``history_trim`` and the game's record a notice. A
    context-length error from the server trims further and asks again.
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
        #: steps before this one are left out to fit the context window (automatic trim)
        self.history_start = 0
        #: the context window the last request's messages were fitted to
        self._fitted_window: int | None = None
        self._trim: dict[str, Any] | None = None

    def harness(self) -> dict[str, Any]:
        info = super().harness()
        info["prompt_version"] = self.version
        info["wording"] = load_wording("agimaze", self.options.wording).version
        return info

    def reset(self, agent: str, seed: int | None, episode: AgiMazeEpisode) -> None:
        super().reset(agent, seed, episode)
        names = tuple(episode.action_names)
        self.is_set = START_ACTION in names or episode.env_id in SET_IDS
        self.actions = tuple(n for n in names if n != START_ACTION)
        enum = (START_ACTION, *self.actions) if self.is_set else self.actions
        reasoning = REASONING_FIELD[self.options.history]
        self.schema = agimaze_schema(
            enum, reasoning=reasoning, check=self.options.check, order=self.options.order
        )
        self.system = self._build_system(self.mode) if self.mode is not None else ""
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
        self.history_start = 0
        self._start_game(agent)

    def _build_system(self, mode: OutputMode) -> str:
        assert self.episode is not None and self.schema is not None
        return agimaze_system(
            self.episode,
            self.schema,
            mode,
            history=self.options.history,
            window=self.options.window,
            check=self.options.check,
            version=self.version,
            wording=self.options.wording,
        )

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

    async def _decide_fitted(self, current: str, check: Any) -> Outcome:
        """A decision on a history that fits the context window (trimmed further and asked
        again after a context-length error, up to :data:`CONTEXT_RETRIES` times)."""
        refused: list[dict[str, Any]] = []
        for _ in range(CONTEXT_RETRIES):
            self._trim = None
            outcome = await self._decide(
                lambda: self._fitted(current),
                check,
                extra=f"agimaze:{self.version}",
                cache_history=True,
            )
            if self._trim is not None:
                outcome.record["history_trim"] = self._trim
            if outcome.reason != "context":
                break
            context = outcome.record.get("context") or {}
            unsent = "server_error" not in context
            if unsent and self.endpoint.context_window != self._fitted_window:
                # not sent: a window learnt meanwhile (another game's refusal) that the
                # messages were not fitted to; fitting them to it is enough
                continue
            if not self._trim_more():
                break
            refused.append(outcome.record)
        if refused:  # the requests the server refused as too long, and what they taught
            record = outcome.record
            record["context_retries"] = [
                {"error": r.get("error"), "context": r.get("context")} for r in refused
            ]
            notices = [n for r in refused for n in r.get("notices", [])]
            if notices:
                record["notices"] = [*notices, *record.get("notices", [])]
        return outcome

    def _fallback(self, observation: AgiMazeObservation) -> str:
        if self.is_set:
            # not played, no budget used: the set's documented handling of a bad action
            return self.actions[0] if observation.waiting and self.actions else START_ACTION
        return self.actions[0]

    def prompt(self, observation: AgiMazeObservation) -> tuple[str, list[ChatMessage]]:
        """This step's observation text and the request's messages (history first)."""
        assert self.episode is not None, "reset() comes before the first decision"
        current = render_agimaze(observation, self.episode, wording=self.options.wording)
        return current, self._messages(current)

    def _messages(self, current: str) -> list[ChatMessage]:
        cache = self._message_cache
        messages = []
        for role, content in self.history.messages(current, self.history_start):
            message = cache.get((role, content))
            if message is None:
                message = ChatMessage(role, content)
                if len(cache) < 4096:  # the same texts come back every step
                    cache[(role, content)] = message
            messages.append(message)
        return messages

    def _fitted(self, current: str) -> list[ChatMessage]:
        """The messages, the oldest steps left out when they would not fit the context window."""
        messages = self._messages(current)
        window = self._fitted_window = self.endpoint.context_window
        if window is None or self.mode is None:
            return messages
        room = window - reply_reserve(self.settings.max_output_tokens)
        schema = len(self.schema.schema_text.encode()) if self.schema is not None else 0
        fixed = len(self.system.encode()) + (schema if self.mode in ("tool", "native") else 0)
        size = fixed + sum(len(m.content.encode()) for m in messages)
        rate = self.endpoint.rate
        if estimate_count(size, len(messages), rate).high <= room:
            return messages
        steps, first = self.history.steps, self.history.first_shown(self.history_start)
        start = first
        target = int(TRIM_TARGET * room)
        while (
            start < len(steps)
            and estimate_count(size, 2 * (len(steps) - start) + 1, rate).high > target
        ):
            size -= len(steps[start].observation.encode()) + len(steps[start].text.encode())
            start += 1
        self._note_trim(first, start, window, room)
        return self._messages(current)

    def _note_trim(self, first: int, start: int, window: int, room: int) -> None:
        self.history_start = start
        self._trim = {
            "left_out": start - first,
            "first_shown": start,
            "steps": len(self.history.steps),
            "context_window": window,
            "room": room,
        }
        self._pending_notices.append({"kind": "history_trim", **self._trim})

    def _trim_more(self) -> bool:
        """After a context-length error: leave out half of the shown steps (False: none left)."""
        first = self.history.first_shown(self.history_start)
        shown = len(self.history.steps) - first
        if shown == 0:
            return False
        window = self.endpoint.context_window or 0
        room = window - reply_reserve(self.settings.max_output_tokens)
        self._note_trim(first, first + max(1, shown // 2 + shown % 2), window, room)
        return True

    async def aact(self, observation: AgiMazeObservation) -> Decision[str]:
        assert self.episode is not None, "reset() comes before the first decision"
        current = render_agimaze(observation, self.episode, wording=self.options.wording)
        allowed = self._allowed(observation)

        def check(values: Mapping[str, Any]) -> str | None:
            action = values["action"]
            return None if action in allowed else self._rejection(observation, action)

        outcome = await self._decide_fitted(current, check)
        if outcome.values is not None:
            action = str(outcome.values["action"])
            self.history.add(current, outcome.values)
        else:
            action = self._fallback(observation)
            self.history.add(current, {"action": action})
        record = outcome.record
        record.update(agent=self.agent, step=observation.step, action=action)
        if self.history_start:
            record["history_left_out"] = self.history.first_shown(self.history_start)
        if outcome.values is None:
            record["fallback_action"] = action
        return self._decision(action, outcome)
