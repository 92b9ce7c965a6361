"""A whole benchmark run: tasks -> executor -> journal and rows -> results, plots, verification.

:func:`run_experiment` plays every game of an :class:`~maze_envs.bench.spec.Experiment` that is
not already done and writes, in the output folder:

``games.sqlite``
    Every game, copied once finished from the workers' shard journals, or from the journal
    rows a Ray worker sent back (see :mod:`maze_envs.bench.executors`,
    :mod:`maze_envs.bench.travel`); ``journal=False`` plays without one.
``rows.jsonl``
    The per-game rows (see :mod:`maze_envs.bench.rowstore`), for resuming.
``results.csv``, ``results.json``, ``summary.md``, ``*.png``
    The results of the experiment's games (:mod:`.report`, :mod:`.plots`).
``index.html``, ``pages/``
    The run's front page: the tables and plots, each table line linked to viewer pages of its
    games; ``pages=True`` writes the sample pages it links to (:mod:`.frontpage`).
``experiment.json``
    The experiment as resolved (commit it, or the file it came from, with the results).
``results.stamp.json``
    A digest of the experiment and the rows the results files and plots were written from: a
    resume that plays nothing and finds the same digest (and the files) does not write them
    again, so resuming a finished run stays fast.

Resuming (``resume=True``): games whose run key has a finished game in the journal (or, without a
journal, a row) are skipped; games that ended with an error and games a run cap stopped or kept
from starting are played again, and with ``retry_outages=True`` (``--resume --retry-outages``)
the games an outage touched (status ``outage``: the model could not be reached) too: they are
not the model's play, and since long, failing games are the likeliest to meet an outage,
leaving them out biases the success rate.

A folder that already holds a run (a row, or a game in the journal) is never overwritten
silently. Without ``resume`` it is refused (:class:`RunError`), unless ``fresh=True`` deletes
the run's files (only those; it prints what it deletes). The main job (``main_job=True``, what
``maze-envs bench`` runs with no setup options) marks its folder (``main-job.txt``) and starts
over a folder holding an earlier main-job run (saying what it deletes); any other run there is
refused.

Stopping: SIGINT or SIGTERM during the run raises
:class:`~maze_envs.bench.stopping.RunStopped` (with the games done and in all) once the
executor's workers have ended; every finished game is in the journal once and ``resume=True``
completes the run (:mod:`maze_envs.bench.stopping`).

Run caps: ``max_tokens_per_run`` / ``max_cost_per_run`` and the policies' own per-run caps are
one budget for the whole run, across every worker (:mod:`maze_envs.bench.ledger`).
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from maze_envs.bench.checks import Checked, check_tasks
from maze_envs.bench.executors import Executor, Finished, make_executor
from maze_envs.bench.folder import (
    JOURNAL_HASH_SIZE,
    JOURNAL_NAME,
    MAIN_JOB_MARK,
    PAGES_NAME,
    ROWS_NAME,
    RUN_FILES,
    SHARDS_NAME,
    STAMP_NAME,
    RunError,
    prepare_folder,
)
from maze_envs.bench.ledger import RUN_CAP_PREFIX, CapTable
from maze_envs.bench.plots import write_plots
from maze_envs.bench.progress import make_progress
from maze_envs.bench.report import write_results
from maze_envs.bench.results import summarize
from maze_envs.bench.rollout import Row
from maze_envs.bench.rowstore import RowStore, row_from_journal
from maze_envs.bench.spec import Experiment, GameTask
from maze_envs.bench.stopping import RunStopped, StopSignals
from maze_envs.journal import Journal, JournalError, StoredGame

__all__ = [
    "JOURNAL_NAME",
    "MAIN_JOB_MARK",
    "PAGES_NAME",
    "ROWS_NAME",
    "RUN_FILES",
    "SHARDS_NAME",
    "STAMP_NAME",
    "Checked",
    "RunError",
    "RunOptions",
    "RunResult",
    "RunStopped",
    "check_tasks",
    "run_experiment",
]


@dataclass
class RunOptions:
    """How a run is executed and what it writes."""

    #: ``inline``, ``process``, ``ray``, or an executor object (its own workers and concurrency).
    executor: str | Executor = "inline"
    workers: int | None = None
    concurrency: int | None = None
    resume: bool = False
    #: with ``resume``: play again the games an outage touched
    retry_outages: bool = False
    fresh: bool = False
    journal: bool = True
    verify: bool = False
    plots: bool = True
    #: write the front page's sample viewer pages (``index.html`` is written either way)
    pages: bool = False
    quiet: bool = False
    #: The Ray cluster to join (``host:port``; default: a local one) and the runtime environment
    #: of its workers (Ray's ``runtime_env``: ``pip``, ``env_vars``, ``working_dir``...).
    ray_address: str | None = None
    ray_runtime_env: dict[str, Any] | None = None
    #: Caps of the whole run, across every worker (:mod:`maze_envs.bench.ledger`).
    max_tokens_per_run: int | None = None
    max_cost_per_run: float | None = None
    #: The main job's run: marks its folder, and may start over its own earlier run there.
    main_job: bool = False


@dataclass
class RunResult:
    """What a run did and wrote."""

    out: Path
    rows: list[Row]
    summary: dict[str, Any]
    played: int
    skipped: int
    elapsed_s: float
    paths: dict[str, Path] = field(default_factory=dict)
    plots: list[Path] = field(default_factory=list)
    pages: list[Path] = field(default_factory=list)
    verified: list[Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def journal(self) -> Path | None:
        path = self.out / JOURNAL_NAME
        return path if path.is_file() else None

    @property
    def verified_ok(self) -> bool:
        return self.verified is None or all(report.ok for report in self.verified)


class _Merger:
    """Stores finished games in the run's journal, each run key at most once: the game's journal
    rows, from a worker's shard (process pool, inline) or sent with the result (Ray), all go
    through :meth:`store`."""

    def __init__(
        self, journal: Any, store: RowStore, done: set[str], before: dict[str, Row]
    ) -> None:
        self.journal = journal
        self.store = store
        self.merged = set(done)
        self.before = before
        self._shards: dict[str, Any] = {}

    def add(self, finished: Finished) -> Row | None:
        row = finished.row
        key = row["run_key"]
        if key in self.merged:
            return None  # a retried task that finished twice: the first copy stands
        if row.get("game_id") is None and key in self.before and _capped(row):
            return None  # not started again (the cap): the row of what it played stands
        rows = finished.rows
        game_id = row.get("game_id")
        if rows is None and finished.shard is not None and game_id is not None:
            rows = self._shard(finished.shard).stored_game(game_id)
        return self.store_game(row, rows)

    def store_game(self, row: Row, rows: StoredGame | None) -> Row:
        """Store a finished game: its journal ``rows`` (as the journal it was recorded in stores
        them; ``None``: no journal game) in the run's journal, in one transaction, then its row
        with the game's id there. The one way every executor's games reach the run's files."""
        row = dict(row)
        row["game_id"] = None
        if self.journal is not None and rows is not None:
            row["game_id"] = self.journal.add_stored_game(rows)
        self.merged.add(row["run_key"])
        self.store.append(row)
        return row

    def _shard(self, path: str) -> Any:
        if path not in self._shards:
            self._shards[path] = Journal(path, readonly=True)
        return self._shards[path]

    def close(self) -> None:
        for shard in self._shards.values():
            shard.close()
        self._shards.clear()


