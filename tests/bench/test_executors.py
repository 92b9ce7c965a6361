"""Process pool and Ray executors: the same results as in-process, worker deaths, no duplicates."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest

from maze_envs.bench.executors import MAX_BATCH, Batcher, ProcessExecutor, make_executor
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.escape.types import Action, Observation
from maze_envs.journal import Journal
from maze_envs.policies.interface import AsyncPolicyBase
from tests.bench import ESCAPE_VERSION

HERE = "tests.bench.policies"
IGNORED = {"elapsed_s", "game_id"}


def experiment(policies: list[str], seeds: str = "0-5") -> Experiment:
    return Experiment.model_validate(
        {
            "name": "executors",
            "seeds": seeds,
            "escape": [
                {"version": ESCAPE_VERSION, "sizes": [7], "max_turns": 60, "policies": policies}
            ],
            "agimaze": [{"packs": ["TUTORIAL/STAGE-01"], "policies": ["explorer"]}],
        }
    )


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in IGNORED} for r in rows]


def journal_keys(path: Path) -> list[str]:
    with Journal(path, create=False) as journal:
        return [g.meta["run_key"] for g in journal.games() if g.meta]


@pytest.fixture(scope="module")
def inline_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("inline") / "run"
    result = run_experiment(experiment(["explorer", "random"]), out, RunOptions(quiet=True))
    assert all(r["status"] == "ok" for r in result.rows), [r["error"] for r in result.rows]
    return comparable(result.rows)


def test_the_process_pool_gives_the_same_results(
    tmp_path: Path, inline_rows: list[dict[str, Any]]
) -> None:
    options = RunOptions(executor="process", workers=2, quiet=True, verify=True)
    result = run_experiment(experiment(["explorer", "random"]), tmp_path / "run", options)
    assert comparable(result.rows) == inline_rows  # rows come back in the tasks' order
    assert result.verified_ok and len(result.verified or []) == 30
    keys = journal_keys(tmp_path / "run" / "games.sqlite")
    assert sorted(keys) == sorted(r["run_key"] for r in inline_rows)
    assert not (tmp_path / "run" / "shards").exists()  # merged and removed


def test_a_killed_worker_never_records_a_game_twice_nor_half(tmp_path: Path) -> None:
    marker = tmp_path / "killed"
    exp = experiment([f"{HERE}:KillOnce:marker={marker},turn=3"])
    options = RunOptions(executor="process", workers=2, quiet=True, verify=True)
    result = run_experiment(exp, tmp_path / "run", options)
    assert marker.exists(), "no worker was killed: the test proves nothing"
    assert all(r["status"] == "ok" for r in result.rows), [r["error"] for r in result.rows]
    keys = journal_keys(tmp_path / "run" / "games.sqlite")
    assert sorted(keys) == sorted(t.run_key for t in exp.tasks())  # each game exactly once
    assert result.verified_ok  # and no half-written game in the run's journal
    with Journal(tmp_path / "run" / "games.sqlite", create=False) as journal:
        assert all(g.outcome is not None for g in journal.games())


@pytest.mark.parametrize("executor", ["process", "ray"])
def test_a_worker_killed_mid_batch_loses_no_game_and_duplicates_none(
    executor: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The kill falls in a process's 12th game, inside a batch of several short games: the
    batch's finished games were never reported, so they are played again, and each game is in
    the journal exactly once."""
    if executor == "ray":
        request.getfixturevalue("local_ray")
    marker = tmp_path / "killed"
    exp = experiment([f"{HERE}:KillLater:marker={marker},turn=3,game=12"], seeds="0-39")
    options = RunOptions(executor=executor, workers=2, quiet=True, verify=True)
    result = run_experiment(exp, tmp_path / "run", options)
    assert marker.exists(), "no worker was killed: the test proves nothing"
    assert all(r["status"] == "ok" for r in result.rows), [r["error"] for r in result.rows]
    keys = journal_keys(tmp_path / "run" / "games.sqlite")
    assert sorted(keys) == sorted(t.run_key for t in exp.tasks())
    assert result.verified_ok


def test_a_game_that_kills_every_worker_is_reported_not_retried_forever() -> None:
    exp = experiment([f"{HERE}:KillAlways:turn=1"], seeds="0")
    tasks = [t for t in exp.tasks() if t.case.kind == "escape"]
    finished = list(ProcessExecutor(workers=1, max_attempts=2).run(tasks, None))
    assert len(finished) == 1
    row = finished[0].row
    assert row["status"] == "error" and row["error"] == (
        "the worker process died 2 times playing this game"
    )


