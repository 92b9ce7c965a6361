"""Process pool and Ray executors: the same results as in-process, worker deaths, no duplicates."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from maze_envs.bench.executors import ProcessExecutor, make_executor
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal
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


def test_back_pressure_keeps_at_most_two_games_per_worker_in_flight() -> None:
    pool = _CountingPool()

    class Counted(ProcessExecutor):
        def _pool(self) -> Any:
            return pool

    tasks = [t for t in experiment(["explorer"], seeds="0-19").tasks() if t.case.kind == "escape"]
    finished = list(Counted(workers=2).run(tasks, None))
    assert sorted(f.task.run_key for f in finished) == sorted(t.run_key for t in tasks)
    assert pool.most == 4


def test_results_come_in_completion_order() -> None:
    slow = Experiment.model_validate(
        {
            "seeds": "0",
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "preset": "navigator",
                    "sizes": [17],
                    "policies": ["random"],
                }
            ],
        }
    ).tasks()
    fast = [t for t in experiment(["oracle"], seeds="0-3").tasks() if t.case.kind == "escape"]
    order = [f.task.run_key for f in ProcessExecutor(workers=2).run([*slow, *fast], None)]
    assert order[-1] == slow[0].run_key  # 600 turns of random walk finish last
    assert sorted(order) == sorted(t.run_key for t in [*slow, *fast])


def test_unknown_executor() -> None:
    with pytest.raises(ValueError, match="unknown executor 'gpu'"):
        make_executor("gpu")


# --- Ray ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
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