def _capped(row: Row) -> bool:
    """Whether a run cap stopped the row's game (or kept it from starting)."""
    return str(row.get("stop_reason") or "").startswith(RUN_CAP_PREFIX)


#: Row statuses whose games ``--resume`` plays again (not a result of the policy's play); with
#: ``--retry-outages``, ``outage`` too.
REPLAYED = frozenset({"error"})


def _counts(row: Row, retry_outages: bool = False) -> bool:
    """Whether a row is a result a resume keeps: not an error, not stopped by a run cap, and
    with ``retry_outages`` not touched by an outage (the model could not be reached)."""
    replayed = REPLAYED | {"outage"} if retry_outages else REPLAYED
    return row.get("status") not in replayed and not _capped(row)


def _resume_state(
    tasks: Sequence[GameTask], journal: Any, store: RowStore, retry_outages: bool = False
) -> tuple[dict[str, Row], set[str], list[str]]:
    """Rows known so far, the run keys already done, and notes about what was recovered."""
    rows = store.load()
    keys = {task.run_key for task in tasks}
    notes: list[str] = []
    if journal is None:
        done = {k for k in keys if k in rows and _counts(rows[k], retry_outages)}
        return rows, done, notes
    completed = set(journal.completed_keys("run_key")) & keys
    stopped = {
        k
        for k in keys
        if k in rows
        and rows[k].get("status") == "stopped"
        and rows[k].get("game_id") is not None
        and _counts(rows[k])
    }
    missing = {k for k in completed if k not in rows or rows[k].get("status") == "error"}
    if missing:  # the runner stopped between copying a game and writing its row
        for game in journal.games():
            key = (getattr(game, "meta", None) or {}).get("run_key")
            if (
                isinstance(key, str)
                and key in missing
                and game.outcome is not None
                and not game.outcome.get("aborted")
            ):
                row = row_from_journal(journal, game)
                if row is not None:
                    rows[key] = row
                    store.append(row)
        notes.append(f"{len(missing)} game(s) scored again from the journal (no saved row)")
    # games an outage touched are not the model's play: --retry-outages plays them again;
    # without it they are kept as they are (reported apart), finished or stopped
    outage = {k for k in keys if rows.get(k, {}).get("status") == "outage"}
    if not retry_outages:
        return rows, completed | stopped | outage, notes
    return rows, (completed | stopped) - outage, notes


