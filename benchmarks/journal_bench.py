"""The journal's costs, in one run: per turn, per environment, for verify, and blob savings.

* Maze Escape rows (3 agents, 17x17, every optional feature, random moves with notebook edits
  and radio, as in ``escape_bench.py``), recorded from a pre-played game: microseconds per turn
  for encoding, hashing and the commit (``record_turn`` in full, and its parts), with group
  commit (``durability="batch"``, the default) and with a commit per turn (``"turn"``);
* AGI Maze steps per second with the journal off and on (random actions on a TRAINING bundle),
  and their ratio (no goal is set: an engine step costs a few microseconds, so the journal's
  per-turn commit dominates);
* ``maze-envs verify`` replay speed, turns per second, for both environments;
* blobs: bytes stored per decision record that carries a 4 KiB prompt prefix, with and without
  :class:`~maze_envs.journal.Blob`.

Medians of interleaved windows; the machine's load average is printed with the figures.
Usage: ``python benchmarks/journal_bench.py [--windows 5] [--turns 1500]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import escape_bench  # the same Maze Escape setup as the step-rate benchmark

from maze_envs import maze_escape_v0
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.journal import Blob, Journal
from maze_envs.journal.blobs import encode_decisions
from maze_envs.journal.format import (
    chain_record_hash,
    encode_json_bytes,
    encode_received,
)
from maze_envs.verify import verify_journal

AGIMAZE_BUNDLE = "TRAINING/S0-keys/STAGE-01/0005.json"


def escape_rows(count: int) -> list[tuple[Any, Any, Any, bytes]]:
    """(observations, actions, events, digest) of ``count`` played Maze Escape turns."""
    actions = escape_bench.escape_actions(count, seed=1)
    env = maze_escape_v0.parallel_env(**escape_bench.ESCAPE_CONFIG)
    env.reset(seed=0)
    rows = []
    for index, turn in enumerate(actions):
        if not env.agents:
            env.reset(seed=index)
        observations, _, _, _, infos = env.step(turn)
        events = {agent: info["events"] for agent, info in infos.items()}
        rows.append((observations, turn, events, env.state_digest()))
    return rows


def per_turn_costs(rows: list[tuple[Any, Any, Any, bytes]], folder: Path) -> dict[str, float]:
    """Microseconds per Maze Escape turn: encoding, hashing, and ``record_turn`` in full."""

    def timed(work: Callable[[], object]) -> float:
        work()  # warm-up: the first pass pays for allocating the results' memory
        start = time.perf_counter()
        work()
        return (time.perf_counter() - start) / len(rows) * 1e6

    encoded = [
        (encode_json_bytes(o), encode_received(a), encode_json_bytes(e)) for o, a, e, _ in rows
    ]
    costs = {
        "encode": timed(
            lambda: [
                (encode_json_bytes(o), encode_received(a), encode_json_bytes(e))
                for o, a, e, _ in rows
            ]
        ),
        "hash": timed(
            lambda: [chain_record_hash(bytes(32), "0" * 64, o, a, e, b"{}") for o, a, e in encoded]
        ),
    }
    for durability, key in (("batch", "record_turn"), ("turn", 'the same, durability="turn"')):
        with Journal(folder / f"{durability}.sqlite", durability=durability) as journal:

            def record(journal: Journal = journal) -> None:
                game = journal.start_game(env_id="bench", config={}, seed=0, library_version="b")
                for turn, (o, a, e, digest) in enumerate(rows):
                    journal.record_turn(
                        game, turn, observations=o, actions=a, events=e, state_digest=digest
                    )
                journal.flush()  # the last batch's commit is part of the cost

            costs[key] = timed(record)
    costs["commit and the rest"] = costs["record_turn"] - costs["encode"] - costs["hash"]
    costs["row_bytes"] = sum(len(o) + len(a) + len(e) for o, a, e in encoded) / len(encoded)
    return costs


class AgiMazeRunner:
    """Random actions on one bundle, resetting at each episode's end."""

    def __init__(self, journal: Journal | None) -> None:
        self.env = AgiMazeEnv(path=AGIMAZE_BUNDLE, journal=journal)
        self.env.reset(seed=0)
        self.actions = [int(a) for a in np.random.default_rng(0).integers(0, 4, size=8192)]
        self.cursor = 0
        self.games = 0

    def run(self, steps: int) -> float:
        env, actions = self.env, self.actions
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
            if terminated or truncated:
                self.games += 1
                env.reset(seed=self.games)
        return time.perf_counter() - start


