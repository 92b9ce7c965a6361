"""Where games run: in this process, in a local process pool, or on Ray.

Every executor takes the runner's tasks and yields :class:`Finished` games **in completion
order**, with back-pressure: at most ``2 x workers`` batches are submitted and not yet finished,
so a run of a million games holds a few hundred in memory at most.

Batches. The process pool and Ray send games to workers in batches sized from the games
finished so far (:class:`Batcher`): one game at a time until the first games report how long
they take, then as many as fill about :data:`BATCH_SECONDS` (at most :data:`MAX_BATCH`, and
never more than an even share of what is left, so the last games still spread over every
worker). Short games (an AGI Maze oracle plays in milliseconds) then no longer pay a round trip
each; long games (model calls, big mazes) still go one by one. A batch's games are reported
together when it ends.

Concurrency. Every executor honours ``concurrency`` (async policies such as model calls): inline,
that many games at once in this process's event loop; in the process pool and on Ray, that many
games at once in each worker's event loop (:func:`play_concurrently`, the same loop inline uses),
and batches then hold at least ``concurrency`` games (while that many are left), so that
``workers=2, concurrency=8`` plays 16 games at once, 8 in each worker. One event loop's CPU
bounds what it can drive (a few ms of client code per model call); workers multiply it.

Journal shards. A worker never writes the run's journal. Each worker process (each concurrency
slot, inline) records its games in its own shard journal under the run's ``shards/`` folder and
settles it before it reports a game; the runner then copies the finished game into the run's
journal (:meth:`maze_envs.journal.Journal.copy_game`) and only then counts it. So a worker that
dies mid-game leaves at most a half-written game in its shard, which is never copied (nor are
the games its batch had finished, since they were never reported), and a task that is retried
after a worker died (the process pool resubmits it, alone; Ray retries its batch) is copied at
most once: the runner copies each run key once. Shards are deleted when the run ends.

* :class:`InlineExecutor`: games one after another in this process; with ``concurrency > 1``
  (async policies such as model calls) that many games at once in one event loop.
* :class:`ProcessExecutor`: a ``concurrent.futures`` process pool (``forkserver`` start: clean
  workers, nothing inherited from the runner's threads). A worker that dies breaks the pool: the
  executor starts a new one and resubmits the unfinished games (each at most ``max_attempts``
  times, then it is reported as an error row).
* :class:`RayExecutor`: Ray remote tasks (``pip install 'maze-envs[ray]'``) on the cluster
  ``ray.init`` finds, or a local one with ``num_cpus=workers`` that the executor starts and
  stops; Ray retries a task whose worker died (``max_retries``) and the executor waits on the
  submitted tasks with ``ray.wait``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from maze_envs.bench.rollout import Row, aplay, play, task_columns
from maze_envs.bench.spec import GameTask

ExecutorName = Literal["inline", "process", "ray"]
#: Modules the process pool's fork server imports once, so that workers start warm (append
#: more, such as model clients, before the first pool of the process starts).
PRELOAD = [
    "maze_envs.bench.executors",
    "maze_envs.policies.registry",
    "maze_envs.maze_escape_v1",
    "maze_envs.agimaze.env",
    "maze_envs.journal",
]
EXECUTORS: tuple[str, ...] = ("inline", "process", "ray")
#: A batch holds about this many seconds of games (estimated from the games finished so far).
BATCH_SECONDS = 0.25
#: The most games in one batch.
MAX_BATCH = 32


@dataclass(frozen=True, slots=True)
class Finished:
    """A played game: its row and, when recorded, the shard journal that holds it."""

    task: GameTask
    row: Row
    shard: str | None


class Executor(Protocol):
    """Runs tasks and yields their :class:`Finished` games in completion order."""

    def run(self, tasks: Sequence[GameTask], shard_dir: Path | None) -> Iterator[Finished]: ...


def failed_row(task: GameTask, reason: str) -> Row:
    """The row of a game that could not be played at all (no journal game exists)."""
    row = task_columns(task)
    row.update(privileged=False, status="error", error=reason, stop_reason=None)
    return row


# --- the worker side ---------------------------------------------------------------------------

_SHARD: Any = None  # this process's shard journal (workers), opened on first use


def _shard_journal(shard_dir: str) -> Any:
    global _SHARD
    if _SHARD is None or Path(_SHARD.path).parent != Path(shard_dir):
        from maze_envs.journal import Journal

        name = f"shard-{os.getpid()}-{uuid.uuid4().hex[:8]}.sqlite"
        _SHARD = Journal(Path(shard_dir) / name, durable=False)
    return _SHARD


def run_task(task: GameTask, shard_dir: str | None) -> Finished:
    """Play ``task`` in this process, recording it in this process's shard (worker entry point)."""
    journal = None if shard_dir is None else _shard_journal(shard_dir)
    row = play(task, journal)
    if journal is not None:
        journal.settle()  # the runner reads the game from the shard next
    return Finished(task, row, None if journal is None else str(journal.path))


