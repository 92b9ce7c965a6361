"""One game, from a :class:`~maze_envs.bench.spec.GameTask` to its results row.

:func:`play` runs a game synchronously; :func:`aplay` awaits the agents of each turn together
(``asyncio.gather`` over ``aact``), so I/O-bound policies (model calls) overlap; many games can
run at once in one event loop (:func:`aplay_many`, with a concurrency limit). A team of sync
policies takes the plain loop, which adds almost nothing to the bare environment loop.

Into the journal. When a journal is given, the game is recorded through the environment's
recorder (``env.recorder``): before ``reset`` the runner sets the game meta (run key, experiment,
the task, the policy spec per agent, which agents are privileged, and the harness settings a
policy reports through a ``harness()`` method: prompt version, output mode, model...); before each
``step`` it notes every agent's ``Decision.record``.

Privileged policies (``privileged = True``, oracles) get the ground truth in their episode
information; the row marks the game ``privileged`` (and names the agents in the meta).

Nothing a policy does crashes the run: an exception from ``reset``/``act``, an action the
environment refuses, or a ``Decision.stop`` request ends the game. Such a game is recorded as
aborted (``{"aborted": true, "stopped": "error"|"requested", "error": ...}`` added to the
outcome; it verifies as aborted), and its row has ``status`` ``"error"`` (a failure, with the
reason in ``error``) or ``"stopped"`` (with ``stop_reason``). Journal failures do propagate: a run
must not go on without recording what it claims to record.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable, Mapping
from typing import Any

from maze_envs.bench.envs import EnvAdapter, make_adapter
from maze_envs.bench.spec import AgiMazeCase, EscapeCase, GameTask
from maze_envs.journal import JournalError
from maze_envs.policies.interface import Decision, as_async, is_async

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
        "case": (
            case.size
            if isinstance(case, EscapeCase)
            else case.pack
            if isinstance(case, AgiMazeCase)
            else case.target
        ),
        "size": case.size,
        "policy": task.policy.name,
        "policy_specs": [spec.text for spec in task.policy.members(task.agents)],
        "seed": task.seed,
    }
    if not isinstance(case, EscapeCase):  # an AGI Maze bundle or a set: its target's pack meta
        row.update(group=case.group, family=case.family, stage=case.stage)
        row["optimal_steps"] = case.optimal_steps
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
        "privileged": sorted(adapter.privileged),
        "harness": harness,
    }


class _Game:
    """The bookkeeping shared by the sync and async loops."""

    def __init__(self, task: GameTask, journal: Any) -> None:
        self.task = task
        self.started = time.perf_counter()
        self.adapter = make_adapter(task, journal)
        self.stop_reason: str | None = None

    def start(self) -> None:
        adapter = self.adapter
        recorder = adapter.recorder
        if recorder is not None:
            recorder.set_game_meta(_game_meta(self.task, adapter))
        adapter.reset()

    def apply(self, results: Mapping[str, Any]) -> None:
        """Note the decisions, step the env with their actions; remember a stop request.

        ``results`` maps each agent to what its policy returned: an action or a Decision.
        """
        adapter = self.adapter
        actions = {}
        for agent, result in results.items():
            if isinstance(result, Decision):
                adapter.usage.add(agent, result)
                if result.record is not None and adapter.recorder is not None:
                    adapter.recorder.note(agent, result.record)
                if result.stop and self.stop_reason is None:
                    self.stop_reason = f"{agent}: {result.stop}"
                actions[agent] = result.action
            else:  # a bare action: nothing else to account for
                adapter.usage.decisions += 1
                actions[agent] = result
        try:
            adapter.step(actions)
        except JournalError:
            raise
        except Exception as exc:  # the env refused an action: whose is in the message
            agent = next(iter(results)) if len(results) == 1 else "team"
            raise PolicyFailure(agent, exc) from exc

    @property
    def running(self) -> bool:
        return self.adapter.running and self.stop_reason is None

    def finish(self, error: PolicyFailure | None) -> Row:
        adapter = self.adapter
        status = "error" if error is not None else "stopped" if self.stop_reason else "ok"
        if status != "ok" and adapter.running and adapter.started:
            extra = {"stopped": "error" if error else "requested"}
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


def _decide(agent: str, policy: Any, observation: Any) -> Any:
    try:
        return policy.act(observation)
    except JournalError:
        raise
    except Exception as exc:
        raise PolicyFailure(agent, exc) from exc


async def _adecide(agent: str, policy: Any, observation: Any) -> Any:
    try:
        return await policy.aact(observation)
    except JournalError:
        raise
    except Exception as exc:
        raise PolicyFailure(agent, exc) from exc


def _open(task: GameTask, journal: Any) -> _Game | Row:
    """The game, or the error row of a game whose policies or env could not even be built."""
    try:
        return _Game(task, journal)
    except JournalError:
        raise
    except Exception as exc:
        row = task_columns(task)
        row.update(privileged=False, status="error", stop_reason=None)
        row["error"] = f"the game could not be set up: {type(exc).__name__}: {exc}"
        return row


def _loop(game: _Game) -> Row:
    error: PolicyFailure | None = None
    try:
        try:
            game.start()
            policies = game.adapter.policies
            while game.running:
                observations = game.adapter.observations()
                decisions = {a: _decide(a, policies[a], o) for a, o in observations.items()}
                game.apply(decisions)
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


def play(task: GameTask, journal: Any = None) -> Row:
    """Play one game and return its row.

    A team with an async policy (``aact`` of its own, see
    :func:`maze_envs.policies.interface.is_async`) is played by the async loop in a fresh event
    loop; inside a running event loop, await :func:`aplay` instead.
    """
    game = _open(task, journal)
    if not isinstance(game, _Game):
        return game
    if any(is_async(p) for p in game.adapter.policies.values()):
        return asyncio.run(_aloop(game))
    return _loop(game)


async def aplay(task: GameTask, journal: Any = None) -> Row:
    """Play one game, awaiting the decisions of each turn's agents together."""
    game = _open(task, journal)
    if not isinstance(game, _Game):
        return game
    return await _aloop(game)


async def aplay_many(
    tasks: Iterable[GameTask], journal: Any = None, concurrency: int = 8
) -> list[Row]:
    """Play many games concurrently in this event loop, at most ``concurrency`` at a time.

    The games may share one journal (each has its own game id). Rows come back in completion
    order.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    limit = asyncio.Semaphore(concurrency)
    rows: list[Row] = []

    async def one(task: GameTask) -> None:
        async with limit:
            rows.append(await aplay(task, journal))

    await asyncio.gather(*(one(task) for task in tasks))
    return rows


def budget_of(factor: float, max_steps: int) -> int:
    """The AGI Maze evaluation budget the env enforces: ``max(1, floor(factor x max_steps))``."""
    return max(1, math.floor(factor * max_steps))
