"""The Ray executor: batches of games as Ray remote tasks (``pip install 'maze-envs[ray]'``).

On the cluster at ``address`` (with the ``runtime_env`` given), or a local one with
``num_cpus=workers`` that the executor starts and stops (always its own: a cluster some ``ray
start`` left running is not joined). Batches, back-pressure and concurrency work as in the
process pool (:mod:`maze_envs.bench.executors`).

No shared disk. The workers may run on nodes that do not see the driver's files, so nothing
travels as a path (:mod:`maze_envs.bench.travel`): each batch records its games in a journal of
its own in its node's temporary folder and returns their journal rows through the object store
(the runner stores them in the run's journal, as it does a shard's games); a user's pack tree
is sent once through the object store; the start marks, the run's ledger and the objects that
own the driver's files (the LLM policies' response cache) live in actors on the driver's node.

Worker deaths. Ray runs each task in one worker process, so a worker (or node) that dies loses
exactly the batch it was playing: the executor, not Ray, plays it again (tasks have
``max_retries=0``), with the process pool's rules: one attempt for each game of a batch that had
started (its start mark, kept by the driver's node, says whether it had), games played again
go alone, a game out of ``max_attempts`` attempts becomes an error row, each game is stored in
the run's journal at most once. An exception raised by the batch itself (its journal could not
be written, say) ends the run, as it would in this process.

Run caps: the run's ledger is a Ray actor on the driver's node (:class:`RayLedger`), which Ray
restarts if its process dies; a restarted ledger starts again from the spend the run had when it
began, so the games of the run so far are then not counted (the cap may be overshot by them).

Stopping: a run that ends early cancels its tasks with ``force=True`` (their worker processes
are killed), stops its actors and the local cluster it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from maze_envs.bench.dispatch import (
    MAX_BATCH,
    Batch,
    Dispatch,
    ExecutorBase,
    Fault,
    RunInputs,
    check_counts,
)
from maze_envs.bench.ledger import CapTable, Charge, LocalLedger
from maze_envs.bench.stopping import STOP_SIGNALS
from maze_envs.bench.travel import DriverLink, RunServices, ship_packs
from maze_envs.bench.workers import BatchJob, Finished, RunShares, play_batch
from maze_envs.bench.workers import as_finished as games_of

#: Seconds the run's services actor gets to close the driver's files it holds, at the end.
ACTOR_CLOSE_S = 60.0
#: What ``--executor ray`` says when Ray is not installed.
INSTALL_HINT = "the Ray executor needs Ray: pip install 'maze-envs[ray]'"


def import_ray() -> Any:
    """The ``ray`` module, or :class:`ImportError` with the install hint."""
    try:
        import ray
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return ray


def parse_runtime_env(text: str | None) -> dict[str, Any] | None:
    """``--ray-runtime-env``: a JSON object, or the path of a ``.json`` file holding one (Ray's
    ``runtime_env``); ``None`` for ``None``. Raises :class:`ValueError` saying what is wrong.

    >>> parse_runtime_env('{"env_vars": {"TOKENIZERS_PARALLELISM": "false"}}')
    {'env_vars': {'TOKENIZERS_PARALLELISM': 'false'}}
    >>> parse_runtime_env("[1]")
    Traceback (most recent call last):
    ...
    ValueError: --ray-runtime-env must be a JSON object (Ray's runtime_env), got a list
    """
    if text is None:
        return None
    source = text.strip()
    if source.endswith(".json") and not source.startswith(("{", "[")):
        try:
            source = Path(source).read_text("utf-8")
        except OSError as exc:
            raise ValueError(
                f"--ray-runtime-env: cannot read {text!r}: {exc.strerror or exc}"
            ) from None
    try:
        value = json.loads(source)
    except ValueError as exc:
        raise ValueError(f"--ray-runtime-env is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(
            "--ray-runtime-env must be a JSON object (Ray's runtime_env), "
            f"got a {type(value).__name__}"
        )
    return value


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}


def _restore(handlers: dict[int, Any]) -> None:
    for signum, handler in handlers.items():
        signal.signal(signum, handler)


def on_driver_node() -> dict[str, Any]:
    """Options of an actor that must live on this (the driver's) node: it holds what the
    driver owns, so a worker node that dies takes none of it with it."""
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    node = ray.get_runtime_context().get_node_id()
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node, soft=False)}


class RayLedger:
    """The run's ledger on Ray: a proxy to an actor that holds a :class:`LocalLedger`."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    @classmethod
    def start(cls, table: CapTable, spent: Sequence[float] | None) -> RayLedger:
        ray = import_ray()
        actor_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(LocalLedger)
        return cls(actor_class.options(**on_driver_node()).remote(table, spent))

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


class RayExecutor(ExecutorBase):
    """Ray remote tasks with back-pressure (see the module docstring).

    ``address``: the cluster to join (``host:port`` of its head; default: start a local one);
    ``runtime_env``: Ray's runtime environment of the run's workers (``pip``, ``env_vars``,
    ``working_dir``...), given to ``ray.init`` when the executor starts Ray;
    ``max_attempts``: how many times a game may be in a worker that dies (the process pool's
    name; ``max_retries``, its former name here, still works with a deprecation warning).
    """

    def __init__(
        self,
        workers: int = 2,
        address: str | None = None,
        max_attempts: int = 3,
        concurrency: int = 1,
        fault: Fault | None = None,
        max_batch: int = MAX_BATCH,
        runtime_env: Mapping[str, Any] | None = None,
        *,
        max_retries: int | None = None,
    ) -> None:
        if max_retries is not None:
            warnings.warn(
                "RayExecutor(max_retries=...) is deprecated: use max_attempts (the same count, "
                "the process pool's name)",
                DeprecationWarning,
                stacklevel=2,
            )
            max_attempts = max_retries
        check_counts(
            workers=workers, concurrency=concurrency, max_attempts=max_attempts, max_batch=max_batch
        )
        if address is not None and address.startswith("ray://"):
            raise ValueError(
                f"--ray-address {address}: Ray Client addresses are not supported; run the "
                "driver on a node of the cluster (its head, or `ray job submit`) and give the "
                "head's HOST:PORT (docs/cluster.md)"
            )
        import_ray()  # fail now, with the hint, rather than once the run has started
        self.workers = workers
        self.address = address
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self.fault = fault
        self.max_batch = max_batch
        self.runtime_env = dict(runtime_env) if runtime_env is not None else None

    def _at(self, point: str) -> None:
        if self.fault is not None:
            self.fault(point, None)

    def play(self, run: RunInputs) -> Iterator[Finished]:
        tasks, shard_dir, caps, spent, shared = run
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
                runtime_env=self.runtime_env,
            )
            _restore(handlers)  # ray.init sets a SIGTERM handler of its own (sys.exit)
            started = True
        services: Any = None
        ledger = None
        dispatch = None
        completed = False
        try:
            # restarted if its process dies (its marks then start afresh: games of batches
            # lost before are played again without an attempt charged)
            services_class = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(
                RunServices
            )
            services = services_class.options(**on_driver_node()).remote()
            ledger = None if caps is None else RayLedger.start(caps, spent)
            packs = ship_packs(tasks, ray.put)
            link = DriverLink(services, os.getcwd(), shard_dir is not None, packs)
            remote: Any = ray.remote(num_cpus=1, max_retries=0)(play_batch)
            dispatch = Dispatch.of(self, tasks, caps, ledger)
            while dispatch.busy:
                yield from dispatch.refused()
                while (batch := dispatch.take()) is not None:
                    self._at("submit")
                    job = BatchJob(batch.number, None, caps, ledger, link, shares)
                    dispatch.running[remote.remote(batch.tasks, None, self.concurrency, job)] = (
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
                        yield from dispatch.lost(batch, charged=_started(services, batch))
                        continue
                    for finished in games_of(batch.tasks, results):
                        dispatch.report(finished)
                        self._at("yield")
                        yield finished
            completed = True
        finally:
            if not completed and dispatch is not None:
                for ref in dispatch.running:
                    ray.cancel(ref, force=True)
            if services is not None:
                _stop_actor(ray, services)
            if ledger is not None:
                ledger.stop()
            if started:
                ray.shutdown()


def _started(services: Any, batch: Batch) -> bool:
    """Whether ``batch`` had started in the worker that died (its start mark); when the marks
    cannot be read, it is counted as started (an attempt charged rather than a game that kills
    its worker played forever)."""
    ray = import_ray()
    try:
        return bool(ray.get(services.started.remote(batch.number)))
    except ray.exceptions.RayError:
        return True


def _stop_actor(ray: Any, services: Any) -> None:
    """Close the objects of the run's services actor (their files), then end it."""
    with contextlib.suppress(Exception):
        ray.get(services.close.remote(), timeout=ACTOR_CLOSE_S)
    with contextlib.suppress(Exception):
        ray.kill(services)
