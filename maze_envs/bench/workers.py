"""The worker side of the executors: play a batch of games into a journal of the worker's own.

These functions run where the games run: in this process (inline), in a process pool's worker, in
a Ray worker. :func:`play_batch` is the one entry point the parent submits; a batch's games are
reported together when it ends, so a worker that dies mid-batch reports none of them (the parent
plays them again; see :mod:`maze_envs.bench.executors`).

Where a game's journal rows go: in the process pool (and inline) into this process's shard
journal in the run's folder, which the parent reads; on Ray into a journal of the batch's own
in the node's temporary folder, whose rows of each game go back with the results
(:mod:`maze_envs.bench.travel`): Ray's nodes need not share the parent's disk.

Before it plays anything, a batch leaves a *start mark*: in the process pool a file named after
the batch's number, holding the worker's pid, in the executor's marks folder; on Ray a mark in
the run's services actor on the driver's node. After a worker died, the parent knows which
batches had started (in the pool, in which process), so it charges an attempt only to the games
that were being played where the worker died, not to games that were waiting or that the
pool's own clean-up stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maze_envs.bench.folder import JOURNAL_HASH_SIZE
from maze_envs.bench.ledger import CapTable, GameBudget, RunLedger
from maze_envs.bench.rollout import Row, aplay, play
from maze_envs.bench.spec import GameTask
from maze_envs.bench.stopping import worker_signals
from maze_envs.bench.travel import DriverLink, batch_journal, linked
from maze_envs.journal import StoredGame


@dataclass(frozen=True, slots=True)
class Finished:
    """A played game: its row and, when recorded, where its journal rows are: in the shard
    journal ``shard`` (on this machine's disk), or ``rows`` themselves (from a Ray worker)."""

    task: GameTask
    row: Row
    shard: str | None
    rows: StoredGame | None = None


@dataclass(frozen=True, slots=True)
class RunShares:
    """What the policies learnt for the whole run before its first game
    (:mod:`maze_envs.policies.run`: each a ``RunShared``), installed once in each process that
    plays the run's games; ``processes``: how many play them at once; ``run``: the run's id."""

    shared: tuple[Any, ...] = ()
    processes: int = 1
    run: str = ""

    @classmethod
    def of(cls, shared: Sequence[Any], processes: int) -> RunShares | None:
        """The run's shares for ``processes`` processes (``None`` without any)."""
        return cls(tuple(shared), processes, uuid.uuid4().hex) if shared else None

    def install(self) -> None:
        """Install them in this process (once per run)."""
        global _INSTALLED
        if not self.shared or self.run == _INSTALLED:
            return
        for item in self.shared:
            item.install(self.processes)
        _INSTALLED = self.run


@dataclass(frozen=True, slots=True)
class BatchJob:
    """What a batch needs besides its games: its number (for the start mark), the marks
    folder, the run's caps and, where it can travel in a task's arguments (Ray: an actor
    handle; inline: the object), the run's ledger, and what its policies learnt before it
    began (``shares``). A process pool's workers get the ledger and the shares when they start
    (:func:`worker_init`). On Ray, ``driver`` links the batch to the run's driver
    (:mod:`maze_envs.bench.travel`): marks, packs, journal rows and files go through it."""

    number: int = 0
    marks: str | None = None
    caps: CapTable | None = None
    ledger: RunLedger | None = None
    driver: DriverLink | None = None
    shares: RunShares | None = None


_SHARD: Any = None  # this process's shard journal (workers), opened on first use
_LEDGER: RunLedger | None = None  # the run's ledger, in a process pool's worker
_INSTALLED = ""  # the run whose shares this process installed


def worker_init(ledger: RunLedger | None, shares: RunShares | None = None) -> None:
    """A process pool worker's initializer: signals (:func:`~.stopping.worker_signals`), the
    run's ledger (shared memory must be inherited when the process starts) and what the run's
    policies learnt before it began."""
    global _LEDGER
    worker_signals()
    _LEDGER = ledger
    if shares is not None:
        shares.install()


def _shard_journal(shard_dir: str) -> Any:
    global _SHARD
    if _SHARD is None or Path(_SHARD.path).parent != Path(shard_dir):
        from maze_envs.journal import Journal

        name = f"shard-{os.getpid()}-{uuid.uuid4().hex[:8]}.sqlite"
        _SHARD = Journal(Path(shard_dir) / name, durable=False, hash_size=JOURNAL_HASH_SIZE)
    return _SHARD


def budget_for(task: GameTask, job: BatchJob | None) -> GameBudget | None:
    """``task``'s view of the run's caps, or ``None`` when the run has none."""
    if job is None or job.caps is None:
        return None
    ledger = job.ledger if job.ledger is not None else _LEDGER
    if ledger is None:
        raise RuntimeError("the run has caps but this worker was given no ledger")
    return GameBudget(ledger, job.caps, task)


def run_task(task: GameTask, shard_dir: str | None, job: BatchJob | None = None) -> Finished:
    """Play ``task`` in this process, recording it in this process's shard (worker entry point)."""
    journal = None if shard_dir is None else _shard_journal(shard_dir)
    row = _play_settled(task, journal, job)
    return Finished(task, row, None if journal is None else str(journal.path))


def play_concurrently(
    tasks: Sequence[GameTask], journal: Any, concurrency: int, job: BatchJob | None = None
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
                game = aplay(task, journal, budget_for(task, job))
                running[loop.create_task(game)] = task
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
        if running:  # let the cancelled games unwind (close their policies and envs)
            # a stop while unwinding: the loop closes all the same
            with contextlib.suppress(BaseException):
                loop.run_until_complete(asyncio.gather(*running, return_exceptions=True))
        loop.close()


def marks_folder() -> str:
    """A new folder for the batches' start marks: in memory (``/dev/shm``) where there is one,
    since a mark is written before each batch plays and a busy disk can stall a file's creation
    for milliseconds."""
    shared = Path("/dev/shm")
    if shared.is_dir() and os.access(shared, os.W_OK):
        return tempfile.mkdtemp(prefix="maze-envs-batches-", dir=shared)
    return tempfile.mkdtemp(prefix="maze-envs-batches-")


def _mark_start(job: BatchJob | None) -> None:
    if job is not None and job.marks is not None:
        Path(job.marks, str(job.number)).write_text(str(os.getpid()))


#: What a worker sends back for a game of its batch: the game's index in the batch, its row, the
#: shard that holds it or its journal rows (the parent has the task already: it does not travel
#: back).
Reported = tuple[int, Row, str | None, StoredGame | None]


def play_batch(
    tasks: Sequence[GameTask],
    shard_dir: str | None,
    concurrency: int = 1,
    job: BatchJob | None = None,
) -> list[Reported]:
    """Play ``tasks`` in this process (the batched worker entry point): one after another, or
    with ``concurrency > 1`` that many at once in one event loop. The games are reported
    together, so a worker that dies mid-batch reports none of them (they are played again).

    A batch of a Ray run (``job.driver``) records into a journal of its own and returns each
    game's journal rows; any other records into this process's shard in ``shard_dir``."""
    if job is not None and job.shares is not None:  # once per run in each process
        job.shares.install()
    if job is not None and job.driver is not None:
        return _play_for_driver(tasks, concurrency, job, job.driver)
    _mark_start(job)
    if concurrency <= 1 or len(tasks) <= 1:
        reported: list[Reported] = []
        for index, task in enumerate(tasks):
            finished = run_task(task, shard_dir, job)
            reported.append((index, finished.row, finished.shard, None))
        return reported
    journal = None if shard_dir is None else _shard_journal(shard_dir)
    shard = None if journal is None else str(journal.path)
    positions = {id(task): position for position, task in enumerate(tasks)}
    games = play_concurrently(tasks, journal, concurrency, job)
    return [(positions[id(task)], row, shard, None) for task, row in games]


def _play_for_driver(
    tasks: Sequence[GameTask], concurrency: int, job: BatchJob, link: DriverLink
) -> list[Reported]:
    """A Ray batch: marked started on the driver's node, its games recorded in a journal of the
    batch's own and sent back as rows (:mod:`maze_envs.bench.travel`)."""
    import ray

    with linked(link, ray.get):
        ray.get(link.services.mark.remote(job.number))
        with batch_journal(link.record) as journal:
            positions = {id(task): position for position, task in enumerate(tasks)}
            if concurrency <= 1 or len(tasks) <= 1:
                games: Iterator[tuple[GameTask, Row]] = (
                    (task, _play_settled(task, journal, job)) for task in tasks
                )
            else:
                games = play_concurrently(tasks, journal, concurrency, job)
            return [(positions[id(task)], row, None, _rows_of(journal, row)) for task, row in games]


def _play_settled(task: GameTask, journal: Any, job: BatchJob | None) -> Row:
    """Play ``task`` into ``journal``, settled: the game's rows are read from it next."""
    row = play(task, journal, budget_for(task, job))
    if journal is not None:
        journal.settle()
    return row


def _rows_of(journal: Any, row: Row) -> StoredGame | None:
    """The journal rows of the game ``row`` reports (``None``: none recorded)."""
    game_id = row.get("game_id")
    return None if journal is None or game_id is None else journal.stored_game(game_id)


def run_batch(
    tasks: Sequence[GameTask],
    shard_dir: str | None,
    concurrency: int = 1,
    job: BatchJob | None = None,
) -> list[Finished]:
    """:func:`play_batch`, each game as a :class:`Finished` (its task attached again)."""
    return as_finished(tasks, play_batch(tasks, shard_dir, concurrency, job))


def as_finished(tasks: Sequence[GameTask], reported: Sequence[Reported]) -> list[Finished]:
    """The :class:`Finished` games of a batch of ``tasks`` from what its worker reported."""
    return [Finished(tasks[index], row, shard, rows) for index, row, shard, rows in reported]
