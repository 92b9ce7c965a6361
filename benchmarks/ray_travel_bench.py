"""The driver's cost per game of Ray's object-store path against the process pool's shards.

On Ray the workers return each finished game's journal rows through the object store
(:mod:`maze_envs.bench.travel`); in the process pool they leave them in a shard journal on the
shared disk, which the driver reads. Either way the driver stores each game with the runner's
one store function (``runner._Merger``: :meth:`Journal.add_stored_game` and the row). This script
measures what the driver spends per game on each path:

* **object store**: ``ray.get`` of a batch's results (rows, and each game's ``StoredGame``) and
  storing its games;
* **shards**: ``ray.get`` of a batch's results (rows and the shard's path) and storing its games,
  read from the shard journal the worker wrote.

The games (``--games``, default 1,000 AGI Maze TRAINING oracle games, journaled) are played once
per path by Ray tasks on a local cluster (``--workers``, default 2), in batches of 32, through
the executors' worker entry point (``workers.play_batch``); then, with every worker idle, the
driver's part is timed alone, in rounds that alternate the two paths (each round stores every
game into a fresh run journal). Reported: the median and range over rounds of the driver's
microseconds per game (process CPU time, all threads, and wall time), their ratio (goal: object
store <= 1.2x shards), the split between receiving and storing, the bytes of rows per game that
travel, and the load average. On one machine the objects are in the node's own shared memory; a
remote node adds the network transfer of those bytes.

Usage: ``python benchmarks/ray_travel_bench.py [--games N] [--rounds N] [--workers N] [--json]``
(needs ``pip install 'maze-envs[ray]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from maze_envs.bench.dispatch import MAX_BATCH
from maze_envs.bench.rowstore import RowStore
from maze_envs.bench.runner import _Merger
from maze_envs.bench.spec import Experiment, GameTask
from maze_envs.bench.travel import DriverLink, RunServices
from maze_envs.bench.workers import BatchJob, as_finished, play_batch
from maze_envs.journal import Journal


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def oracle_tasks(count: int) -> list[GameTask]:
    """``count`` AGI Maze TRAINING oracle games (bundles x seeds, in order)."""
    seeds = 1
    while True:
        experiment = Experiment.model_validate(
            {
                "name": "ray-travel",
                "seeds": f"0-{seeds - 1}",
                "agimaze": [{"packs": ["TRAINING"], "policies": ["oracle"]}],
            }
        )
        tasks = experiment.tasks()
        if len(tasks) >= count:
            return tasks[:count]
        seeds *= 2


def play(ray: Any, remote: Any, tasks: list[GameTask], path: str, folder: Path) -> list[Any]:
    """Play every game once by Ray tasks (batches of 32); the batches' result references."""
    services = None
    if path == "object store":
        services = ray.remote(num_cpus=0)(RunServices).remote()
        link = DriverLink(services, os.getcwd(), record=True)
    refs = []
    for number, start in enumerate(range(0, len(tasks), MAX_BATCH)):
        batch = tasks[start : start + MAX_BATCH]
        if path == "object store":
            refs.append(remote.remote(batch, None, 1, BatchJob(number, driver=link)))
        else:
            refs.append(remote.remote(batch, str(folder), 1, BatchJob(number)))
    ray.wait(refs, num_returns=len(refs))
    return refs