def play_concurrently(
    tasks: Sequence[GameTask], journal: Any, concurrency: int
) -> Iterator[tuple[GameTask, Row]]:
    """Play ``tasks`` with up to ``concurrency`` games at once in a new event loop, yielding each
    game (its journal settled) as soon as it ends, while the others keep the loop full.

    >>> from maze_envs.bench.spec import Experiment
    >>> exp = Experiment.model_validate({"seeds": "0-2", "escape": [
    ...     {"sizes": [5], "max_turns": 5, "policies": ["random"]}]})
    >>> sorted(row["seed"] for _, row in play_concurrently(exp.tasks(), None, 2))
    [0, 1, 2]
    """
    # A hand-driven event loop, so each game is reported (and merged) as soon as it ends.
    loop = asyncio.new_event_loop()
    queue = deque(tasks)
    running: dict[asyncio.Task[Row], GameTask] = {}
    try:
        while queue or running:
            while queue and len(running) < concurrency:
                task = queue.popleft()
                running[loop.create_task(aplay(task, journal))] = task
            done, _ = loop.run_until_complete(
                asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            )
            for future in done:
                task = running.pop(future)
                row = future.result()
                if journal is not None:
                    journal.settle()
                yield task, row
    finally:
        for future in running:
            future.cancel()
        loop.close()


def run_batch(
    tasks: Sequence[GameTask], shard_dir: str | None, concurrency: int = 1
) -> list[Finished]:
    """Play ``tasks`` in this process (the batched worker entry point): one after another, or
    with ``concurrency > 1`` that many at once in one event loop. The games are reported
    together, so a worker that dies mid-batch reports none of them (they are played again)."""
    if concurrency <= 1 or len(tasks) <= 1:
        return [run_task(task, shard_dir) for task in tasks]
    journal = None if shard_dir is None else _shard_journal(shard_dir)
    shard = None if journal is None else str(journal.path)
    return [
        Finished(task, row, shard) for task, row in play_concurrently(tasks, journal, concurrency)
    ]


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


# --- executors -------------------------------------------------------------------------------


class InlineExecutor:
    """Games in this process: one at a time, or ``concurrency`` at once in an event loop."""

    def __init__(self, concurrency: int = 1) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency

    def run(self, tasks: Sequence[GameTask], shard_dir: Path | None) -> Iterator[Finished]:
        from maze_envs.journal import Journal

        journal = None
        if shard_dir is not None:
            name = f"inline-{os.getpid()}-{uuid.uuid4().hex[:8]}.sqlite"
            journal = Journal(shard_dir / name, durable=False)
        shard = None if journal is None else str(journal.path)
        try:
            if self.concurrency == 1:
                for task in tasks:
                    row = play(task, journal)
                    if journal is not None:
                        journal.settle()
                    yield Finished(task, row, shard)
            else:
                for task, row in play_concurrently(tasks, journal, self.concurrency):
                    yield Finished(task, row, shard)
        finally:
            if journal is not None:
                journal.close()


