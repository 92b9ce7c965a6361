"""What both LLM policies share: backend, settings, the game's caps, the server's capabilities.

:class:`LLMPolicyBase` holds the model backend, the model and harness settings, the game's
budget (shared by every agent of a game, :mod:`llm_policies.game`), the endpoint's capabilities
(:mod:`llm_policies.capabilities`: the output mode ``auto`` chose, the context window), the
counters behind the stop rules, and the harness report for the journal. Before each decision
:meth:`LLMPolicyBase._prepare` learns what it still needs about the server (once per process);
:meth:`LLMPolicyBase._decide` runs :func:`llm_policies.harness.decide` under a
:class:`~llm_policies.guard.Guard` and adds the notices of the game's record, each once per game:

* ``endpoint``: the capabilities the game played with (context window and where it came from,
  the server's tokenizer, modes it rejects, and for ``auto`` the probes and the chosen mode);
* ``context_warning`` (a prompt did not fit the context window; Ollama may have cut one),
  ``cap_breach`` (a reply longer than the
  output cap: the server ignored it), ``history_trim`` (AGI Maze history trimmed to fit),
  ``context_learned`` (a context-length error told the window).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from llm_policies.accounting import Budget, BudgetNode
from llm_policies.backends.base import (
    ChatMessage,
    ModelBackend,
    ModelError,
    ModelUnavailable,
    dropped_settings,
)
from llm_policies.capabilities import ENDPOINTS, Endpoint, endpoint_of
from llm_policies.game import GAMES, GameShare
from llm_policies.guard import Guard
from llm_policies.harness import HarnessSettings, Outcome, decide
from llm_policies.output_mode import OutputModeChoice
from llm_policies.output_mode import default_output_mode as default_output_mode
from llm_policies.schema import ReplySchema
from llm_policies.settings import ModelSettings, OutputMode
from maze_envs.policies.interface import AsyncPolicyBase, Decision, Usage

log = logging.getLogger(__name__)

EpisodeT = TypeVar("EpisodeT")
ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")

#: Backend closes scheduled by ``close()`` inside a running event loop.
_CLOSING: set[asyncio.Task[None]] = set()


@dataclass(frozen=True)
class RunEndpoints:
    """What a run learnt about its model servers (:meth:`LLMPolicyBase.prepare_run`), as plain
    data: installed in each worker process before its first game."""

    snapshots: tuple[dict[str, Any], ...]

    def install(self, processes: int) -> None:
        """Put it in place in this process, which shares each server's slots with
        ``processes - 1`` others."""
        ENDPOINTS.adopt(list(self.snapshots), share=processes)


class LLMPolicyBase(AsyncPolicyBase[EpisodeT, ObsT, ActT], Generic[EpisodeT, ObsT, ActT]):
    """The shared part of :class:`~llm_policies.policy.EscapeLLMPolicy` and
    :class:`~llm_policies.policy.AgiMazeLLMPolicy` (see the module docstring)."""

    privileged: ClassVar[bool] = False
    env_kind: ClassVar[str] = ""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        settings: ModelSettings | None = None,
        harness: HarnessSettings | None = None,
        run_budget: BudgetNode | None = None,
        **harness_options: Any,
    ) -> None:
        if harness is not None and harness_options:
            raise ValueError("give harness= or harness options as keywords, not both")
        self.backend = backend
        self.settings = settings if settings is not None else ModelSettings()
        self.options = harness if harness is not None else HarnessSettings(**harness_options)
        asked = self.options.output_mode if "output_mode" in self.options.model_fields_set else None
        #: the owner of the output mode: asked, and in force (see :mod:`llm_policies.output_mode`)
        self.output = OutputModeChoice.of(backend, asked)
        if asked is None:  # the default is recorded as the harness setting it stands for
            self.options = self.options.model_copy(update={"output_mode": self.output.asked})
        self.endpoint: Endpoint = endpoint_of(backend, self.settings)
        #: settings the provider's requests go out without, with the reason (recorded per game)
        self.dropped_settings = dropped_settings(backend, self.settings)
        self.run_budget = run_budget
        self.share = GameShare(self._game_budget())
        self.caps = self.share.budget
        self.schema: ReplySchema | None = None
        self.system = ""
        self.failures_in_a_row = 0
        self.total_usage = Usage()
        self._previous_messages: tuple[ChatMessage, ...] | None = None
        self._harness_recorded = False
        #: notices of this decision met before it was sent (a trimmed history)
        self._pending_notices: list[dict[str, Any]] = []

    @property
    def mode(self) -> OutputMode | None:
        """The output mode requests are sent in (``None`` until ``auto`` has chosen)."""
        return self.output.current

    # -- what the runner stores ------------------------------------------------------------

    def harness(self) -> dict[str, Any]:
        """Every harness setting of this policy, plain JSON for the game's meta."""
        options = self.options.model_dump(mode="json")
        endpoint = self.endpoint
        return {
            "policy": type(self).__name__,
            "env": self.env_kind,
            "model": self.backend.spec,
            "local": bool(getattr(self.backend, "local", False)),
            # the temperature the requests carry (None: the provider's default, or dropped)
            "temperature": None
            if "temperature" in self.dropped_settings
            else self.settings.temperature,
            "settings": self.settings.model_dump(mode="json"),
            "dropped_settings": dict(self.dropped_settings),
            "schema_order": list(self.schema.fields) if self.schema else None,
            **options,
            "output_mode_chosen": self.mode,
            "context_window": endpoint.context_window,
            "context_source": endpoint.context_source,
        }

    # -- the run: its budget, and what is learnt once for all its games ----------------------

    def bind_run_budget(self, budget: BudgetNode) -> bool:
        """Reserve every request of the next games in the run's ``budget`` (shared by every
        worker of a ``maze-envs bench`` run) before sending it, and settle it after
        (:mod:`maze_envs.policies.run`); called before :meth:`reset`."""
        self.run_budget = budget
        return True

    def prepare_run(self) -> RunEndpoints:
        """Ask the endpoint, once for the run and before its first game, what every game needs:
        whether the server answers, its context window, the requests it serves at once, the
        model it serves, and the output mode ``auto`` chooses (:mod:`llm_policies.capabilities`).

        Returns what was learnt, for the run's worker processes to install: a server that
        could not be reached too, so that its decisions are outages at once, without a request
        or a retry (:meth:`_prepare`).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self._prepare_run())
        else:  # called from inside an event loop (a notebook): ask from a thread of its own
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, self._prepare_run()).result()
        return RunEndpoints(tuple(ENDPOINTS.snapshot([self.endpoint.key])))

    async def _prepare_run(self) -> None:
        local = bool(self.backend.local)
        await self.endpoint.discover(self.backend, self.settings, local, reach=True)
        if self.endpoint.unreachable is not None:
            return
        self._identify()
        if self.output.auto:
            try:
                await self.endpoint.pick_mode(self.backend, self.settings)
            except ModelError:  # asked again at the first decision, where it is recorded
                log.warning("%s: the output-mode probes failed", self.backend.spec, exc_info=True)

    def _identify(self) -> None:
        """Tell a response cache which model the server serves (its key's model part)."""
        identify = getattr(self.backend, "identify", None)
        if callable(identify):
            identify(self.endpoint.identity)

    # -- the game and its caps ---------------------------------------------------------------

    def _game_budget(self) -> Budget:
        limits = (self.options.max_tokens_per_game, self.options.max_cost_per_game)
        if isinstance(self.run_budget, Budget):
            return self.run_budget.child(*limits, name="game")
        # None, or a run budget of another kind (shared across processes: a BudgetNode)
        return Budget(*limits, name="game", parent=self.run_budget)

    def _start_game(self, agent: str, key: Hashable | None = None, config: Any = None) -> None:
        """A new game: its budget is shared with the other agents reset into it (``key``)."""
        if key is None:
            self.share = GameShare(self._game_budget())
        else:
            limits = (self.options.max_tokens_per_game, self.options.max_cost_per_game)
            full_key = (key, limits, id(self.run_budget))
            self.share = GAMES.join(full_key, agent, config, self._game_budget)
        self.caps = self.share.budget
        self.failures_in_a_row = 0
        self._previous_messages = None
        self._harness_recorded = False

    def _build_system(self, mode: OutputMode) -> str:
        """The system prompt of this game in output ``mode`` (written by each policy)."""
        raise NotImplementedError

    def _decision(self, action: ActT, outcome: Outcome) -> Decision[ActT]:
        """The decision of ``action`` on ``outcome``: its record, usage and status, and the
        game's stop request when a stop rule fired (:meth:`_stop_reason`)."""
        return Decision(
            action,
            record=outcome.record,
            usage=outcome.usage,
            stop=self._stop_reason(outcome),
            status=outcome.status,
        )

    def _stop_reason(self, outcome: Outcome) -> str | None:
        self.total_usage = self.total_usage + outcome.usage
        if outcome.status == "ok":
            self.failures_in_a_row = 0
        else:
            self.failures_in_a_row += 1
        if outcome.reason in ("context", "config", "cap"):
            return outcome.error
        if outcome.status == "outage" and self._never_reached(outcome):
            # no connection at all to a server that has not answered once in this run: the
            # next decisions do not spend their retry budget on it (each is an outage at once)
            self.endpoint.unreachable = outcome.error or "no connection"
        reason = self.caps.exceeded()
        limit = self.options.max_consecutive_fallbacks
        if reason is None and limit is not None and self.failures_in_a_row >= limit:
            what = "model unavailable" if outcome.status == "outage" else "no usable reply"
            reason = f"{what} in {self.failures_in_a_row} decisions in a row: {outcome.error}"
        return reason

    def _never_reached(self, outcome: Outcome) -> bool:
        """Whether an outage is a server that never answered in this run (no connection), and
        that no earlier decision found so already."""
        outage = outcome.record.get("outage")
        kind = outage.get("kind") if isinstance(outage, dict) else None
        fresh = self.endpoint.unreachable is None
        return kind == "connection" and fresh and not self.endpoint.answered_once

    # -- one decision --------------------------------------------------------------------------

    async def _prepare(self) -> Outcome | str | None:
        """Learn what the next request needs: the context window, the output mode.

        Returns ``None`` when ready, a configuration error (``str``) when the asked mode is one
        the server rejects, or an outage :class:`Outcome` when the server could not be asked.
        """
        self.share.started = True
        await self.endpoint.discover(self.backend, self.settings, bool(self.backend.local))
        if self._unreachable():
            return self._unreachable_outage()
        self._identify()
        before = self.output.current
        try:
            refused = await self.output.ready(self.endpoint, self.backend, self.settings)
        except ModelError as exc:
            return self._probe_outage(exc)
        if refused is None and self.output.current != before and self.output.current is not None:
            self.system = self._build_system(self.output.current)
        return refused

    def _unreachable(self) -> bool:
        """The server could not be reached when the run began and has not answered since
        (replies from a read-only response cache need no server)."""
        endpoint = self.endpoint
        if endpoint.unreachable is None or endpoint.answered_once:
            return False
        return getattr(self.backend, "mode", None) != "read_only"

    def _unreachable_outage(self) -> Outcome:
        """The outage of a decision not sent: the server could not be reached at the start."""
        error = ModelUnavailable(
            f"{self.backend.spec}: the server at {self.endpoint.key[1] or 'its default URL'} "
            f"could not be reached when the run began ({self.endpoint.unreachable})",
            kind="connection",
        )
        record = self._unsent("outage", str(error), outage=error.to_json())
        return Outcome("outage", None, Usage(), record, str(error))

    def _probe_outage(self, error: ModelError) -> Outcome:
        record = self._unsent(
            "outage",
            str(error),
            outage=error.to_json(),
            probing="the output-mode probe could not reach the server",
        )
        return Outcome("outage", None, Usage(), record, str(error))

    def _unsent(self, status: str, error: str, **detail: Any) -> dict[str, Any]:
        """The record of a decision whose request was never sent."""
        return {
            "model": self.backend.spec,
            "output_mode": self.mode,
            "attempts": [],
            "values": None,
            "status": status,
            "error": error,
            "quirks": {},
            "usage": Usage().to_json(),
            **detail,
        }

    async def _decide(
        self,
        build: Callable[[], list[ChatMessage]],
        check_values: Any = None,
        extra: str = "",
        cache_history: bool = False,
    ) -> Outcome:
        """One decision on the messages ``build()`` makes once the server is known."""
        assert self.schema is not None, "reset() comes before the first decision"
        prepared = await self._prepare()
        if isinstance(prepared, Outcome):
            return self._noted(prepared)
        if isinstance(prepared, str):
            record = self._unsent("fallback", prepared, fallback_reason="config")
            outcome = Outcome("fallback", None, Usage(), record, prepared, reason="config")
            return self._noted(outcome)
        messages = build()
        outcome = await decide(
            self.backend,
            system=self.system,
            messages=messages,
            schema=self.schema,
            settings=self.settings,
            harness=self.options,
            mode=self.mode,
            check_values=check_values,
            previous_messages=self._previous_messages,
            cache_key_extra=extra,
            cache_history=cache_history,
            guard=Guard(self.backend, self.caps, self.endpoint),
        )
        if outcome.reason == "config" and self.output.auto:
            # the mode auto chose was rejected in play: choose again and ask once more
            again = await self._prepare()
            if again is None:
                return await self._decide(build, check_values, extra, cache_history)
        self._previous_messages = tuple(messages)
        return self._noted(outcome)

    def _noted(self, outcome: Outcome) -> Outcome:
        """Add the harness report and the game's notices (each once per game) to the record."""
        record = outcome.record
        if not self._harness_recorded:
            # the runner stores the game meta before the policies' reset, so the settings that
            # only the game decides (schema order, notebook mode, the mode auto chose) travel
            # with the first decision
            record["harness"] = self.harness()
            self._harness_recorded = True
        notices = [*self._pending_notices, *outcome.notices]
        self._pending_notices = []
        if outcome.reason == "context":
            notices.append({"kind": "context_warning", "message": outcome.error})
            if self.endpoint.context_source == "error":
                notices.append(
                    {"kind": "context_learned", "context_window": self.endpoint.context_window}
                )
        fresh = [n for n in notices if self.share.first_time(str(n.get("kind")))]
        if self.share.first_time("endpoint"):  # built once per game: it is long
            fresh.insert(0, {"kind": "endpoint", **self.endpoint.to_json()})
        if fresh:
            record.setdefault("notices", []).extend(fresh)
        return outcome

    # -- closing -------------------------------------------------------------------------------

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