def _stamp(experiment: dict[str, Any], rows: Sequence[Row], plots: bool, pages: bool) -> str:
    import hashlib

    data = orjson.dumps(
        {"experiment": experiment, "rows": list(rows), "plots": plots, "pages": pages},
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )
    return hashlib.sha256(data).hexdigest()


def _written_before(
    folder: Path, digest: str
) -> tuple[dict[str, Path], list[Path], list[Path]] | None:
    """The results files, plots and pages of a previous write with the same digest, if all
    exist."""
    try:
        stamp = orjson.loads((folder / STAMP_NAME).read_bytes())
        if stamp.get("digest") != digest:
            return None
        paths = {name: folder / file for name, file in stamp["paths"].items()}
        plots = [folder / file for file in stamp["plots"]]
        pages = [folder / PAGES_NAME / file for file in stamp["pages"]]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    if all(path.is_file() for path in [*paths.values(), *plots, *pages]):
        return paths, plots, pages
    return None


def _write_stamp(folder: Path, digest: str, result: RunResult) -> None:
    stamp = {
        "digest": digest,
        "paths": {name: path.name for name, path in result.paths.items()},
        "plots": [path.name for path in result.plots],
        "pages": [path.name for path in result.pages],
    }
    (folder / STAMP_NAME).write_bytes(orjson.dumps(stamp))


def run_experiment(
    experiment: Experiment,
    out: str | Path,
    options: RunOptions | None = None,
    *,
    on_row: Callable[[Row], None] | None = None,
) -> RunResult:
    """Play the experiment's games that are not done yet and write the results (module doc).

    Raises :class:`RunError` (nothing played: a bad option or output folder) and
    :class:`~maze_envs.bench.stopping.RunStopped` (SIGINT or SIGTERM: the run is resumable).
    """
    options = options or RunOptions()
    with StopSignals() as stop:
        try:
            return _run(experiment, Path(out), options, on_row, stop)
        except KeyboardInterrupt as interrupt:
            stopped = stop.stopped(interrupt)
            stopped.out = str(out)
            raise stopped from None


