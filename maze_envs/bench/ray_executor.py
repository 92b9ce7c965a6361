"""The Ray executor: batches of games as Ray remote tasks (``pip install 'maze-envs[ray]'``).

On the cluster at ``address``, or a local one with ``num_cpus=workers`` that the executor
starts and stops (always its own: a cluster some ``ray start`` left running is not joined).
Batches, back-pressure, journal shards and concurrency work as in the process pool
(:mod:`maze_envs.bench.executors`).

Worker deaths. Ray runs each task in one worker process, so a worker (or node) that dies loses
exactly the batch it was playing: the executor, not Ray, plays it again (tasks have
``max_retries=0``), with the process pool's rules: one attempt for each game of a batch that had
started (on a local cluster the start marks say whether it had; on a remote one it counts),
games played again go alone, a game out of ``max_retries`` attempts becomes an error row, each
game is copied into the run's journal at most once. An exception raised by the batch itself
(the journal could not be written, say) ends the run, as it would in this process.

Run caps: the run's ledger is a Ray actor (:class:`RayLedger`), which Ray restarts if its
process dies; a restarted ledger starts again from the spend the run had when it began, so the
games of the run so far are then not counted (the cap may be overshot by them).

Stopping: a run that ends early cancels its tasks with ``force=True`` (their worker processes
are killed) and stops the local cluster it started.
"""

from __future__ import annotations

import shutil
import signal
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from maze_envs.bench.dispatch import MAX_BATCH, Dispatch, Fault
from maze_envs.bench.ledger import CapTable, Charge, LocalLedger
from maze_envs.bench.spec import GameTask
from maze_envs.bench.stopping import STOP_SIGNALS
from maze_envs.bench.workers import BatchJob, Finished, RunShares, marks_folder, play_batch
from maze_envs.bench.workers import as_finished as games_of

#: What ``--executor ray`` says when Ray is not installed.
INSTALL_HINT = "the Ray executor needs Ray: pip install 'maze-envs[ray]'"


def import_ray() -> Any:
    """The ``ray`` module, or :class:`ImportError` with the install hint."""
    try:
        import ray
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return ray


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}


def _restore(handlers: dict[int, Any]) -> None:
    for signum, handler in handlers.items():
        signal.signal(signum, handler)


class RayLedger:
    """The run's ledger on Ray: a proxy to an actor that holds a :class:`LocalLedger`."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    @classmethod
    def start(cls, table: CapTable, spent: Sequence[float] | None) -> RayLedger:
        ray = import_ray()
        actor_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(LocalLedger)
        return cls(actor_class.remote(table, spent))

    def update(self, charges: Mapping[int, Charge], watch: Sequence[int]) -> str | None:
        ray = import_ray()
        reason: str | None = ray.get(self.actor.update.remote(dict(charges), tuple(watch)))
        return reason

    def hold(self, indexes: Sequence[int], tokens: int, cost: float | None) -> str | None:
        ray = import_ray()
        reason: str | None = ray.get(self.actor.hold.remote(tuple(indexes), tokens, cost))
        return reason

    def unhold(self, indexes: Sequence[int], tokens: int, cost: float) -> None:
        ray = import_ray()
        ray.get(self.actor.unhold.remote(tuple(indexes), tokens, cost))

    def stop(self) -> None:
        ray = import_ray()
        ray.kill(self.actor)


class RayExecutor:
    """Ray remote tasks with back-pressure (see the module docstring)."""

    def __init__(
        self,
        workers: int = 2,
        address: str | None = None,
        max_retries: int = 3,
        concurrency: int = 1,
        fault: Fault | None = None,
        max_batch: int = MAX_BATCH,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if max_retries < 1:
            raise ValueError(f"max_retries must be >= 1, got {max_retries}")
        import_ray()  # fail now, with the hint, rather than once the run has started
        self.workers = workers
        self.address = address
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.fault = fault
        self.max_batch = max_batch

    def _at(self, point: str) -> None:
        if self.fault is not None:
            self.fault(point, None)

    def run(
        self,
        tasks: Sequence[GameTask],
        shard_dir: Path | None,
        caps: CapTable | None = None,
        spent: Sequence[float] | None = None,
        *,
        shared: Sequence[Any] = (),
    ) -> Iterator[Finished]:
        ray = import_ray()
        shares = RunShares.of(shared, self.workers)
        started = False
        if not ray.is_initialized():
            handlers = _signal_handlers()
            ray.init(
                # "local": a cluster of its own, never one a `ray start` left on this machine
                address=self.address or "local",
                num_cpus=None if self.address else self.workers,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
            _restore(handlers)  # ray.init sets a SIGTERM handler of its own (sys.exit)
            started = True
        ledger = None if caps is None else RayLedger.start(caps, spent)
        remote: Any = ray.remote(num_cpus=1, max_retries=0)(play_batch)
        shards = None if shard_dir is None else str(shard_dir)
        # start marks work where the workers share this machine's files: a local cluster
        marks = None if self.address else marks_folder()
        dispatch = Dispatch(
            tasks, self.workers, self.concurrency, self.max_retries, caps, ledger, self.max_batch
        )
        completed = False
        try:
            while dispatch.busy:
                yield from dispatch.refused()
                while (batch := dispatch.take()) is not None:
                    self._at("submit")
                    job = BatchJob(batch.number, marks, caps, ledger, shares)
                    dispatch.running[remote.remote(batch.tasks, shards, self.concurrency, job)] = (
                        batch
                    )
                if not dispatch.running:
                    continue
                self._at("wait")
                ready, _ = ray.wait(list(dispatch.running), num_returns=1)
                for ref in ready:
                    batch = dispatch.running.pop(ref)
                    self._at("result")
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:  # the batch itself raised
                        raise exc.as_instanceof_cause() from None
                    except ray.exceptions.RayError:  # its worker (or node) died
                        started_here = marks is None or Path(marks, str(batch.number)).exists()
                        yield from dispatch.lost(batch, charged=started_here)
                        continue
                    for finished in games_of(batch.tasks, results):
                        dispatch.report(finished)
                        self._at("yield")
                        yield finished
            completed = True
        finally:
            if not completed:
                for ref in dispatch.running:
                    ray.cancel(ref, force=True)
            if ledger is not None:
                ledger.stop()
            if started:
                ray.shutdown()
            if marks is not None:
                shutil.rmtree(marks, ignore_errors=True)
