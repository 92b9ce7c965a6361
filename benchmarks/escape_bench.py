"""Maze Escape throughput against MiniGrid, with and without the journal, in one run.

Measures, in interleaved timed windows:

* Maze Escape turns per second: 3 agents, 17x17, every optional observation feature on
  (``preset="full"``), 600-turn games, random moves with notebook edits and radio messages;
  once with the journal off and once with it on (a temporary SQLite file);
  the journal is measured as created by default (``durability="batch"``: group commit of 64
  turns or 0.2 s, in the game's own thread; the goal applies to it) and, for comparison, with
  ``durability="turn"`` (each turn committed before ``env.step`` returns; no goal); every
  window ends with ``settle()``, so it holds every commit of its turns;
* MiniGrid-Empty-8x8-v0 steps per second through ``gymnasium.make``, random actions (the peer);
* the typed ``Observation.from_space`` of observation-space samples (v1, the same 17x17 ``full``
  setup), as a fraction of a MiniGrid step: the goal of 5 us is 0.035 of the 143 us MiniGrid step
  of the quiet machine the goal was set on (issue 16); the microseconds are printed too.

Each round times one window of every runner back to back (the order rotates from round to
round), and the ratios against the goals (escape >= 4x MiniGrid; journal on >= 0.6x journal
off; from_space <= 0.035 MiniGrid steps) are computed *within* each round, so that a change of
the machine's load between rounds shifts both sides of a ratio alike; the run's ratio is the
median over its rounds (their range is printed too). Rates are medians over the windows. Then
the peak memory of one 600-turn journaled game (measured in a fresh child process).

Random actions are generated before the timed loops. Resets are inside them, for both games.

Usage: ``python benchmarks/escape_bench.py [--windows 7] [--turns 2000] [--json]``
(needs ``pip install 'maze-envs[peers]'`` for MiniGrid).
"""

from __future__ import annotations

import argparse
import json
import os
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
GOAL_VS_MINIGRID = 4.0
GOAL_JOURNAL = 0.6
#: from_space time / MiniGrid step time: 5 us against the 143 us MiniGrid step of a quiet run
GOAL_FROM_SPACE = 5.0 / 143.0
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
        self.cpu = 0.0  # CPU seconds of the last run
        self.env.reset(seed=0)

    def run(self, turns: int) -> float:
        """Play ``turns`` turns; return the seconds taken (the CPU seconds in ``self.cpu``)."""
        env, actions = self.env, self.actions
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(turns):
            if not env.agents:
                self.games += 1
                env.reset(seed=self.games)
            env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
        if self.journal is not None:  # commit the pending batch inside the window
            self.journal.settle()
        wall = time.perf_counter() - start
        self.cpu = time.process_time() - cpu
        return wall


class MiniGridRunner:
    def __init__(self, count: int, seed: int) -> None:
        import gymnasium
        import minigrid  # noqa: F401  (registers the MiniGrid environments)

        self.env = gymnasium.make("MiniGrid-Empty-8x8-v0")
        self.env.reset(seed=seed)
        n = int(self.env.action_space.n)  # type: ignore[attr-defined]
        self.actions = [int(a) for a in np.random.default_rng(seed).integers(0, n, size=count)]
        self.cursor = 0
        self.cpu = 0.0  # CPU seconds of the last run

    def run(self, steps: int) -> float:
        env, actions = self.env, self.actions
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
            if terminated or truncated:
                env.reset()
        wall = time.perf_counter() - start
        self.cpu = time.process_time() - cpu
        return wall


class FromSpaceRunner:
    """``Observation.from_space`` of pre-drawn observation-space samples (v1, 17x17 ``full``)."""

    def __init__(self, count: int, seed: int) -> None:
        from maze_envs import maze_escape_v1
        from maze_envs.escape.types import Observation

        env = maze_escape_v1.parallel_env(**ESCAPE_CONFIG)
        space = env.observation_space("A")
        space.seed(seed)
        self.samples = [space.sample() for _ in range(count)]
        self.config, self.convert = env.config, Observation.from_space
        self.cursor = 0
        self.cpu = 0.0

    def run(self, calls: int) -> float:
        samples, config, convert, n = self.samples, self.config, self.convert, len(self.samples)
        cpu, start = time.process_time(), time.perf_counter()
        for i in range(self.cursor, self.cursor + calls):
            convert(samples[i % n], config, "A")
        self.cursor += calls
        wall = time.perf_counter() - start
        self.cpu = time.process_time() - cpu
        return wall


def fresh_copy(obs: Any) -> Any:
    """A copy of an observation dict that shares nothing with it: every nested dict and array
    copied (the least a fresh typed observation of the same values must do)."""
    if type(obs) is dict:
        return {key: fresh_copy(value) for key, value in obs.items()}
    if type(obs) is np.ndarray:
        return obs.copy()
    return obs


class DictCopyRunner(FromSpaceRunner):
    """:func:`fresh_copy` of the same samples: the peer of ``Observation.from_space``."""

    def run(self, calls: int) -> float:
        samples, n = self.samples, len(self.samples)
        cpu, start = time.process_time(), time.perf_counter()
        for i in range(self.cursor, self.cursor + calls):
            fresh_copy(samples[i % n])
        self.cursor += calls
        wall = time.perf_counter() - start
        self.cpu = time.process_time() - cpu
        return wall


RATIOS: dict[str, tuple[str, str]] = {  # name: (numerator runner, denominator runner)
    "vs_minigrid": ("escape_off", "minigrid"),
    "journal": ("escape_on", "escape_off"),
    "strict": ("escape_on_turn", "escape_off"),
    # a rate ratio: MiniGrid steps per from_space call's time (lower is faster)
    "from_space": ("minigrid", "from_space"),
}