class _CountingPool(ThreadPoolExecutor):
    """A thread pool that remembers the most submitted-and-unfinished futures at once."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.outstanding = 0
        self.most = 0
        self.lock = threading.Lock()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self.lock:
            self.outstanding += 1
            self.most = max(self.most, self.outstanding)
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._done)
        return future

    def _done(self, _: Future[Any]) -> None:
        with self.lock:
            self.outstanding -= 1


def test_back_pressure_keeps_at_most_two_batches_per_worker_in_flight() -> None:
    pool = _CountingPool()

    class Counted(ProcessExecutor):
        def _pool(self) -> Any:
            return pool

    tasks = [t for t in experiment(["explorer"], seeds="0-39").tasks() if t.case.kind == "escape"]
    finished = list(Counted(workers=2).run(tasks, None))
    assert sorted(f.task.run_key for f in finished) == sorted(t.run_key for t in tasks)
    assert len(finished) == len(tasks)  # each game once
    assert pool.most == 4


def test_batches_grow_for_short_games_and_stay_single_for_long_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sizes: list[int] = []
    # the games' own durations depend on the machine's load: the batcher sees each game as the
    # 10 ms game it is on a quiet machine, so the test checks dispatch, not the clock
    observe = Batcher.observe
    monkeypatch.setattr(
        Batcher, "observe", lambda self, row: observe(self, {**row, "elapsed_s": 0.01})
    )

    class Recording(ProcessExecutor):
        def _pool(self) -> Any:
            inner = _CountingPool()
            submit = inner.submit

            def record(fn: Any, batch: Any, *args: Any) -> Future[Any]:
                sizes.append(len(batch))
                return submit(fn, batch, *args)

            inner.submit = record  # type: ignore[method-assign]
            return inner

    tasks = [t for t in experiment(["oracle"], seeds="0-199").tasks() if t.case.kind == "escape"]
    finished = list(Recording(workers=2).run(tasks, None))
    assert sorted(f.task.run_key for f in finished) == sorted(t.run_key for t in tasks)
    assert sizes[:4] == [1, 1, 1, 1]  # nothing known about the games yet
    assert max(sizes) > 1 and max(sizes) <= MAX_BATCH  # millisecond games travel together
    assert sum(sizes) == len(tasks)
    monkeypatch.undo()  # the batcher's own clock again
    batcher = Batcher(workers=2)
    for _ in range(3):
        batcher.observe({"elapsed_s": 2.0})  # model calls, big mazes: one game per batch
    assert batcher.size(remaining=1000) == 1


def test_results_come_in_completion_order(tmp_path: Path) -> None:
    """The first game submitted cannot end before the test has received the four others, each
    of which ends a file; an executor that reported in submission order would wait for it."""
    slow = Experiment.model_validate(
        {
            "seeds": "0",
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [7],
                    "max_turns": 5,
                    "policies": [f"{HERE}:WaitForFiles:folder={tmp_path},count=4"],
                }
            ],
        }
    ).tasks()
    fast = [t for t in experiment(["oracle"], seeds="0-3").tasks() if t.case.kind == "escape"]
    order = []
    for finished in ProcessExecutor(workers=2).run([*slow, *fast], None):
        order.append(finished.task.run_key)
        (tmp_path / f"done-{len(order)}").touch()
    assert order[-1] == slow[0].run_key
    assert sorted(order) == sorted(t.run_key for t in [*slow, *fast])


# --- concurrent games in each worker -------------------------------------------------------------

THIS = "tests.bench.test_executors"


class Overlap(AsyncPolicyBase[Any, Observation, Action]):
    """Each decision awaits ``delay`` s; writes the most decisions its process had in flight at
    once to ``folder/<pid>`` (so a test in another process can read it)."""

    in_flight: ClassVar[int] = 0
    most: ClassVar[int] = 0

    def __init__(self, folder: str, delay: float = 0.01) -> None:
        self.folder = Path(folder)
        self.delay = delay

    async def aact(self, observation: Observation) -> Action:
        cls = type(self)
        cls.in_flight += 1
        cls.most = max(cls.most, cls.in_flight)
        (self.folder / str(os.getpid())).write_text(str(cls.most))
        try:
            await asyncio.sleep(self.delay)
        finally:
            cls.in_flight -= 1
        return Action(move="STAY")


class KillMidBatch(AsyncPolicyBase[Any, Observation, Action]):
    """Async STAY, the n-th game a process starts awaiting ``3n`` ms per turn (so its games end
    one after another); the first game to reach ``turn`` waits (awaiting, so the other games of
    its batch play on) until ``after`` games of its process have played their last turn, then
    SIGKILLs its process, the first time only (``marker`` is created exclusively and holds the
    ``started ended`` game counts at the kill)."""

    started: ClassVar[int] = 0
    ended: ClassVar[int] = 0
    killer: ClassVar[int | None] = None

    def __init__(self, marker: str, turn: int = 3, after: int = 2) -> None:
        self.marker = Path(marker)
        self.turn = turn
        self.after = after

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        super().reset(agent, seed, episode)
        self.counted = False
        if agent == "A":
            KillMidBatch.started += 1
        self.index = KillMidBatch.started  # the agents of a game reset one after another

    async def aact(self, observation: Observation) -> Action:
        cls = KillMidBatch
        await asyncio.sleep(0.003 * self.index)
        if self.agent == "A" and observation.turns_left <= 1 and not self.counted:
            self.counted = True
            cls.ended += 1
        if (
            observation.turn >= self.turn
            and not self.marker.exists()
            and cls.killer in (None, id(self))
        ):
            cls.killer = id(self)
            deadline = time.monotonic() + 30
            while cls.ended < self.after and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # the finished games settle into the shard
            try:
                with self.marker.open("x") as out:
                    out.write(f"{cls.started} {cls.ended}")
            except FileExistsError:  # the other worker killed itself first
                cls.killer = -1
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return Action(move="STAY")


def escape_tasks(policy: str, seeds: str, max_turns: int = 60) -> list[Any]:
    exp = Experiment.model_validate(
        {
            "name": "concurrent",
            "seeds": seeds,
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [7],
                    "max_turns": max_turns,
                    "policies": [policy],
                }
            ],
        }
    )
    return exp.tasks()


@pytest.mark.parametrize("executor", ["process", "ray"])
def test_workers_play_a_batch_concurrently(
    executor: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """workers=2, concurrency=4: 8 games in two batches of 4, each worker's 4 games at once (so
    more than one game's 3 agents are in flight together), recorded once each."""
    if executor == "ray":
        request.getfixturevalue("local_ray")
    folder = tmp_path / "inflight"
    folder.mkdir()
    policy = f"{THIS}:Overlap:folder={folder},delay=0.01"
    exp = Experiment.model_validate(
        {
            "name": "concurrent",
            "seeds": "0-7",
            "escape": [
                {"version": ESCAPE_VERSION, "sizes": [7], "max_turns": 15, "policies": [policy]}
            ],
        }
    )
    options = RunOptions(executor=executor, workers=2, concurrency=4, quiet=True, verify=True)
    result = run_experiment(exp, tmp_path / "run", options)
    assert all(r["status"] == "ok" for r in result.rows), [r["error"] for r in result.rows]
    assert result.verified_ok
    assert sorted(journal_keys(tmp_path / "run" / "games.sqlite")) == sorted(
        t.run_key for t in exp.tasks()
    )
    most = [int(f.read_text()) for f in folder.iterdir()]
    assert most and max(most) > 3, most  # several games' agents awaited together in a worker
    assert max(most) <= 4 * 3  # never more than the worker's concurrency