def store_all(
    ray: Any, refs: list[Any], tasks: list[GameTask], folder: Path
) -> tuple[float, float, float]:
    """The driver's part, timed: receive each batch and store its games in a new run journal.
    Returns (CPU s, wall s, of which CPU s receiving)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    journal = Journal(folder / "games.sqlite")
    store = RowStore(folder / "rows.jsonl")
    merger = _Merger(journal, store, set(), {})
    batches = [tasks[start : start + MAX_BATCH] for start in range(0, len(tasks), MAX_BATCH)]
    receiving = 0.0
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        for ref, batch in zip(refs, batches, strict=True):
            before = time.process_time()
            results = ray.get(ref)
            receiving += time.process_time() - before
            for finished in as_finished(batch, results):
                merger.add(finished)
        journal.settle()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        merger.close()
        store.close()
        journal.close()
    with Journal(folder / "games.sqlite", readonly=True) as check:
        stored = len(check.game_ids())
    if stored != len(tasks):
        raise RuntimeError(f"{stored} games stored of {len(tasks)}")
    return cpu, wall, receiving


def rows_bytes(ray: Any, refs: list[Any]) -> float:
    """Mean pickled bytes of a game's journal rows on the object-store path."""
    sizes = [len(pickle.dumps(rows)) for ref in refs for _, _, _, rows in ray.get(ref) if rows]
    return statistics.fmean(sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    import ray

    print(f"start: {load()}")
    tasks = oracle_tasks(args.games)
    base = Path(tempfile.mkdtemp(prefix="ray-travel-"))
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(play_batch)
        shards = base / "shards"
        shards.mkdir()
        played = time.perf_counter()
        refs = {
            "shards": play(ray, remote, tasks, "shards", shards),
            "object store": play(ray, remote, tasks, "object store", shards),
        }
        print(f"played {len(tasks)} games per path in {time.perf_counter() - played:.1f} s")
        figures: dict[str, list[tuple[float, float, float]]] = {path: [] for path in refs}
        for round_ in range(args.rounds):
            order = list(refs) if round_ % 2 == 0 else list(reversed(refs))
            for path in order:
                figures[path].append(store_all(ray, refs[path], tasks, base / "run"))
        per_game = 1e6 / len(tasks)
        summary: dict[str, Any] = {
            "games": len(tasks),
            "rounds": args.rounds,
            "workers": args.workers,
            "rows_bytes_per_game": rows_bytes(ray, refs["object store"]),
        }
        print(f"\ndriver's cost per game, {len(tasks)} AGI Maze TRAINING oracle games, journaled")
        print(f"({args.rounds} rounds, the paths alternating; median [min - max]; {load()})\n")
        print("| path | CPU us/game | wall us/game | receiving (CPU us) | storing (CPU us) |")
        print("|---|---|---|---|---|")
        for path, rounds in figures.items():
            cpu = [c * per_game for c, _, _ in rounds]
            wall = [w * per_game for _, w, _ in rounds]
            receive = [r * per_game for _, _, r in rounds]
            store = [(c - r) * per_game for c, _, r in rounds]
            summary[path] = {
                "cpu_us": statistics.median(cpu),
                "wall_us": statistics.median(wall),
                "receive_us": statistics.median(receive),
                "store_us": statistics.median(store),
            }
            print(
                f"| {path} | {statistics.median(cpu):.0f} [{min(cpu):.0f} - {max(cpu):.0f}] | "
                f"{statistics.median(wall):.0f} [{min(wall):.0f} - {max(wall):.0f}] | "
                f"{statistics.median(receive):.0f} | {statistics.median(store):.0f} |"
            )
        ratios = [
            o[0] / s[0] for o, s in zip(figures["object store"], figures["shards"], strict=True)
        ]
        walls = [
            o[1] / s[1] for o, s in zip(figures["object store"], figures["shards"], strict=True)
        ]
        summary["ratio_cpu"] = statistics.median(ratios)
        summary["ratio_wall"] = statistics.median(walls)
        print(
            f"\nobject store / shards, per round: CPU {statistics.median(ratios):.2f}x "
            f"[{min(ratios):.2f} - {max(ratios):.2f}], wall {statistics.median(walls):.2f}x "
            f"[{min(walls):.2f} - {max(walls):.2f}] (goal <= 1.2x); rows sent per game: "
            f"{summary['rows_bytes_per_game'] / 1024:.1f} KiB pickled"
        )
        summary["load_end"] = os.getloadavg()
        print(f"end: {load()}")
        if args.json:
            print(json.dumps(summary, indent=2))
    finally:
        ray.shutdown()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