def agimaze_rates(windows: int, steps: int, folder: Path) -> dict[str, float]:
    journal = Journal(folder / "agimaze.sqlite")
    runners = {"off": AgiMazeRunner(None), "on": AgiMazeRunner(journal)}
    for runner in runners.values():
        runner.run(200)
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(windows):
        for name, runner in runners.items():
            samples[name].append(steps / runner.run(steps))
    for runner in runners.values():
        runner.env.close()
    journal.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def verify_rates(folder: Path, turns: int) -> dict[str, float]:
    """Turns per second that ``verify`` replays, for a journal of each environment."""
    rates = {}
    escape_path = folder / "verify-escape.sqlite"
    runner = escape_bench.EscapeRunner(escape_bench.escape_actions(turns, seed=2), None)
    runner.env = maze_escape_v0.parallel_env(journal=escape_path, **escape_bench.ESCAPE_CONFIG)
    runner.env.reset(seed=0)
    runner.run(turns)
    runner.env.close()
    agimaze_path = folder / "verify-agimaze.sqlite"
    agimaze = AgiMazeRunner(None)
    agimaze.env = AgiMazeEnv(path=AGIMAZE_BUNDLE, journal=agimaze_path)
    agimaze.env.reset(seed=0)
    agimaze.run(turns)
    agimaze.env.close()
    for name, path in (("Maze Escape", escape_path), ("AGI Maze", agimaze_path)):
        start = time.perf_counter()
        reports = verify_journal(path)
        elapsed = time.perf_counter() - start
        assert all(r.ok for r in reports), [r.describe() for r in reports if not r.ok]
        rates[name] = sum(r.turns_verified for r in reports) / elapsed
    return rates


def blob_savings(decisions: int) -> dict[str, float]:
    prefix = "You are agent A in a maze. Here are the rules. " * 85  # ~4 KiB
    plain = inline = 0
    stored_once: set[str] = set()
    for turn in range(decisions):
        record = {"A": {"prompt": [prefix, f"turn {turn}: what now?"], "reply": "E"}}
        plain += len(encode_decisions(record)[0])
        blobbed = {"A": {"prompt": [Blob(prefix), f"turn {turn}: what now?"], "reply": "E"}}
        text, blobs = encode_decisions(blobbed)
        inline += len(text) + sum(len(t) for k, t in blobs.items() if k not in stored_once)
        stored_once.update(blobs)
    return {"plain": plain / decisions, "with_blob": inline / decisions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--windows", type=int, default=5, help="timed windows per measurement")
    parser.add_argument("--turns", type=int, default=1500, help="turns (steps) per window")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        costs = per_turn_costs(escape_rows(3000), folder)
        rates = agimaze_rates(args.windows, args.turns, folder)
        replay = verify_rates(folder, 3000)
    blobs = blob_savings(200)
    lines = [
        f"load average {load:.2f} (1 min) at the start, {os.getloadavg()[0]:.2f} at the end",
        "Maze Escape journal, per turn (3 agents, 17x17, preset full; "
        f"{costs['row_bytes']:,.0f} bytes of JSON per row):",
        *(
            f"  {part:<28} {costs[part]:7.1f} us"
            for part in (
                "encode",
                "hash",
                "commit and the rest",
                "record_turn",
                'the same, durability="turn"',
            )
        ),
        f"AGI Maze ({AGIMAZE_BUNDLE}, random actions), median of {args.windows} windows:",
        f"  journal off            {rates['off']:>9,.0f} steps/s",
        f"  journal on             {rates['on']:>9,.0f} steps/s"
        f"  ({rates['on'] / rates['off']:.2f}x)",
        "maze-envs verify (replay):",
        *(f"  {name:<22} {rate:>9,.0f} turns/s" for name, rate in replay.items()),
        "a decision record with a 4 KiB prompt prefix, bytes stored per decision:",
        f"  inline text            {blobs['plain']:>9,.0f}",
        f"  prefix as a Blob       {blobs['with_blob']:>9,.0f}",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