def _run(
    experiment: Experiment,
    folder: Path,
    options: RunOptions,
    on_row: Callable[[Row], None] | None,
    stop: StopSignals,
) -> RunResult:
    started = time.perf_counter()
    tasks = experiment.tasks()
    checked = check_tasks(tasks)
    any_async = checked.any_async
    # games at once in one event loop: in this process (inline) or in each worker (process, ray);
    # sync games gain nothing from a worker's event loop, so there they go one by one
    concurrency = options.concurrency or (8 if any_async else 1)
    if not any_async and options.executor != "inline":
        concurrency = 1
    try:
        executor = (
            make_executor(
                options.executor,
                options.workers,
                concurrency,
                options.ray_address,
                options.ray_runtime_env,
            )
            if isinstance(options.executor, str)
            else options.executor
        )
        caps = CapTable.build(tasks, options.max_tokens_per_run, options.max_cost_per_run)
    except (ImportError, ValueError) as exc:  # an executor not installed, or a bad option
        raise RunError(str(exc)) from None
    prepare_folder(folder, options)
    (folder / "experiment.json").write_bytes(
        orjson.dumps(experiment.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
    )
    journal: Any = None
    store = RowStore(folder / ROWS_NAME)
    merger: _Merger | None = None
    try:
        try:
            if options.journal:
                journal = Journal(folder / JOURNAL_NAME, hash_size=JOURNAL_HASH_SIZE)
                if options.resume:
                    journal.check_integrity()  # a damaged journal: a clear error, before a game
            rows, done, notes = _resume_state(tasks, journal, store, options.retry_outages)
        except JournalError as exc:
            raise RunError(
                f"the run in {folder} cannot be continued; --fresh starts it over: its journal "
                f"cannot be read ({exc}); check it with `maze-envs verify {folder / JOURNAL_NAME}`"
            ) from None
        todo = [task for task in tasks if task.run_key not in done]
        spent = None if caps is None else caps.spent(rows.values(), tasks)
        shard_dir = None
        if journal is not None and todo:
            shard_dir = folder / SHARDS_NAME
            shard_dir.mkdir()
        merger = _Merger(journal, store, done, dict(rows))
        progress = make_progress(len(tasks), len(tasks) - len(todo), quiet=options.quiet)
        games = executor.run(todo, shard_dir, caps, spent, shared=checked.shared)
        try:
            for finished in games:
                with stop.shielded():  # a finished game is stored whole, with its row
                    row = merger.add(finished)
                    if row is None:
                        continue
                    rows[row["run_key"]] = row
                    progress.update(row)
                if on_row is not None:
                    on_row(row)
        except KeyboardInterrupt as interrupt:
            stopped = stop.stopped(interrupt)
            stopped.done = sum(1 for task in tasks if task.run_key in rows)
            stopped.total = len(tasks)
            raise stopped from None
        finally:
            with contextlib.suppress(Exception):
                games.close()  # type: ignore[attr-defined]  # ends the workers first
            progress.close()
            merger.close()
            if shard_dir is not None:
                shutil.rmtree(shard_dir, ignore_errors=True)
        ordered = [rows[task.run_key] for task in tasks if task.run_key in rows]
        summary = summarize(ordered)
        result = RunResult(
            out=folder,
            rows=ordered,
            summary=summary,
            played=len(todo),
            skipped=len(tasks) - len(todo),
            elapsed_s=0.0,
            notes=notes,
        )
        capped = [r for r in ordered if _capped(r)]
        if capped:
            result.notes.append(
                f"{capped[0]['stop_reason']}: {len(capped)} game(s) stopped or not started "
                "(status stopped; --resume with a higher cap plays them)"
            )
        resolved = experiment.model_dump(mode="json")
        pages = options.pages and journal is not None
        digest = _stamp(resolved, ordered, options.plots, pages)
        before = _written_before(folder, digest) if not todo else None
        plots: Future[tuple[list[Path], list[str]]] | None = None
        if before is not None:  # a resume that played nothing: the files are up to date
            result.paths, result.plots, result.pages = before
        else:
            (folder / STAMP_NAME).unlink(missing_ok=True)
            result.paths = write_results(folder, resolved, ordered, summary)
            if options.plots:  # a plot with nothing played is left out, saying why
                # drawn in a thread of its own while the journal is verified and the sample
                # pages are drawn, both in worker processes (matplotlib's object API: nothing
                # shared)
                drawing = ThreadPoolExecutor(1, thread_name_prefix="maze-envs-plots")
                plots = drawing.submit(write_plots, folder, summary)
                drawing.shutdown(wait=False)
        if journal is not None:
            journal.close()
            journal = None
            if options.verify:
                result.verified = _verify(folder / JOURNAL_NAME, _local_workers(options))
        if before is None:
            _front_page(folder, resolved, result, pages, _local_workers(options), plots)
            _write_stamp(folder, digest, result)
        result.elapsed_s = time.perf_counter() - started
        return result
    finally:
        store.close()
        if journal is not None:
            journal.close()


def _local_workers(options: RunOptions) -> int:
    """Processes for the work after the games (verifying, drawing pages): the run's workers
    when it ran on a pool, else 1."""
    parallel = options.executor != "inline" and (options.workers or 2) > 1
    return (options.workers or 2) if parallel else 1


def _front_page(
    folder: Path,
    experiment: dict[str, Any],
    result: RunResult,
    pages: bool,
    workers: int,
    plots: Future[tuple[list[Path], list[str]]] | None = None,
) -> None:
    """Write the sample viewer pages (when ``pages``) and ``index.html`` (:mod:`.frontpage`);
    ``plots``: the plots being drawn meanwhile (:func:`.plots.write_plots`), awaited before
    the index."""
    from maze_envs.bench.frontpage import (
        finest_keys,
        index_data,
        sample_rows,
        write_index,
        write_pages,
    )

    written = None
    try:
        if pages:
            chosen = sample_rows(result.rows, finest_keys(experiment, result.summary))
            # a game the run verified is drawn with that verdict, not replayed a second time
            reports = {report.game_id: report for report in result.verified or ()}
            written = write_pages(folder, chosen, workers=workers, reports=reports)
            result.pages = list(written.written.values())
    finally:
        if plots is not None:
            result.plots, plot_notes = plots.result()
            result.notes += plot_notes
    if written is not None:
        result.notes += written.notes
    data = index_data(
        folder,
        experiment,
        result.rows,
        result.summary,
        plots=result.plots,
        pages=written,
        notes=result.notes,
    )
    result.paths["index"] = write_index(folder, data)


def _verify_ids(path: str, game_ids: list[int]) -> list[Any]:
    from maze_envs.verify import verify_journal

    return verify_journal(path, game_ids, workers=1)  # (the caller shares the games out)


def _verify(path: Path, workers: int = 1) -> list[Any]:
    """Replay and check every game of the journal (``maze-envs verify``'s own check), in
    ``workers`` processes when there are several (each replays a share of the games)."""
    with Journal(path, readonly=True) as journal:
        ids = journal.game_ids()
    if workers <= 1 or len(ids) < 2 * workers:
        return _verify_ids(str(path), ids)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from maze_envs.bench.executors import end_pool
    from maze_envs.bench.stopping import worker_signals

    shares = [ids[start::workers] for start in range(workers)]
    context = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=worker_signals)
    completed = False
    try:
        parts = list(pool.map(_verify_ids, [str(path)] * workers, shares))
        completed = True
    finally:
        end_pool(pool, abandon=not completed)  # a stop ends the replaying workers at once
    reports = [report for part in parts for report in part]
    return sorted(reports, key=lambda report: report.game_id)