class ProcessExecutor:
    """A local process pool of ``workers`` processes, each playing up to ``concurrency`` games
    of its batch at once (see the module docstring)."""

    def __init__(self, workers: int = 2, max_attempts: int = 3, concurrency: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.workers = workers
        self.max_attempts = max_attempts
        self.concurrency = concurrency

    def _pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        # workers fork from a server that has already imported what every game needs
        context.set_forkserver_preload(PRELOAD)
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=context)

    def run(self, tasks: Sequence[GameTask], shard_dir: Path | None) -> Iterator[Finished]:
        queue: deque[GameTask] = deque(tasks)
        attempts: dict[str, int] = {}
        limit = 2 * self.workers
        batcher = Batcher(self.workers, least=self.concurrency)
        shards = None if shard_dir is None else str(shard_dir)
        pool: ProcessPoolExecutor | None = None
        running: dict[Future[list[Finished]], list[GameTask]] = {}
        try:
            while queue or running:
                if pool is None:
                    pool = self._pool()
                while queue and len(running) < limit:
                    batch = _next_batch(queue, attempts, batcher.size(len(queue)))
                    for task in batch:
                        attempts[task.run_key] = attempts.get(task.run_key, 0) + 1
                    running[pool.submit(run_batch, batch, shards, self.concurrency)] = batch
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    batch = running.pop(future)
                    try:
                        results = future.result()
                    except BrokenProcessPool:
                        broken = True
                        for task in reversed(batch):
                            yield from self._retry(task, attempts, queue)
                        continue
                    for finished in results:
                        batcher.observe(finished.row)
                        yield finished
                if broken:  # every game still in the dead pool is played again
                    for batch in running.values():
                        for task in reversed(batch):
                            yield from self._retry(task, attempts, queue)
                    running.clear()
                    pool.shutdown(wait=True, cancel_futures=True)
                    pool = None
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def _retry(
        self, task: GameTask, attempts: dict[str, int], queue: deque[GameTask]
    ) -> Iterator[Finished]:
        if attempts[task.run_key] >= self.max_attempts:
            reason = f"the worker process died {attempts[task.run_key]} times playing this game"
            yield Finished(task, failed_row(task, reason), None)
        else:
            queue.appendleft(task)


class RayExecutor:
    """Ray remote tasks with back-pressure (see the module docstring)."""

    def __init__(
        self,
        workers: int = 2,
        address: str | None = None,
        max_retries: int = 3,
        concurrency: int = 1,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.workers = workers
        self.address = address
        self.max_retries = max_retries
        self.concurrency = concurrency

    def run(self, tasks: Sequence[GameTask], shard_dir: Path | None) -> Iterator[Finished]:
        try:
            import ray
        except ImportError:
            raise RuntimeError("the Ray executor needs Ray: pip install 'maze-envs[ray]'") from None
        started = False
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                num_cpus=None if self.address else self.workers,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
            started = True
        remote: Any = ray.remote(num_cpus=1, max_retries=self.max_retries)(run_batch)
        shards = None if shard_dir is None else str(shard_dir)
        queue: deque[GameTask] = deque(tasks)
        running: dict[Any, list[GameTask]] = {}
        limit = 2 * self.workers
        batcher = Batcher(self.workers, least=self.concurrency)
        try:
            while queue or running:
                while queue and len(running) < limit:
                    batch = [queue.popleft() for _ in range(batcher.size(len(queue)))]
                    running[remote.remote(batch, shards, self.concurrency)] = batch
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    batch = running.pop(ref)
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # retries used up
                        reason = f"Ray could not play this game: {type(exc).__name__}: {exc}"
                        for task in batch:
                            yield Finished(task, failed_row(task, reason[:5000]), None)
                        continue
                    for finished in results:
                        batcher.observe(finished.row)
                        yield finished
        finally:
            for ref in running:
                ray.cancel(ref, force=True)
            if started:
                ray.shutdown()


def make_executor(
    name: str, workers: int | None = None, concurrency: int = 1, ray_address: str | None = None
) -> Executor:
    """The executor called ``name`` (``inline``, ``process`` or ``ray``); ``concurrency`` is the
    games at once in one event loop: in this process (inline) or in each worker."""
    count = workers if workers is not None else min(2, os.cpu_count() or 1)
    if name == "inline":
        return InlineExecutor(concurrency)
    if name == "process":
        return ProcessExecutor(count, concurrency=concurrency)
    if name == "ray":
        return RayExecutor(count, address=ray_address, concurrency=concurrency)
    raise ValueError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
