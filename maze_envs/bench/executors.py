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
games at once in each worker's event loop (:func:`~.workers.play_concurrently`, the same loop
inline uses), and batches then hold at least ``concurrency`` games (while that many are left), so
that ``workers=2, concurrency=8`` plays 16 games at once, 8 in each worker.

Journal shards. A worker never writes the run's journal. Each worker process (each concurrency
slot, inline) records its games in its own shard journal under the run's ``shards/`` folder and
settles it before it reports a game (on Ray, whose nodes need not share this disk, a journal of
the batch's own in the node's temporary folder, whose games' rows come back with the results:
:mod:`maze_envs.bench.travel`); the runner then stores the finished game's rows in the run's
journal (:meth:`maze_envs.journal.Journal.add_stored_game`) and only then counts it. So a
worker that dies mid-game leaves at most a half-written game in its own journal, which is never
stored (nor are the games its batch had finished, since they were never reported), and a game
played again is stored at most once: the runner stores each run key once.

A worker that dies, at any moment. In the process pool, the death of one worker breaks the whole
pool (``concurrent.futures``), and whichever call notices it first (``submit``, ``wait``, a
future's ``result``) the executor does the same: it takes every batch the dead pool had not
reported, shuts the pool down, starts a new one and plays those games again. A game counts an
*attempt* only if its batch had started (the batch's start mark) in the process that died (an
exit other than the SIGTERM the pool's clean-up sends its other workers); a game that has used
``max_attempts`` is reported as an error row instead of being played again, and a game played
again goes alone in its batch, so a game that kills its worker takes no other game's attempts
with it. Pools that die before anything was reported or charged, ``max_attempts`` times in a
row, end the run with :class:`ExecutorError` (workers that cannot start). On Ray (see
:mod:`maze_envs.bench.ray_executor`) each batch is a task in its own worker process, so a dead
worker loses exactly its batch, handled the same way.

Stopping. When the run ends early (a :class:`~maze_envs.bench.stopping.RunStopped` signal, an
error, or the consumer closing the iterator), the process pool's workers are terminated, not
waited for, and joined before ``run`` returns: no worker outlives the run.

Run caps. With a :class:`~maze_envs.bench.ledger.CapTable`, the executor creates the run's
ledger (shared memory for the pool, an actor on Ray), every game charges it, and the executor
dispatches no game once its cap is reached (the game's row says why; see
:mod:`maze_envs.bench.ledger`).

Fault injection. ``fault`` (tests) is called in the parent at named points with the pool:
``"submit"`` (before each ``submit``), ``"wait"`` (before each wait for results), ``"result"``
(before each future's result is read), ``"yield"`` (before each finished game is handed on) and
``"shutdown"`` (before the pool of a finished run is shut down).
A hook that kills a worker there makes the next pool call observe the broken pool
deterministically.

* :class:`InlineExecutor`: games one after another in this process; with ``concurrency > 1``
  (async policies such as model calls) that many games at once in one event loop.
* :class:`ProcessExecutor`: a ``concurrent.futures`` process pool (``forkserver`` start: clean
  workers, nothing inherited from the runner's threads).
* :class:`~maze_envs.bench.ray_executor.RayExecutor`: Ray remote tasks
  (``pip install 'maze-envs[ray]'``).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Protocol

from maze_envs.bench.dispatch import (
    BATCH_SECONDS,
    MAX_BATCH,
    Batch,
    Batcher,
    Dispatch,
    ExecutorBase,
    Fault,
    RunInputs,
    check_counts,
    failed_row,
)
from maze_envs.bench.folder import JOURNAL_HASH_SIZE
from maze_envs.bench.ledger import CapTable, LocalLedger, SharedLedger
from maze_envs.bench.ray_executor import RayExecutor
from maze_envs.bench.rollout import play
from maze_envs.bench.spec import GameTask
from maze_envs.bench.workers import (
    BatchJob,
    Finished,
    RunShares,
    marks_folder,
    play_batch,
    play_concurrently,
    run_batch,
    worker_init,
)
from maze_envs.bench.workers import as_finished as games_of

__all__ = [
    "BATCH_SECONDS",
    "EXECUTORS",
    "MAX_BATCH",
    "PRELOAD",
    "Batch",
    "Batcher",
    "Dispatch",
    "Executor",
    "ExecutorError",
    "Fault",
    "Finished",
    "InlineExecutor",
    "ProcessExecutor",
    "RayExecutor",
    "bury",
    "end_pool",
    "failed_row",
    "make_executor",
    "play_concurrently",
    "run_batch",
]

#: Modules the process pool's fork server imports once, so that workers start warm (append
#: more, such as model clients, before the first pool of the process starts). A script run as
#: ``python my_study.py`` is imported again by every worker when it starts (multiprocessing's
#: rule for forkserver and spawn workers; a module run with ``-m`` is not): keep its heavy work
#: under ``if __name__ == "__main__":``.
PRELOAD = [
    "maze_envs.bench.executors",
    "maze_envs.policies.registry",
    "maze_envs.maze_escape_v1",
    "maze_envs.agimaze.env",
    "maze_envs.journal",
]
EXECUTORS: tuple[str, ...] = ("inline", "process", "ray")
#: Seconds a terminated worker gets to exit before it is killed.
TERMINATE_GRACE_S = 10.0


class ExecutorError(RuntimeError):
    """The executor cannot go on (its workers keep dying before playing anything)."""


class Executor(Protocol):
    """Runs tasks and yields their :class:`Finished` games in completion order.

    ``caps`` and ``spent``: the run's caps and what resumed games spent already; ``shared``:
    what the policies learnt before the run began (``RunShared`` objects, installed in every
    process that plays its games: :mod:`maze_envs.policies.run`).
    """

    def run(
        self,
        tasks: Sequence[GameTask],
        shard_dir: Path | None,
        caps: CapTable | None = None,
        spent: Sequence[float] | None = None,
        *,
        shared: Sequence[Any] = (),
    ) -> Iterator[Finished]: ...


# --- executors -------------------------------------------------------------------------------


class InlineExecutor(ExecutorBase):
    """Games in this process: one at a time, or ``concurrency`` at once in an event loop."""

    def __init__(self, concurrency: int = 1) -> None:
        check_counts(concurrency=concurrency)
        self.concurrency = concurrency

    def play(self, run: RunInputs) -> Iterator[Finished]:
        tasks, shard_dir, caps, spent, shared = run
        from maze_envs.bench.workers import budget_for
        from maze_envs.journal import Journal

        shares = RunShares.of(shared, 1)
        if shares is not None:
            shares.install()
        job = None if caps is None else BatchJob(caps=caps, ledger=LocalLedger(caps, spent))
        journal = None
        if shard_dir is not None:
            name = f"inline-{os.getpid()}-{os.urandom(4).hex()}.sqlite"
            journal = Journal(shard_dir / name, durable=False, hash_size=JOURNAL_HASH_SIZE)
        shard = None if journal is None else str(journal.path)
        try:
            if self.concurrency == 1:
                for task in tasks:
                    row = play(task, journal, budget_for(task, job))
                    if journal is not None:
                        journal.settle()
                    yield Finished(task, row, shard)
            else:
                for task, row in play_concurrently(tasks, journal, self.concurrency, job):
                    yield Finished(task, row, shard)
        finally:
            if journal is not None:
                journal.close()


class ProcessExecutor(ExecutorBase):
    """A local process pool of ``workers`` processes, each playing up to ``concurrency`` games
    of its batch at once; survives the death of a worker at any moment (module docstring).

    ``max_attempts``: how many times a game may be in a worker that dies; ``fault``: the
    fault-injection hook; ``max_batch``: the most games in one batch.
    """

    def __init__(
        self,
        workers: int = 2,
        max_attempts: int = 3,
        concurrency: int = 1,
        fault: Fault | None = None,
        max_batch: int = MAX_BATCH,
    ) -> None:
        check_counts(
            workers=workers, concurrency=concurrency, max_attempts=max_attempts, max_batch=max_batch
        )
        self.max_batch = max_batch
        self.workers = workers
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self.fault = fault
        self._context = multiprocessing.get_context("forkserver")
        self._ledger: SharedLedger | None = None
        self._shares: RunShares | None = None

    def _pool(self) -> ProcessPoolExecutor:
        # workers fork from a server that has already imported what every game needs
        self._context.set_forkserver_preload(PRELOAD)
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context,
            initializer=worker_init,
            initargs=(self._ledger, self._shares),
        )

    def _at(self, point: str, pool: Any) -> None:
        if self.fault is not None:
            self.fault(point, pool)

    def play(self, run: RunInputs) -> Iterator[Finished]:
        tasks, shard_dir, caps, spent, shared = run
        self._ledger = None if caps is None else SharedLedger(caps, self._context, spent)
        self._shares = RunShares.of(shared, self.workers)
        dispatch = Dispatch.of(self, tasks, caps, self._ledger)
        shards = None if shard_dir is None else str(shard_dir)
        marks = marks_folder()
        pool: Any = None
        reported = False  # the current pool has reported a batch
        fruitless = 0  # pools in a row that died before reporting or charging anything
        completed = False
        try:
            while dispatch.busy:
                yield from dispatch.refused()
                if pool is None:
                    pool, reported = self._pool(), False
                lost: list[Batch] = []
                try:
                    while (batch := dispatch.take()) is not None:
                        self._at("submit", pool)
                        job = BatchJob(batch.number, marks, caps)
                        try:
                            future = pool.submit(
                                play_batch, batch.tasks, shards, self.concurrency, job
                            )
                        except BaseException:
                            dispatch.give_back(batch)
                            raise
                        dispatch.running[future] = batch
                    if not dispatch.running:
                        continue
                    self._at("wait", pool)
                    done, _ = wait(dispatch.running, return_when=FIRST_COMPLETED)
                    for future in done:
                        batch = dispatch.running.pop(future)
                        self._at("result", pool)
                        try:
                            results = future.result()
                        except BrokenExecutor:
                            lost.append(batch)
                            continue
                        reported = True
                        Path(marks, str(batch.number)).unlink(missing_ok=True)
                        for finished in games_of(batch.tasks, results):
                            dispatch.report(finished)
                            self._at("yield", pool)
                            yield finished
                except BrokenExecutor:
                    pass  # submit saw the broken pool
                else:
                    if not lost:
                        continue
                # the pool is broken: every batch it has not reported is played again
                lost.extend(dispatch.running.values())
                dispatch.running.clear()
                charged = bury(pool, marks, lost)
                pool = None
                # back to the head of the queue in the order they were first sent
                for batch in sorted(lost, key=lambda lost_batch: -lost_batch.number):
                    yield from dispatch.lost(batch, batch.number in charged)
                fruitless = 0 if reported or charged else fruitless + 1
                if fruitless >= self.max_attempts:
                    raise ExecutorError(
                        f"the process pool's workers died {fruitless} times in a row before "
                        "playing a game; see the workers' error output above"
                    )
            completed = True
            if pool is not None:
                self._at("shutdown", pool)  # every game is reported: a death now loses nothing
        finally:
            if pool is not None:
                end_pool(pool, abandon=not completed)
            shutil.rmtree(marks, ignore_errors=True)


def _started(marks: str) -> dict[int, int | None]:
    """Batch number -> the pid that started it (``None``: the mark was cut short)."""
    started: dict[int, int | None] = {}
    for path in Path(marks).iterdir():
        try:
            text = path.read_text()
            started[int(path.name)] = int(text) if text else None
        except (OSError, ValueError):
            continue
    return started


def bury(pool: Any, marks: str, lost: list[Batch]) -> set[int]:
    """Shut a broken pool down; the numbers of the lost batches that were being played by a
    process that died (the others were waiting, or stopped by the pool's own clean-up)."""
    processes = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=True, cancel_futures=True)
    dead = {
        pid
        for pid, process in processes.items()
        if process.exitcode is not None and process.exitcode != -signal.SIGTERM
    }
    started = _started(marks)
    charged = set()
    for batch in lost:
        if batch.number not in started:
            continue  # never reached a worker
        pid = started[batch.number]
        if dead and pid is not None and pid not in dead:
            continue  # its worker was stopped by the pool's clean-up, not the cause
        charged.add(batch.number)
    return charged


def end_pool(pool: Any, *, abandon: bool) -> None:
    """Shut a pool down: wait for its workers (``abandon=False``), or terminate them at once and
    join them (a run stopped early: no worker outlives it)."""
    if not abandon:
        pool.shutdown(wait=True, cancel_futures=True)
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError):
            continue
    deadline = time.monotonic() + TERMINATE_GRACE_S
    for process in processes:
        try:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(TERMINATE_GRACE_S)
        except (OSError, ValueError, AssertionError):
            continue
    pool.shutdown(wait=True, cancel_futures=True)


def make_executor(
    name: str,
    workers: int | None = None,
    concurrency: int = 1,
    ray_address: str | None = None,
    ray_runtime_env: Mapping[str, Any] | None = None,
) -> Executor:
    """The executor called ``name`` (``inline``, ``process`` or ``ray``); ``concurrency`` is the
    games at once in one event loop: in this process (inline) or in each worker; Ray joins the
    cluster at ``ray_address`` (default: starts a local one) with ``ray_runtime_env``.

    ``ray`` without Ray installed raises :class:`ImportError` with the install hint.
    """
    count = workers if workers is not None else min(2, os.cpu_count() or 1)
    if name == "inline":
        return InlineExecutor(concurrency)
    if name == "process":
        return ProcessExecutor(count, concurrency=concurrency)
    if name == "ray":
        return RayExecutor(
            count, address=ray_address, concurrency=concurrency, runtime_env=ray_runtime_env
        )
    raise ValueError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
