"""The parent's side of a pool of workers: batches, attempts, what a run cap refuses.

Shared by the process pool (:mod:`maze_envs.bench.executors`) and Ray
(:mod:`maze_envs.bench.ray_executor`); the module docstring of the first says how batches are
sized and how attempts are counted.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from maze_envs.bench.ledger import RUN_CAP_PREFIX, CapTable, RunLedger
from maze_envs.bench.rollout import Row, not_started_row, task_columns
from maze_envs.bench.spec import GameTask
from maze_envs.bench.workers import Finished

#: A batch holds about this many seconds of games (estimated from the games finished so far).
BATCH_SECONDS = 0.25
#: The most games in one batch.
MAX_BATCH = 32
#: A fault-injection hook of the executors: ``fault(point, pool)`` (see
#: :mod:`maze_envs.bench.executors`).
Fault = Callable[[str, Any], None]


def failed_row(task: GameTask, reason: str) -> Row:
    """The row of a game that could not be played at all (no journal game exists)."""
    row = task_columns(task)
    row.update(privileged=False, status="error", error=reason, stop_reason=None)
    return row


class Batcher:
    """Sizes batches from how long the finished games took (see the module docstring).

    >>> batcher = Batcher(workers=2)
    >>> batcher.size(remaining=100)  # nothing known yet: one game
    1
    >>> for _ in range(5):
    ...     batcher.observe({"elapsed_s": 0.01})
    >>> batcher.size(remaining=100)  # 0.25 s of 10 ms games, capped at MAX_BATCH
    25
    >>> batcher.size(remaining=12)  # an even share of what is left per in-flight slot
    3
    >>> Batcher(workers=2, least=8).size(remaining=20)  # concurrent games: a worker's fill
    8
    >>> Batcher(workers=2, least=8).size(remaining=5)
    5
    """

    def __init__(
        self,
        workers: int,
        seconds: float = BATCH_SECONDS,
        most: int = MAX_BATCH,
        least: int = 1,
    ) -> None:
        self.slots = 2 * workers
        self.seconds = seconds
        self.most = most
        self.least = max(1, least)
        self.mean: float | None = None

    def observe(self, row: Row) -> None:
        elapsed = row.get("elapsed_s")
        if not isinstance(elapsed, int | float) or elapsed < 0:
            return
        self.mean = float(elapsed) if self.mean is None else 0.8 * self.mean + 0.2 * elapsed

    def size(self, remaining: int) -> int:
        least = max(1, min(self.least, remaining))  # a worker's concurrent games, if left
        if self.mean is None:
            return least
        fill = int(self.seconds / max(self.mean, 1e-6))
        share = -(-remaining // self.slots)  # ceil
        return max(least, min(fill, self.most, share))


@dataclass(frozen=True, slots=True)
class Batch:
    """Games sent to a worker together; ``number`` names its start mark."""

    number: int
    tasks: list[GameTask]


def _next_batch(queue: deque[GameTask], attempts: dict[str, int], size: int) -> list[GameTask]:
    """Up to ``size`` tasks from ``queue``; a task played before (its worker died) goes alone,
    so a game that kills its worker never takes other games' attempts with it."""
    batch: list[GameTask] = []
    while queue and len(batch) < size:
        if attempts.get(queue[0].run_key, 0) > 0:
            if batch:
                break
            batch.append(queue.popleft())
            break
        batch.append(queue.popleft())
    return batch


def check_counts(**counts: int) -> None:
    """``ValueError`` naming the first of a pool's ``counts`` (workers, games at once, attempts,
    batch size) that is below 1."""
    for name, value in counts.items():
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


class PoolSettings(Protocol):
    """What a pool's dispatch is sized by: the executors' settings of the same names."""

    workers: int
    concurrency: int
    max_attempts: int
    max_batch: int