def measure(
    windows: int, turns: int
) -> tuple[dict[str, float], dict[str, list[float]], dict[str, list[float]]]:
    """Median rates over ``windows`` rounds of ``turns`` turns/steps per runner, the per-round
    ratios (see :data:`RATIOS`), each computed from the windows of one round, and the same
    ratios of CPU time (process time: what the machine's other jobs cannot inflate)."""
    actions = escape_actions(4096, seed=1)
    with tempfile.TemporaryDirectory() as folder:
        journal = Journal(Path(folder) / "bench.sqlite")
        strict_journal = Journal(Path(folder) / "strict.sqlite", durability="turn")
        runners: dict[str, EscapeRunner | MiniGridRunner | FromSpaceRunner] = {
            "escape_off": EscapeRunner(actions, None),
            "escape_on": EscapeRunner(actions, journal),
            "escape_on_turn": EscapeRunner(actions, strict_journal),
            "minigrid": MiniGridRunner(8192, seed=1),
            "from_space": FromSpaceRunner(1000, seed=1),
        }
        for runner in runners.values():  # warm-up
            runner.run(max(turns // 10, 50))
        names = list(runners)
        samples: dict[str, list[float]] = {name: [] for name in runners}
        ratios: dict[str, list[float]] = {name: [] for name in RATIOS}
        cpu_ratios: dict[str, list[float]] = {name: [] for name in RATIOS}
        for round_ in range(windows):
            rates: dict[str, float] = {}
            cpu_rates: dict[str, float] = {}
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                rates[name] = turns / runners[name].run(turns)
                cpu_rates[name] = turns / max(runners[name].cpu, 1e-9)
                samples[name].append(rates[name])
            for ratio, (top, bottom) in RATIOS.items():
                ratios[ratio].append(rates[top] / rates[bottom])
                cpu_ratios[ratio].append(cpu_rates[top] / cpu_rates[bottom])
        journal.close()
        strict_journal.close()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return medians, ratios, cpu_ratios


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
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "turns": turns,
        "tracemalloc_peak_mib": peak / 2**20,
        "max_rss_mib": rss / 1024,
        "rss_growth_mib": (rss - baseline_rss) / 1024,
        "journal_mib": size / 2**20,
    }


def _verdict(value: float, goal: float | None, at_most: bool = False) -> str:
    if goal is None:
        return "(no goal)      "
    if at_most:
        return f"goal <= {goal:.3f}  {'met' if value <= goal else 'NOT MET'}"
    return f"goal >= {goal}x  {'met' if value >= goal else 'NOT MET'}"


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
    load_before = os.getloadavg()[0]
    rates, per_round, per_round_cpu = measure(args.windows, args.turns)
    load_after = os.getloadavg()[0]
    ratios = {name: statistics.median(values) for name, values in per_round.items()}
    cpu = {name: statistics.median(values) for name, values in per_round_cpu.items()}
    goals: list[tuple[str, str, float | None]] = [
        ("escape (journal off) / MiniGrid", "vs_minigrid", GOAL_VS_MINIGRID),
        ("journal on / journal off", "journal", GOAL_JOURNAL),
        ('  durability="turn" (no goal)', "strict", None),
    ]
    from_space = per_round["from_space"]
    from_space_cpu = statistics.median(per_round_cpu["from_space"])
    lines = [
        "Maze Escape: 3 agents, 17x17, every optional feature on, 600-turn games,",
        f"random moves with notebook edits and radio; {args.windows} rounds of interleaved "
        f"windows of {args.turns} turns; load average {load_before:.2f} -> {load_after:.2f}",
        f"  Maze Escape, journal off   {rates['escape_off']:>9,.0f} turns/s",
        f"  Maze Escape, journal on    {rates['escape_on']:>9,.0f} turns/s",
        f'    durability="turn"       {rates["escape_on_turn"]:>9,.0f} turns/s',
        f"  MiniGrid-Empty-8x8-v0      {rates['minigrid']:>9,.0f} steps/s",
        f"  Observation.from_space     {1e6 / rates['from_space']:>9.2f} us",
        "ratios (median of the rounds' ratios; range of the rounds)",
        *(
            f"  {label:<32} {ratios[key]:5.2f}x  {_verdict(ratios[key], goal)}"
            f"  (rounds {min(per_round[key]):.2f}-{max(per_round[key]):.2f}x)"
            for label, key, goal in goals
        ),
        f"  {'from_space / MiniGrid step':<32} {ratios['from_space']:.3f}   "
        f"{_verdict(ratios['from_space'], GOAL_FROM_SPACE, at_most=True)}"
        f"  (rounds {min(from_space):.3f}-{max(from_space):.3f}; "
        f"{ratios['from_space'] * 143:.1f} us at the quiet 143 us MiniGrid step)",
        "the same ratios of CPU time (process time; no goal, for a machine shared with others)",
        *(f"  {label:<32} {cpu[key]:5.2f}x" for label, key, _ in goals),
        f"  {'from_space / MiniGrid step':<32} {from_space_cpu:.3f}",
        f"one {memory['turns']}-turn game with the journal (fresh process):",
        f"  tracemalloc peak {memory['tracemalloc_peak_mib']:.1f} MiB; "
        f"max RSS {memory['max_rss_mib']:.1f} MiB "
        f"(+{memory['rss_growth_mib']:.1f} MiB during the game); "
        f"journal file {memory['journal_mib']:.1f} MiB",
    ]
    print("\n".join(lines))
    if args.json:
        print(
            json.dumps(
                {
                    "rates": rates,
                    "ratios": ratios,
                    "rounds": per_round,
                    "cpu_ratios": cpu,
                    "memory": memory,
                    "load": [load_before, load_after],
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
