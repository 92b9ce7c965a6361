"""A worker that dies at any moment loses no game and records none twice or half (issue 19).

The kills are injected at named points of the executor (``fault`` hook: before a submit, a
wait, reading a result, handing on a finished game) or inside the first submit, never raced
against a timer: the hook kills a worker with SIGKILL and waits until the pool has noticed, so
the executor's next call observes the broken pool every time. Each test then checks that every
game is in the run's journal exactly once, complete, and that the journal verifies.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.executors import ProcessExecutor
from maze_envs.bench.rowstore import RowStore
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment, GameTask
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal
from tests.bench import ESCAPE_VERSION

HERE = "tests.bench.policies"
#: Generous: only a hang reaches it.
DEADLINE_S = 120.0


def escape(policies: list[str], seeds: str, size: int = 5, max_turns: int = 30) -> Experiment:
    return Experiment.model_validate(
        {
            "name": "deaths",
            "seeds": seeds,
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [size],
                    "max_turns": max_turns,
                    "policies": policies,
                }
            ],
        }
    )


def assert_every_game_once(out: Path, tasks: list[GameTask]) -> None:
    """Every task is in the journal exactly once, complete, verified, with an ``ok`` row."""
    with Journal(out / "games.sqlite", readonly=True) as journal:
        games = journal.games()
        keys = [game.meta["run_key"] for game in games if game.meta]
        assert all(game.outcome is not None and not game.outcome.get("aborted") for game in games)
    assert sorted(keys) == sorted(task.run_key for task in tasks)  # each once, none missing
    reports = verify_journal(str(out / "games.sqlite"))
    assert reports and all(report.ok for report in reports), [r.describe() for r in reports]
    rows = RowStore(out / "rows.jsonl").load()
    assert sorted(rows) == sorted(task.run_key for task in tasks)
    assert all(row["status"] == "ok" for row in rows.values()), [r["error"] for r in rows.values()]


def kill_a_worker(pool: Any) -> int:
    """SIGKILL one live worker of ``pool``, then wait until the pool knows it is broken."""
    live = [pid for pid, p in (pool._processes or {}).items() if p.is_alive()]
    assert live, "the pool has no live worker to kill"
    os.kill(live[0], signal.SIGKILL)
    deadline = time.monotonic() + DEADLINE_S
    while not pool._broken:  # the pool's manager thread notices the death
        assert time.monotonic() < deadline, "the pool never noticed its worker died"
        time.sleep(0.001)
    return live[0]


class KillAt:
    """A fault hook: kill a worker at the ``occurrence``-th call at ``point`` (0-based)."""

    def __init__(self, point: str, occurrence: int) -> None:
        self.point = point
        self.occurrence = occurrence
        self.calls = 0
        self.killed: list[int] = []

    def __call__(self, point: str, pool: Any) -> None:
        if point != self.point:
            return
        if self.calls == self.occurrence:
            self.killed.append(kill_a_worker(pool))
        self.calls += 1


def run_with(executor: Any, experiment: Experiment, out: Path) -> None:
    result = run_experiment(experiment, out, RunOptions(executor=executor, quiet=True))
    assert len(result.rows) == len(experiment.tasks())


# --- the process pool: every call that can observe a broken pool -------------------------------


@pytest.mark.parametrize("occurrence", range(1, 21))
def test_a_worker_killed_between_two_batches_at_the_next_submit(
    occurrence: int, tmp_path: Path
) -> None:
    """The racy point of the issue, 20 times: a worker dies after ``wait`` returned and before
    the next ``submit`` (the n-th; one game per batch, so each game is a submit), which raises
    ``BrokenProcessPool``; every unreported game is played again on a new pool."""
    experiment = escape(["oracle"], "0-23")
    hook = KillAt("submit", occurrence)
    run_with(ProcessExecutor(workers=2, fault=hook, max_batch=1), experiment, tmp_path / "run")
    assert hook.killed, "no worker was killed: the test proves nothing"
    assert_every_game_once(tmp_path / "run", experiment.tasks())


@pytest.mark.parametrize(
    ("point", "occurrence"),
    [("wait", 0), ("wait", 3), ("result", 2), ("yield", 1), ("yield", 6), ("shutdown", 0)],
)
def test_a_worker_killed_at_each_point_of_the_executor(
    point: str, occurrence: int, tmp_path: Path
) -> None:
    """Killed while games run (before a wait), after a batch came back (before its result is
    read), while finished games are handed on (the generator suspended at its yield), and once
    every game is in, before the pool shuts down."""
    experiment = escape(["explorer"], "0-29", size=7, max_turns=60)
    hook = KillAt(point, occurrence)
    run_with(ProcessExecutor(workers=2, fault=hook), experiment, tmp_path / "run")
    assert hook.killed, "no worker was killed: the test proves nothing"
    assert_every_game_once(tmp_path / "run", experiment.tasks())


class KillInFirstSubmit(ProcessExecutor):
    """The first ``submit`` starts a worker, which dies before ``submit`` returns."""

    def _pool(self) -> Any:
        pool = super()._pool()
        submit = pool.submit

        def dying_submit(*args: Any, **kwargs: Any) -> Any:
            future = submit(*args, **kwargs)
            if not self.killed:
                self.killed.append(kill_a_worker(pool))
            return future

        pool.submit = dying_submit  # type: ignore[method-assign]
        return pool


def test_a_worker_killed_before_the_first_submit_returns(tmp_path: Path) -> None:
    experiment = escape(["oracle"], "0-11")
    executor = KillInFirstSubmit(workers=2)
    executor.killed = []  # type: ignore[attr-defined]
    run_with(executor, experiment, tmp_path / "run")
    assert executor.killed  # type: ignore[attr-defined]
    assert_every_game_once(tmp_path / "run", experiment.tasks())


def test_games_waiting_or_stopped_by_the_clean_up_use_no_attempt(tmp_path: Path) -> None:
    """A game that kills every worker it runs in is reported after its attempts; the games the
    pool's clean-up stopped in the other worker, or that were waiting, are not charged, so
    they all end ``ok`` however often the pool died."""
    experiment = Experiment.model_validate(
        {
            "name": "deaths",
            "escape": [
                {
                    "label": "killer",
                    "version": ESCAPE_VERSION,
                    "sizes": [5],
                    "max_turns": 30,
                    "seeds": "0",
                    "policies": [f"{HERE}:KillAlways:turn=1"],
                },
                {
                    "label": "innocent",
                    "version": ESCAPE_VERSION,
                    "sizes": [7],
                    "max_turns": 60,
                    "seeds": "0-19",
                    "policies": ["explorer"],
                },
            ],
        }
    )
    out = tmp_path / "run"
    result = run_experiment(
        experiment, out, RunOptions(executor=ProcessExecutor(workers=2), quiet=True)
    )
    by_setup = {setup: [r for r in result.rows if r["setup"] == setup] for setup in ("killer",)}
    (killer,) = by_setup["killer"]
    assert killer["status"] == "error"
    assert killer["error"] == "the worker process died 3 times playing this game"
    innocent = [r for r in result.rows if r["setup"] == "innocent"]
    assert len(innocent) == 20 and all(r["status"] == "ok" for r in innocent)
    with Journal(out / "games.sqlite", readonly=True) as journal:
        keys = [g.meta["run_key"] for g in journal.games() if g.meta]
    assert sorted(keys) == sorted(r["run_key"] for r in innocent)
    assert all(report.ok for report in verify_journal(str(out / "games.sqlite")))


# --- Ray: a worker process that dies at any point ----------------------------------------------


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


class KillRayWorker:
    """A Ray fault hook: at the ``occurrence``-th call at ``point``, SIGKILL the Ray worker that
    most recently started a game (the policy writes ``pid-<pid>`` files), waiting for one."""

    def __init__(self, folder: Path, point: str, occurrence: int) -> None:
        self.folder = folder
        self.point = point
        self.occurrence = occurrence
        self.calls = 0
        self.killed: list[int] = []

    def __call__(self, point: str, pool: Any) -> None:
        if point != self.point:
            return
        if self.calls == self.occurrence:
            deadline = time.monotonic() + DEADLINE_S
            while not (pids := sorted(self.folder.glob("pid-*"), key=os.path.getmtime)):
                assert time.monotonic() < deadline, "no Ray worker ever started a game"
                time.sleep(0.005)
            pid = int(pids[-1].name.removeprefix("pid-"))
            os.kill(pid, signal.SIGKILL)
            self.killed.append(pid)
        self.calls += 1


@pytest.mark.parametrize(("point", "occurrence"), [("wait", 1), ("yield", 0), ("yield", 4)])
def test_ray_survives_a_worker_killed_at_each_point(
    local_ray: Any, point: str, occurrence: int, tmp_path: Path
) -> None:
    from maze_envs.bench.ray_executor import RayExecutor

    folder = tmp_path / "pids"
    folder.mkdir()
    (folder / "block").touch()  # BlockAfter's hung games: none here, games=1000
    experiment = escape([f"{HERE}:BlockAfter:folder={folder},games=1000"], "0-15")
    hook = KillRayWorker(folder, point, occurrence)
    run_with(RayExecutor(workers=2, fault=hook), experiment, tmp_path / "run")
    assert hook.killed, "no worker was killed: the test proves nothing"
    assert_every_game_once(tmp_path / "run", experiment.tasks())


class _Process:
    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode


class _DeadPool:
    """What :func:`bury` reads of a broken pool: its processes' exit codes."""

    def __init__(self, codes: dict[int, int | None]) -> None:
        self._processes = {pid: _Process(code) for pid, code in codes.items()}
        self.shut = False

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        self.shut = True


@pytest.mark.parametrize(
    ("codes", "charged"),
    [
        ({101: -signal.SIGKILL, 102: -signal.SIGTERM}, {0}),  # the clean-up's SIGTERM: not a cause
        ({101: -signal.SIGTERM, 102: -signal.SIGKILL}, {1}),
        ({101: -signal.SIGKILL, 102: -signal.SIGKILL}, {0, 1}),  # both died (out of memory)
        ({101: -signal.SIGTERM, 102: -signal.SIGTERM}, {0, 1}),  # no cause known: both started
        ({}, {0, 1}),  # no exit codes at all: every started batch
    ],
)
def test_an_attempt_is_charged_to_the_batches_that_were_in_the_dead_process(
    tmp_path: Path, codes: dict[int, int | None], charged: set[int]
) -> None:
    from maze_envs.bench.executors import Batch, bury

    (tmp_path / "0").write_text("101")  # batch 0 started in process 101
    (tmp_path / "1").write_text("102")  # batch 1 in 102; batch 2 never started
    pool = _DeadPool(codes)
    lost = [Batch(number, []) for number in (0, 1, 2)]
    assert bury(pool, str(tmp_path), lost) == charged
    assert pool.shut
