"""One game, from a :class:`~maze_envs.bench.spec.GameTask` to its results row.

:func:`play` runs a game synchronously; :func:`aplay` awaits the agents of each turn together
(``asyncio.gather`` over ``aact``), so I/O-bound policies (model calls) overlap; many games can
run at once in one event loop (:func:`~maze_envs.bench.workers.play_concurrently`). A team of
sync policies takes the plain loop, which adds almost nothing to the bare environment loop.

Into the journal. When a journal is given, the game is recorded through the environment's
recorder (``env.recorder``): before ``reset`` the runner sets the game meta (run key, experiment,
the task, the policy spec per agent, which agents are privileged, and the harness settings a
policy reports through a ``harness()`` method: prompt version, output mode, model...); before each
``step`` it notes every agent's ``Decision.record`` (with the decision's ``status`` added when it
is a fallback or an outage, so readers of the journal tell them from the policy's play).

Privileged policies (``privileged = True``, oracles) get the ground truth in their episode
information; the row marks the game ``privileged`` (and names the agents in the meta).

Run caps: with the run's ledger (:mod:`maze_envs.bench.ledger`), a policy that takes the run's
budget (:func:`maze_envs.policies.run.bind_run_budget`, before its reset) reserves each request
in it before sending; the other policies' decisions are charged after each turn.

Nothing a policy does crashes the run: an exception from ``reset``/``act``, an action the
environment refuses, or a ``Decision.stop`` request ends the game. Such a game is recorded as
aborted (``{"aborted": true, "stopped": "error"|"requested", "error": ...}`` added to the
outcome; it verifies as aborted), and its row has ``status`` ``"error"`` (a failure, with the
reason in ``error``) or ``"stopped"`` (with ``stop_reason``). A game in which any decision was an
outage (the model could not be reached) has ``status`` ``"outage"``, whether it ran to its end or
a policy stopped it (:func:`maze_envs.metrics.game_status`). Journal failures do propagate: a run
must not go on without recording what it claims to record.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from maze_envs.bench.envs import EnvAdapter, make_adapter
from maze_envs.bench.ledger import RUN_CAP_PREFIX, GameBudget
from maze_envs.bench.metrics import Status, UsageTally, game_status, journal_record
from maze_envs.bench.spec import GameTask
from maze_envs.journal import JournalError
from maze_envs.policies.interface import Decision, as_async, is_async
from maze_envs.policies.run import bind_run_budget

Row = dict[str, Any]


class PolicyFailure(Exception):
    """A policy (or the action it chose) ended the game; ``agent`` names whose it was."""

    def __init__(self, agent: str, error: BaseException) -> None:
        super().__init__(f"{agent}: {type(error).__name__}: {error}")
        self.agent = agent


def task_columns(task: GameTask) -> Row:
    """The columns that say which game a row is (the same for live and journal rows)."""
    case = task.case
    row: Row = {
        "run_key": task.run_key,
        "game_id": None,
        "experiment": task.experiment,
        "env": case.kind,
        "env_id": case.env_id,
        "setup": case.setup,
        "case": case.name,
        "size": case.size,
        "policy": task.policy.name,
        "policy_specs": [spec.text for spec in task.policy.members(task.agents)],
        "seed": task.seed,
    }
    row.update(case.columns())  # e.g. an AGI Maze bundle's (a set's target's) pack meta
    return row


def _game_meta(task: GameTask, adapter: EnvAdapter) -> dict[str, Any]:
    harness: dict[str, Any] = {}
    for agent, policy in adapter.policies.items():
        report = getattr(policy, "harness", None)
        if callable(report):
            settings = report()
            if settings:
                harness[agent] = dict(settings)
    return {
        "run_key": task.run_key,
        "experiment": task.experiment,
        "task": task.model_dump(mode="json"),
        "policies": {a: spec.text for a, spec in zip(task.agents, adapter.specs, strict=True)},
        "policy_seeds": adapter.policy_seeds,
        "privileged": sorted(adapter.privileged),
        "harness": harness,
    }


class _Game:
    """The bookkeeping shared by the sync and async loops."""

    def __init__(self, task: GameTask, journal: Any, budget: GameBudget | None) -> None:
        self.task = task
        self.started = time.perf_counter()
        self.adapter = make_adapter(task, journal)
        self.budget = budget
        self.stop_reason: str | None = None
        if budget is not None:  # before the policies' reset: a game's policies share its budget
            for agent, policy in self.adapter.policies.items():
                if bind_run_budget(policy, budget.budget(agent)):
                    budget.bound.add(agent)

    def start(self) -> None:
        adapter = self.adapter
        recorder = adapter.recorder
        if recorder is not None:
            recorder.set_game_meta(_game_meta(self.task, adapter))
        adapter.reset()

    def note(self, agent: str, decision: Decision[Any]) -> Any:
        """Account for a decision (usage, the run's caps, its journal record, a stop request);
        its action."""
        adapter = self.adapter
        adapter.usage.add(agent, decision)
        if self.budget is not None:
            self.budget.charge(agent, decision.usage)
        record = journal_record(decision)
        if record is not None and adapter.recorder is not None:
            adapter.recorder.note(agent, record)
        if decision.stop and self.stop_reason is None:
            # the run's cap, reached by a request this policy reserved: the run's reason
            run_cap = decision.stop.startswith(RUN_CAP_PREFIX)
            self.stop_reason = decision.stop if run_cap else f"{agent}: {decision.stop}"
        return decision.action

    def apply(self, results: Mapping[str, Any]) -> None:
        """Note the decisions, step the env with their actions; remember a stop request.

        ``results`` maps each agent to what its policy returned: an action or a Decision.
        """
        actions = {}
        statuses: dict[str, Status] = {}
        for agent, result in results.items():
            if isinstance(result, Decision):
                actions[agent] = self.note(agent, result)
                statuses[agent] = result.status
            else:  # a bare action: nothing else to account for
                self.adapter.usage.add_action(agent)
                actions[agent] = result
        self.step(actions, statuses)

    def step(self, actions: dict[str, Any], statuses: dict[str, Status] | None = None) -> None:
        """Step the env with the turn's actions (noted already) and the statuses of the
        decisions that are not bare actions; check the run's caps."""
        try:
            self.adapter.step(actions, statuses)
        except JournalError:
            raise
        except Exception as exc:  # the env refused an action: whose is in the message
            agent = next(iter(actions)) if len(actions) == 1 else "team"
            raise PolicyFailure(agent, exc) from exc
        if self.budget is not None:
            reason = self.budget.check()
            if reason is not None:  # the run's cap, even if a policy's own view of it also stopped
                self.stop_reason = reason

    @property
    def running(self) -> bool:
        return self.adapter.running and self.stop_reason is None

    def finish(self, error: PolicyFailure | None) -> Row:
        adapter = self.adapter
        status = game_status(
            error=error is not None, outages=adapter.usage.outages, stopped=bool(self.stop_reason)
        )
        if (error is not None or self.stop_reason) and adapter.running and adapter.started:
            run_cap = error is None and str(self.stop_reason).startswith(RUN_CAP_PREFIX)
            extra = {"stopped": "error" if error else "run_cap" if run_cap else "requested"}
            extra["error" if error else "stop_reason"] = str(error or self.stop_reason)
            adapter.abort(extra)
        row = task_columns(self.task)
        row.update(
            privileged=bool(adapter.privileged),
            status=status,
            error=None if error is None else str(error),
            stop_reason=self.stop_reason,
        )
        row.update(adapter.metrics())
        row.update(adapter.usage.row())
        row["elapsed_s"] = time.perf_counter() - self.started
        row["game_id"] = adapter.game_id
        return row

    def close(self) -> None:
        self.adapter.close()


async def _adecide(agent: str, policy: Any, observation: Any) -> Any:
    try:
        return await policy.aact(observation)
    except JournalError:
        raise
    except Exception as exc:
        raise PolicyFailure(agent, exc) from exc


def not_started_row(task: GameTask, reason: str) -> Row:
    """The row of a game a run cap kept from starting (status ``stopped``, no journal game)."""
    row = task_columns(task)
    row.update(privileged=False, status="stopped", error=None, stop_reason=reason)
    row.update(UsageTally().row())
    return row


def _open(task: GameTask, journal: Any, budget: GameBudget | None) -> _Game | Row:
    """The game; or the error row of a game whose policies or env could not even be built, or
    the row of a game the run's cap keeps from starting."""
    if budget is not None:
        reason = budget.check()
        if reason is not None:
            return not_started_row(task, reason)
    try:
        return _Game(task, journal, budget)
    except JournalError:
        raise
    except Exception as exc:
        row = task_columns(task)
        row.update(privileged=False, status="error", stop_reason=None)
        row["error"] = f"the game could not be set up: {type(exc).__name__}: {exc}"
        return row


def _loop(game: _Game) -> Row:
    # the sync loop is the bare env loop plus as little as possible: no call per bare action
    error: PolicyFailure | None = None
    adapter = game.adapter
    try:
        try:
            game.start()
            policies, add_action = adapter.policies, adapter.usage.add_action
            observe, note, step = adapter.observations, game.note, game.step
            while adapter.running and game.stop_reason is None:
                actions = {}
                statuses: dict[str, Status] = {}
                for agent, observation in observe().items():
                    try:
                        result = policies[agent].act(observation)
                    except JournalError:
                        raise
                    except Exception as exc:
                        raise PolicyFailure(agent, exc) from exc
                    if isinstance(result, Decision):
                        actions[agent] = note(agent, result)
                        statuses[agent] = result.status
                    else:
                        add_action(agent)
                        actions[agent] = result
                step(actions, statuses)
        except PolicyFailure as failure:
            error = failure
        return game.finish(error)
    finally:
        game.close()


async def _aloop(game: _Game) -> Row:
    error: PolicyFailure | None = None
    try:
        try:
            game.start()
            policies = {a: as_async(p) for a, p in game.adapter.policies.items()}
            while game.running:
                observations = game.adapter.observations()
                agents = list(observations)
                results = await asyncio.gather(
                    *(_adecide(a, policies[a], observations[a]) for a in agents),
                    return_exceptions=True,
                )
                decisions: dict[str, Any] = {}
                for agent, result in zip(agents, results, strict=True):
                    if isinstance(result, BaseException):
                        raise result
                    decisions[agent] = result
                game.apply(decisions)
        except PolicyFailure as failure:
            error = failure
        return game.finish(error)
    finally:
        game.close()


def play(task: GameTask, journal: Any = None, budget: GameBudget | None = None) -> Row:
    """Play one game and return its row (``budget``: the run's caps, see the module doc).

    A team with an async policy (``aact`` of its own, see
    :func:`maze_envs.policies.interface.is_async`) is played by the async loop in a fresh event
    loop; inside a running event loop, await :func:`aplay` instead.
    """
    game = _open(task, journal, budget)
    if not isinstance(game, _Game):
        return game
    if any(is_async(p) for p in game.adapter.policies.values()):
        return asyncio.run(_aloop(game))
    return _loop(game)


async def aplay(task: GameTask, journal: Any = None, budget: GameBudget | None = None) -> Row:
    """Play one game, awaiting the decisions of each turn's agents together."""
    game = _open(task, journal, budget)
    if not isinstance(game, _Game):
        return game
    return await _aloop(game)