def test_async_batches_hold_at_least_concurrency_games() -> None:
    sizes: list[int] = []

    class Recording(ProcessExecutor):
        def _pool(self) -> Any:
            inner = _CountingPool()
            submit = inner.submit

            def record(fn: Any, batch: Any, *args: Any) -> Future[Any]:
                sizes.append(len(batch))
                return submit(fn, batch, *args)

            inner.submit = record  # type: ignore[method-assign]
            return inner

    tasks = escape_tasks(f"{HERE}:SlowAsync:delay=0.001", "0-19", max_turns=5)
    finished = list(Recording(workers=2, concurrency=8).run(tasks, None))
    assert sorted(f.task.run_key for f in finished) == sorted(t.run_key for t in tasks)
    assert sizes[:2] == [8, 8] and sum(sizes) == 20  # 16 at once over 2 workers, then the rest
    assert all(r.row["status"] == "ok" for r in finished)


def test_a_concurrent_batch_killed_mid_way_records_each_game_once_and_none_half(
    tmp_path: Path,
) -> None:
    """A worker dies while its batch of 8 concurrent games has finished some games (settled in
    its shard, not yet reported) and left the others half played: none of them counts, all are
    played again, and the run's journal holds every game exactly once, each complete."""
    marker = tmp_path / "killed"
    exp = Experiment.model_validate(
        {
            "name": "concurrent",
            "seeds": "0-15",
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [7],
                    "max_turns": 40,
                    "policies": [f"{THIS}:KillMidBatch:marker={marker},turn=3,after=2"],
                }
            ],
        }
    )
    options = RunOptions(executor="process", workers=2, concurrency=8, quiet=True, verify=True)
    result = run_experiment(exp, tmp_path / "run", options)
    assert marker.exists(), "no worker was killed: the test proves nothing"
    started, ended = map(int, marker.read_text().split())
    assert ended >= 2 and started - ended >= 2, (started, ended)  # finished and half games
    assert all(r["status"] == "ok" for r in result.rows), [r["error"] for r in result.rows]
    assert len(result.rows) == 16
    keys = journal_keys(tmp_path / "run" / "games.sqlite")
    assert sorted(keys) == sorted(t.run_key for t in exp.tasks())  # each game exactly once
    assert result.verified_ok
    with Journal(tmp_path / "run" / "games.sqlite", create=False) as journal:
        assert all(g.outcome is not None for g in journal.games())


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match="concurrency must be >= 1, got 0"):
        ProcessExecutor(workers=2, concurrency=0)


