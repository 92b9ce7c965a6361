"""Where games run: in this process, in a local process pool, or on Ray.

Every executor takes the runner's tasks and yields :class:`Finished` games **in completion
order**, with back-pressure: at most ``2 x workers`` games are submitted and not yet finished, so
a run of a million games holds a few dozen in memory.

Journal shards. A worker never writes the run's journal. Each worker process (each concurrency
slot, inline) records its games in its own shard journal under the run's ``shards/`` folder and
settles it before it reports a game; the runner then copies the finished game into the run's
journal (:meth:`maze_envs.journal.Journal.copy_game`) and only then counts it. So a worker that
dies mid-game leaves at most a half-written game in its shard, which is never copied, and a task
that is retried after a worker died (the process pool resubmits it; Ray retries it) is copied at
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
#: Modules the process pool's fork server imports once, so that workers start warm.
PRELOAD = [
    "maze_envs.bench.executors",
    "maze_envs.policies.registry",
    "maze_envs.maze_escape_v1",
    "maze_envs.agimaze.env",
    "maze_envs.journal",
]
EXECUTORS: tuple[str, ...] = ("inline", "process", "ray")


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
                for task, row in self._concurrent(tasks, journal):
                    yield Finished(task, row, shard)
        finally:
            if journal is not None:
                journal.close()

    def _concurrent(
        self, tasks: Sequence[GameTask], journal: Any
    ) -> Iterator[tuple[GameTask, Row]]:
        # A hand-driven event loop, so each game is reported (and merged) as soon as it ends
        # while the others keep ``concurrency`` games in flight.
        loop = asyncio.new_event_loop()
        queue = deque(tasks)
        running: dict[asyncio.Task[Row], GameTask] = {}
        try:
            while queue or running:
                while queue and len(running) < self.concurrency:
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


class ProcessExecutor:
    """A local process pool of ``workers`` processes (see the module docstring)."""

    def __init__(self, workers: int = 2, max_attempts: int = 3) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.max_attempts = max_attempts

    def _pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        # workers fork from a server that has already imported what every game needs
        context.set_forkserver_preload(PRELOAD)
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=context)

    def run(self, tasks: Sequence[GameTask], shard_dir: Path | None) -> Iterator[Finished]:
        queue: deque[GameTask] = deque(tasks)
        attempts: dict[str, int] = {}
        limit = 2 * self.workers
        shards = None if shard_dir is None else str(shard_dir)
        pool: ProcessPoolExecutor | None = None
        running: dict[Future[Finished], GameTask] = {}
        try:
            while queue or running:
                if pool is None:
                    pool = self._pool()
                while queue and len(running) < limit:
                    task = queue.popleft()
                    attempts[task.run_key] = attempts.get(task.run_key, 0) + 1
                    running[pool.submit(run_task, task, shards)] = task
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    task = running.pop(future)
                    try:
                        yield future.result()
                    except BrokenProcessPool:
                        broken = True
                        yield from self._retry(task, attempts, queue)
                if broken:  # every game still in the dead pool is played again
                    for task in running.values():
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

    def __init__(self, workers: int = 2, address: str | None = None, max_retries: int = 3) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers
        self.address = address
        self.max_retries = max_retries

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
        remote = ray.remote(num_cpus=1, max_retries=self.max_retries)(run_task)
        shards = None if shard_dir is None else str(shard_dir)
        queue: deque[GameTask] = deque(tasks)
        running: dict[Any, GameTask] = {}
        limit = 2 * self.workers
        try:
            while queue or running:
                while queue and len(running) < limit:
                    task = queue.popleft()
                    running[remote.remote(task, shards)] = task
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    task = running.pop(ref)
                    try:
                        yield ray.get(ref)
                    except ray.exceptions.RayError as exc:  # retries used up
                        reason = f"Ray could not play this game: {type(exc).__name__}: {exc}"
                        yield Finished(task, failed_row(task, reason[:5000]), None)
        finally:
            for ref in running:
                ray.cancel(ref, force=True)
            if started:
                ray.shutdown()


def make_executor(
    name: str, workers: int | None = None, concurrency: int = 1, ray_address: str | None = None
) -> Executor:
    """The executor called ``name`` (``inline``, ``process`` or ``ray``)."""
    count = workers if workers is not None else min(2, os.cpu_count() or 1)
    if name == "inline":
        return InlineExecutor(concurrency)
    if name == "process":
        return ProcessExecutor(count)
    if name == "ray":
        return RayExecutor(count, address=ray_address)
    raise ValueError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
