"""What the journal-on / journal-off goal of issue 30 leaves a writer, against what writing costs.

The goal ``journal on / off >= 0.6x`` allows the writer ``1/0.6 - 1 = 0.667`` of a journal-off
turn. This script measures, for each workload of ``journal_bench.py`` (Maze Escape, 3 agents,
17x17), in one run:

* the journal-off turn and the journaled turn (default ``durability="batch"``, change hints on),
  as medians over rounds that time both back to back (:class:`journal_bench.EscapeRunner`), and
  so the writer's budget and its cost today;
* on the same played turns (observations, actions and hints captured from a game), the writer's
  parts: the schema-5 encoding of the observations (:class:`~maze_envs.journal.delta.DeltaWriter`
  with the hints) and the compression of the turn (:class:`~maze_envs.journal.body.BodyPacker`);
* the floors of any writer that reads the observations in Python: one ``orjson`` call on the
  turn's observations (C, no delta: the least a writer must do to capture what each agent saw),
  and that whole JSON compressed in a stream against the previous turns (zlib level 1, and zstd
  level 3 with a 1 MiB window when the ``zstandard`` package is installed; it is not a
  dependency), with the bytes per turn each stores (the goal: <= 160 with two 32-byte hashes).

Usage: ``python benchmarks/journal_floor.py [--rounds 5] [--turns 1500]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import journal_bench

from maze_envs.journal import Journal
from maze_envs.journal.body import BodyPacker
from maze_envs.journal.delta import DeltaWriter
from maze_envs.journal.format import encode_received

GOAL_RATIO = journal_bench.GOAL_JOURNAL_RATIO
HASH_BYTES = 64  # two 32-byte hashes a turn (the library's default)
_NUMPY = orjson.OPT_SERIALIZE_NUMPY


def played_turns(workload: str, count: int) -> list[tuple[Any, Any, Any]]:
    """(observations, actions, change hint) of ``count`` turns of one game of ``workload``."""
    make, config, actions = journal_bench.WORKLOADS[workload]
    env = make(**config)
    env.reset(seed=3)
    rows = []
    for turn in actions(count, 1):
        if not env.agents:
            break
        observations = env.step(turn)[0]
        rows.append((observations, turn, env.unwrapped._observer.changes(env.unwrapped._state)))
    env.close()
    return rows


def per_turn(rows: list[Any], work: Callable[[], list[bytes]]) -> tuple[float, float]:
    """(microseconds per turn of ``work``, bytes per turn it returns); best of three passes."""
    best, out = float("inf"), []
    for _ in range(3):
        start = time.perf_counter()
        out = work()
        best = min(best, time.perf_counter() - start)
    return best / len(rows) * 1e6, sum(map(len, out)) / len(rows)


def writer_parts(rows: list[Any]) -> dict[str, tuple[float, float]]:
    """Per-turn (microseconds, bytes) of the schema-5 writer's parts and of the floors."""
    actions = [encode_received(turn) for _, turn, _ in rows]
    whole = [orjson.dumps(observations, option=_NUMPY) for observations, _, _ in rows]

    def encode() -> list[bytes]:
        writer = DeltaWriter(check_hints=False)
        return [writer.encode(o, hint, turn) for o, turn, hint in rows]

    items = encode()

    def pack(payloads: list[bytes], level: int | None = None) -> Callable[[], list[bytes]]:
        def run() -> list[bytes]:
            if level is None:
                packer = BodyPacker()
                return [packer.pack((a, p, b"{}", b"{}")) for a, p in zip(actions, payloads)]  # noqa: B905
            stream = zlib.compressobj(level, zlib.DEFLATED, -15)
            return [
                stream.compress(b"\0".join((a, p, b"{}", b"{}")))
                + stream.flush(zlib.Z_SYNC_FLUSH)[:-4]
                for a, p in zip(actions, payloads)  # noqa: B905
            ]

        return run

    parts = {
        "schema 5: encode the observations (hints)": per_turn(rows, encode),
        "schema 5: compress the turn (deflate 8)": per_turn(rows, pack(items)),
        "floor: orjson of the observations": per_turn(
            rows, lambda: [orjson.dumps(o, option=_NUMPY) for o, _, _ in rows]
        ),
        "floor: that JSON, deflate 1 stream": per_turn(rows, pack(whole, 1)),
    }
    try:
        import zstandard
    except ImportError:
        return parts
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=20)

    def zstd() -> list[bytes]:
        stream = zstandard.ZstdCompressor(compression_params=params).compressobj()
        flush = zstandard.COMPRESSOBJ_FLUSH_BLOCK
        return [
            stream.compress(b"\0".join((a, p, b"{}", b"{}"))) + stream.flush(flush)
            for a, p in zip(actions, whole)  # noqa: B905
        ]

    parts["floor: that JSON, zstd 3 stream"] = per_turn(rows, zstd)
    return parts


def turn_times(workload: str, rounds: int, turns: int, folder: Path) -> tuple[float, float]:
    """Median microseconds of a journal-off and a journaled turn over ``rounds`` rounds."""
    journal = Journal(folder / f"{workload.replace(',', '').replace(' ', '-')}.sqlite")
    off = journal_bench.EscapeRunner(workload, None)
    on = journal_bench.EscapeRunner(workload, journal)
    off.run(turns // 5)
    on.run(turns // 5)
    times: dict[str, list[float]] = {"off": [], "on": []}
    for round_ in range(rounds):
        pair = (("off", off), ("on", on)) if round_ % 2 == 0 else (("on", on), ("off", off))
        for name, runner in pair:
            times[name].append(runner.run(turns) / turns * 1e6)
    off.close()
    on.close()
    journal.close()
    return statistics.median(times["off"]), statistics.median(times["on"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=1500)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.turns < 10:
        parser.error("--rounds must be >= 1 and --turns >= 10")
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds of {args.turns} turns")
    with tempfile.TemporaryDirectory() as folder:
        for workload in journal_bench.WORKLOADS:
            off, on = turn_times(workload, args.rounds, args.turns, Path(folder))
            budget = (1 / GOAL_RATIO - 1) * off
            ratio = off / on
            print(f"\n{workload}: journal off {off:.1f} us a turn, on {on:.1f} us ({ratio:.2f}x)")
            print(f"  the writer's budget at {GOAL_RATIO}x: {budget:.1f} us; now {on - off:.1f} us")
            for name, (micros, size) in writer_parts(played_turns(workload, 600)).items():
                compressed = "compress" in name or "stream" in name
                stored = f"{size + HASH_BYTES:6.0f} B a turn with hashes" if compressed else ""
                print(f"  {name:44s} {micros:7.1f} us  {stored}")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