def test_unknown_executor() -> None:
    with pytest.raises(ValueError, match="unknown executor 'gpu'"):
        make_executor("gpu")


# --- Ray ----------------------------------------------------------------------------------------


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


def test_ray_gives_the_same_results(
    local_ray: Any, tmp_path: Path, inline_rows: list[dict[str, Any]]
) -> None:
    options = RunOptions(executor="ray", workers=2, quiet=True, verify=True)
    result = run_experiment(experiment(["explorer", "random"]), tmp_path / "run", options)
    assert comparable(result.rows) == inline_rows
    assert result.verified_ok
    assert sorted(journal_keys(tmp_path / "run" / "games.sqlite")) == sorted(
        r["run_key"] for r in inline_rows
    )


def test_ray_retries_a_game_whose_worker_died_and_records_it_once(
    local_ray: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "killed"
    exp = experiment([f"{HERE}:KillOnce:marker={marker},turn=3"])
    options = RunOptions(executor="ray", workers=2, quiet=True, verify=True)
    result = run_experiment(exp, tmp_path / "run", options)
    assert marker.exists(), "no worker was killed: the test proves nothing"
    assert all(r["status"] == "ok" for r in result.rows), [r["error"] for r in result.rows]
    keys = journal_keys(tmp_path / "run" / "games.sqlite")
    assert sorted(keys) == sorted(t.run_key for t in exp.tasks())
    assert result.verified_ok


def test_ray_sends_games_back_as_journal_rows_not_as_files(local_ray: Any, tmp_path: Path) -> None:
    """Ray's nodes need not see the run's folder: no game is left in a file there; each comes
    back with its journal rows (docs/cluster.md)."""
    from maze_envs.bench.ray_executor import RayExecutor

    shards = tmp_path / "shards"
    shards.mkdir()
    tasks = experiment(["explorer"], seeds="0-3").tasks()
    finished = list(RayExecutor(workers=2).run(tasks, shards))
    assert sorted(f.task.run_key for f in finished) == sorted(t.run_key for t in tasks)
    assert all(f.shard is None and f.rows is not None for f in finished)
    assert all(len(f.rows.turns) > 1 for f in finished if f.rows is not None)
    assert list(shards.iterdir()) == []


def test_ray_client_addresses_are_refused_with_the_way_to_go() -> None:
    """The driver must run on a node of the cluster (its files' actors live on its node)."""
    from maze_envs.bench.ray_executor import RayExecutor

    with pytest.raises(ValueError, match=r"Ray Client addresses are not supported.*HOST:PORT"):
        RayExecutor(address="ray://head:10001")


def test_ray_executor_counts_attempts_under_the_process_pools_name() -> None:
    """Both executors call the count ``max_attempts``; the Ray executor's former name
    ``max_retries`` still works, with a deprecation warning (issue 26)."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    from maze_envs.bench.ray_executor import RayExecutor

    assert RayExecutor(max_attempts=5).max_attempts == 5
    assert RayExecutor().max_attempts == ProcessExecutor().max_attempts
    with pytest.warns(DeprecationWarning, match="use max_attempts"):
        assert RayExecutor(max_retries=2).max_attempts == 2
    with pytest.raises(ValueError, match="max_attempts must be >= 1, got 0"):
        RayExecutor(max_attempts=0)
