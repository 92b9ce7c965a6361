"""Maze Escape throughput against MiniGrid, with and without the journal, in one run.

Measures, in interleaved timed windows (the median is reported, so one noisy window does not
decide the result):

* Maze Escape turns per second: 3 agents, 17x17, every optional observation feature on
  (``preset="full"``), 600-turn games, random moves with notebook edits and radio messages;
  once with the journal off and once with it on (a temporary SQLite file);
  the journal is measured as created by default (``durable=True``) and with ``durable=False``
  (no disk flush at WAL checkpoints; still safe against a killed process); the journal's writer
  process commits each turn while the game computes the next, and a journaled window ends with
  ``Journal.settle()``, so the last commit of a window is timed with it;
* MiniGrid-Empty-8x8-v0 steps per second through ``gymnasium.make``, random actions (the peer);

then the ratios against the goals (escape >= 3x MiniGrid; journal on >= 0.3x journal off) and the
peak memory of one 600-turn journaled game (measured in a fresh child process; the journal's
writer process is reported on its own).

Random actions are generated before the timed loops. Resets are inside them, for both games.

Usage: ``python benchmarks/escape_bench.py [--windows 7] [--turns 2000] [--json]``
(needs ``pip install 'maze-envs[peers]'`` for MiniGrid).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from maze_envs import maze_escape_v0
from maze_envs.journal import Journal

ESCAPE_CONFIG: dict[str, Any] = {
    "preset": "full",
    "width": 17,
    "height": 17,
    "num_agents": 3,
    "max_turns": 600,
}
GOAL_VS_MINIGRID = 3.0
GOAL_JOURNAL = 0.3
NOTES = ["left at the piano", "dead end", "N S E", "exit?", "back to tree", "→", "日本"]


def escape_actions(count: int, seed: int) -> list[dict[str, dict[str, Any]]]:
    """``count`` turns of random actions for agents A, B, C (splice notebooks)."""
    rng = np.random.default_rng(seed)
    turns = []
    for _ in range(count):
        actions = {}
        for agent in "ABC":
            roll = rng.random()
            if roll < 0.3:  # insert a note at the front
                edit = {"edit": 1, "start": 0, "end": 0, "text": str(rng.choice(NOTES))}
            elif roll < 0.4:  # delete the first 8 characters (rejected while shorter)
                edit = {"edit": 1, "start": 0, "end": 8, "text": ""}
            else:
                edit = {"edit": 0, "start": 0, "end": 0, "text": ""}
            radio = str(rng.choice(NOTES)) if rng.random() < 0.2 else ""
            actions[agent] = {"move": int(rng.integers(0, 5)), "notebook": edit, "radio": radio}
        turns.append(actions)
    return turns


class EscapeRunner:
    """Plays pre-generated turns, resetting whenever a game ends."""

    def __init__(self, actions: list[dict[str, dict[str, Any]]], journal: Journal | None) -> None:
        self.env = maze_escape_v0.parallel_env(journal=journal, **ESCAPE_CONFIG)
        self.journal = journal
        self.actions = actions
        self.cursor = 0
        self.games = 0
        self.env.reset(seed=0)

    def run(self, turns: int) -> float:
        """Play ``turns`` turns; return the seconds taken."""
        env, actions = self.env, self.actions
        start = time.perf_counter()
        for _ in range(turns):
            if not env.agents:
                self.games += 1
                env.reset(seed=self.games)
            env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
        if self.journal is not None:  # the last turn's commit belongs to this window
            self.journal.settle()
        return time.perf_counter() - start


class MiniGridRunner:
    def __init__(self, count: int, seed: int) -> None:
        import gymnasium
        import minigrid  # noqa: F401  (registers the MiniGrid environments)

        self.env = gymnasium.make("MiniGrid-Empty-8x8-v0")
        self.env.reset(seed=seed)
        n = int(self.env.action_space.n)
        self.actions = [int(a) for a in np.random.default_rng(seed).integers(0, n, size=count)]
        self.cursor = 0

    def run(self, steps: int) -> float:
        env, actions = self.env, self.actions
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
            if terminated or truncated:
                env.reset()
        return time.perf_counter() - start


def measure_rates(windows: int, turns: int) -> dict[str, float]:
    """Median rates over ``windows`` interleaved windows of ``turns`` turns/steps each."""
    actions = escape_actions(4096, seed=1)
    with tempfile.TemporaryDirectory() as folder:
        journal = Journal(Path(folder) / "bench.sqlite")
        fast_journal = Journal(Path(folder) / "fast.sqlite", durable=False)
        runners = {
            "escape_off": EscapeRunner(actions, None),
            "escape_on": EscapeRunner(actions, journal),
            "escape_on_not_durable": EscapeRunner(actions, fast_journal),
            "minigrid": MiniGridRunner(8192, seed=1),
        }
        for runner in runners.values():  # warm-up
            runner.run(max(turns // 10, 50))
        samples: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(windows):
            for name, runner in runners.items():
                samples[name].append(turns / runner.run(turns))
        journal.close()
        fast_journal.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def memory_of_one_game() -> dict[str, float]:
    """Peak memory of one 600-turn journaled game (run in a fresh process by ``main``)."""
    actions = escape_actions(600, seed=2)
    baseline_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.sqlite"
        tracemalloc.start()
        with Journal(path) as journal:
            env = maze_escape_v0.parallel_env(journal=journal, **ESCAPE_CONFIG)
            env.reset(seed=3)
            turns = 0
            while env.agents:
                env.step(actions[turns])
                turns += 1
            env.close()
            writer_rss = _writer_peak_rss_kib(journal)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "turns": turns,
        "writer_max_rss_mib": writer_rss / 1024 if writer_rss is not None else float("nan"),
        "tracemalloc_peak_mib": peak / 2**20,
        "max_rss_mib": rss / 1024,
        "rss_growth_mib": (rss - baseline_rss) / 1024,
        "journal_mib": size / 2**20,
    }


def _writer_peak_rss_kib(journal: Journal) -> int | None:
    """Peak RSS of the journal's writer process (Linux ``VmHWM``; None elsewhere)."""
    writer = getattr(journal, "_writer", None)  # a benchmark may look inside
    process = getattr(writer, "_process", None)
    if process is None:
        return None
    try:
        status = Path(f"/proc/{process.pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def _verdict(value: float, goal: float) -> str:
    return "met" if value >= goal else "NOT MET"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--windows", type=int, default=7, help="timed windows per measurement")
    parser.add_argument("--turns", type=int, default=2000, help="turns (steps) per window")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        print(json.dumps(memory_of_one_game()))
        return 0

    child = subprocess.run(
        [sys.executable, __file__, "--memory-child"], capture_output=True, text=True, check=True
    )
    memory = json.loads(child.stdout)
    rates = measure_rates(args.windows, args.turns)
    vs_minigrid = rates["escape_off"] / rates["minigrid"]
    journal_ratio = rates["escape_on"] / rates["escape_off"]
    fast_ratio = rates["escape_on_not_durable"] / rates["escape_off"]

    goals = [
        ("escape (journal off) / MiniGrid", vs_minigrid, GOAL_VS_MINIGRID),
        ("journal on / journal off", journal_ratio, GOAL_JOURNAL),
        ("  the same, durable=False", fast_ratio, GOAL_JOURNAL),
    ]
    lines = [
        "Maze Escape: 3 agents, 17x17, every optional feature on, 600-turn games,",
        "random moves with notebook edits and radio; median of "
        f"{args.windows} interleaved windows of {args.turns} turns",
        f"  Maze Escape, journal off   {rates['escape_off']:>9,.0f} turns/s",
        f"  Maze Escape, journal on    {rates['escape_on']:>9,.0f} turns/s",
        f"    the same, durable=False  {rates['escape_on_not_durable']:>9,.0f} turns/s",
        f"  MiniGrid-Empty-8x8-v0      {rates['minigrid']:>9,.0f} steps/s",
        "ratios",
        *(
            f"  {label:<32} {value:5.2f}x  goal >= {goal}x  {_verdict(value, goal)}"
            for label, value, goal in goals
        ),
        f"one {memory['turns']}-turn game with the journal (fresh process):",
        f"  tracemalloc peak {memory['tracemalloc_peak_mib']:.1f} MiB; "
        f"max RSS {memory['max_rss_mib']:.1f} MiB "
        f"(+{memory['rss_growth_mib']:.1f} MiB during the game); "
        f"journal file {memory['journal_mib']:.1f} MiB; "
        f"the journal's writer process: max RSS {memory['writer_max_rss_mib']:.1f} MiB",
    ]
    print("\n".join(lines))
    if args.json:
        ratios = {"vs_minigrid": vs_minigrid, "journal": journal_ratio, "fast": fast_ratio}
        print(json.dumps({"rates": rates, "ratios": ratios, "memory": memory}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