class Dispatch:
    """The parent's bookkeeping of a pool of workers (process pool and Ray): the games left,
    their attempts, the batches in flight, the run's caps."""

    @classmethod
    def of(
        cls,
        pool: PoolSettings,
        tasks: Sequence[GameTask],
        caps: CapTable | None,
        ledger: RunLedger | None,
    ) -> Dispatch:
        """The dispatch of ``tasks`` over a pool of these settings."""
        return cls(
            tasks, pool.workers, pool.concurrency, pool.max_attempts, caps, ledger, pool.max_batch
        )

    def __init__(
        self,
        tasks: Sequence[GameTask],
        workers: int,
        concurrency: int,
        max_attempts: int,
        caps: CapTable | None = None,
        ledger: RunLedger | None = None,
        max_batch: int = MAX_BATCH,
    ) -> None:
        self.queue: deque[GameTask] = deque(tasks)
        self.attempts: dict[str, int] = {}
        self.max_attempts = max_attempts
        self.limit = 2 * workers
        self.batcher = Batcher(workers, most=max_batch, least=min(concurrency, max_batch))
        self.running: dict[Any, Batch] = {}
        self.caps = caps
        self.ledger = ledger
        self._numbers = itertools.count()
        self._capped: dict[tuple[int, ...], str] = {}

    @property
    def busy(self) -> bool:
        return bool(self.queue or self.running)

    def refused(self) -> Iterator[Finished]:
        """The games at the head of the queue that a reached run cap keeps from starting."""
        while self.queue and self.caps is not None and self.ledger is not None:
            task = self.queue[0]
            watch = self.caps.watched(task)
            reason = self._capped.get(watch)
            if reason is None:
                reason = self.ledger.update({}, watch)
                if reason is None:
                    return
                self._capped[watch] = reason  # a cap reached stays reached
            self.queue.popleft()
            yield Finished(task, not_started_row(task, RUN_CAP_PREFIX + reason), None)

    def take(self) -> Batch | None:
        """The next batch to submit, or ``None`` (nothing left, or enough in flight)."""
        if not self.queue or len(self.running) >= self.limit:
            return None
        tasks = _next_batch(self.queue, self.attempts, self.batcher.size(len(self.queue)))
        return Batch(next(self._numbers), tasks)

    def give_back(self, batch: Batch) -> None:
        """A batch that never reached a worker: back to the head of the queue, no attempt."""
        self.queue.extendleft(reversed(batch.tasks))

    def report(self, finished: Finished) -> None:
        self.batcher.observe(finished.row)

    def lost(self, batch: Batch, charged: bool) -> list[Finished]:
        """A batch a dead worker never reported: its games go back to the queue (``charged``:
        one more attempt each, then alone); a game out of attempts becomes an error row."""
        errors: list[Finished] = []
        for task in reversed(batch.tasks):
            if charged:
                count = self.attempts[task.run_key] = self.attempts.get(task.run_key, 0) + 1
                if count >= self.max_attempts:
                    reason = f"the worker process died {count} times playing this game"
                    errors.append(Finished(task, failed_row(task, reason), None))
                    continue
            self.queue.appendleft(task)
        return errors


class RunInputs(NamedTuple):
    """What an executor's ``run`` is given (see :class:`maze_envs.bench.executors.Executor`)."""

    tasks: Sequence[GameTask]
    shard_dir: Path | None
    caps: CapTable | None
    spent: Sequence[float] | None
    shared: Sequence[Any]


class ExecutorBase:
    """The library's executors: ``run`` (the :class:`~maze_envs.bench.executors.Executor`
    protocol's call) hands its arguments to ``play``, which each executor writes."""

    def run(
        self,
        tasks: Sequence[GameTask],
        shard_dir: Path | None,
        caps: CapTable | None = None,
        spent: Sequence[float] | None = None,
        *,
        shared: Sequence[Any] = (),
    ) -> Iterator[Finished]:
        return self.play(RunInputs(tasks, shard_dir, caps, spent, shared))

    def play(self, run: RunInputs) -> Iterator[Finished]:
        """The games of ``run``, in completion order."""
        raise NotImplementedError
