"""The batched engine (``maze_escape_v1.vector_env``) against the scalar env, in one run.

Measures, on one core (the process pins itself to one CPU where the system allows it, and numpy's
thread pools are held to one thread):

* **agent-steps per second** (one agent of one game, one turn) at automatic-reset steady state,
  random moves, numeric observations: the batched engine with 4,096 games, and the scalar env
  (``maze_escape_v1.parallel_env`` + ``EscapeNumericObservation(flatten=True)``, move-only
  actions) in interleaved windows of the same run, for two setups:
  ``main``: 7x7, 3 agents, the default preset (``sparse``, 120 turns);
  ``full``: 17x17, 3 agents, ``preset="full"`` (trail 30, used exits, meeting alert) with
  ``radio_symbols=4`` (random symbols too);
  the batched-to-scalar ratio is computed inside each round (a change of the machine's load
  between rounds moves both sides alike) and its median is reported; rates and ratios are given
  in wall time and in CPU (process) time, which other jobs on the machine cannot inflate;
* **steady state**: the batched engine starts every game at once, so before timing it runs
  ``3 * max_turns`` steps and each timed window is ``max_turns`` steps long (a window holds one
  whole cycle of the games' endings); the scalar windows include their resets too;
* **reset share**: the time the batched step spends starting new games (drawing boards, mazes
  from the Wilson stream included, and writing their first observations), as a share of the
  whole step time, over the timed windows;
* **memory per game** (``main`` setup): the bytes held by a vector env of 8,192 games minus one
  of 1,024, per extra game, measured with ``tracemalloc`` after a reset and 200 steps (the
  random actions fed to it are made before, so they are not counted);
* **the scaling curve**: batched agent-steps per second for N = 1, 4, 16 ... 16,384 games;
* ``--profile``: cProfile's top entries of a batched window of each setup.

The load average is printed at the start and the end. Usage:
``python benchmarks/batch_bench.py [--rounds 3] [--scalar-seconds 2] [--profile] [--json]``.
"""

from __future__ import annotations

import os

# one thread for numpy's pools (set before numpy is imported)
for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import gc  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from maze_envs import maze_escape_v1  # noqa: E402
from maze_envs.escape.batch.vector import MazeEscapeVectorEnv  # noqa: E402
from wrappers.escape_numeric import EscapeNumericObservation  # noqa: E402

SETUPS: dict[str, dict[str, Any]] = {
    "main": {"width": 7, "height": 7, "num_agents": 3},
    "full": {"preset": "full", "width": 17, "height": 17, "num_agents": 3, "radio_symbols": 4},
}
GAMES = 4096
#: (setup, agent-steps/s floor, ratio floor)
GOALS = {"main": (3_000_000, 100.0), "full": (1_000_000, 50.0)}
GOAL_MEMORY = 4096  # bytes per game
GOAL_RESET_SHARE = 0.20
SCALING = (1, 4, 16, 64, 256, 1024, 4096, 16384)
_ACTION_SETS = 16


def pin_to_one_cpu() -> str:
    """Pin this process to one CPU (the last it may use); say what was done."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity here)"
    try:
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    except OSError as error:
        return f"not pinned ({error})"
    return f"pinned to CPU {cpu}"


class Clock:
    """Wall and CPU time of a span."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu


# --- the batched engine ------------------------------------------------------------------------
def batched_actions(vec: MazeEscapeVectorEnv, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    symbols = vec.config.radio_symbols
    sets = []
    for _ in range(_ACTION_SETS):
        moves = rng.integers(0, 5, vec.num_envs)
        if symbols:
            sent = rng.integers(0, symbols + 1, vec.num_envs) * (rng.random(vec.num_envs) < 0.3)
            sets.append(np.stack([moves, sent], axis=1))
        else:
            sets.append(moves)
    return sets


class Batched:
    """A vector env at steady state, timed a window at a time; its restarts timed apart."""

    def __init__(self, setup: dict[str, Any], games: int, seed: int = 0) -> None:
        self.vec = maze_escape_v1.vector_env(num_games=games, **setup)
        self.actions = batched_actions(self.vec, seed)
        self.restarts = Clock()
        restart = self.vec._restart

        def timed(*args: Any) -> None:
            with self.restarts:
                restart(*args)

        self.vec._restart = timed  # type: ignore[method-assign]
        self.vec.reset(seed=seed)
        self.turns = self.vec.config.max_turns
        self.done = 0
        self.steps(3 * self.turns)  # every game has ended (and restarted) a few times

    def steps(self, count: int) -> None:
        vec, actions = self.vec, self.actions
        for i in range(self.done, self.done + count):
            vec.step(actions[i % _ACTION_SETS])
        self.done += count

    def window(self) -> tuple[Clock, Clock]:
        """(the window's time, its restarts' time) of max_turns steps."""
        self.restarts = Clock()
        clock = Clock()
        with clock:
            self.steps(self.turns)
        return clock, self.restarts

    def agent_steps(self) -> int:
        return self.turns * self.vec.num_envs


# --- the scalar env ----------------------------------------------------------------------------
class Scalar:
    """The scalar env with the numeric wrapper (flat), move-only actions, resets included."""

    def __init__(self, setup: dict[str, Any], seed: int = 0) -> None:
        self.env = EscapeNumericObservation(maze_escape_v1.parallel_env(**setup), flatten=True)
        config = self.env.config
        notebook = (
            {"edit": 0, "start": 0, "end": 0, "text": ""}
            if config.notebook_mode == "splice"
            else {"append": ""}
        )
        rng = np.random.default_rng(seed)
        self.turns = []
        for _ in range(4096):
            turn = {}
            for agent in config.agents:
                action = {"move": int(rng.integers(0, 5)), "notebook": dict(notebook), "radio": ""}
                if config.radio_symbols:
                    symbol = int(rng.integers(0, config.radio_symbols + 1))
                    action["radio_symbol"] = symbol if rng.random() < 0.3 else 0
                turn[agent] = action
            self.turns.append(turn)
        self.agents = config.num_agents
        self.seed = seed
        self.env.reset(seed=seed)
        self.at = 0

    def window(self, seconds: float) -> tuple[Clock, int]:
        """(the window's time, agent-steps played) of about ``seconds``."""
        env, turns = self.env, self.turns
        played = 0
        clock = Clock()
        end = time.perf_counter() + seconds
        with clock:
            while time.perf_counter() < end:
                for _ in range(200):
                    if not env.agents:
                        self.seed += 1
                        env.reset(seed=self.seed)
                    env.step(turns[self.at % len(turns)])
                    self.at += 1
                    played += self.agents
        return clock, played


def compare(name: str, rounds: int, scalar_seconds: float) -> dict[str, Any]:
    """Interleaved windows of the batched engine and the scalar env for one setup."""
    setup = SETUPS[name]
    batched = Batched(setup, GAMES)
    scalar = Scalar(setup)
    scalar.window(0.3)  # warm-up
    rows = []

    def run_batched(result: dict[str, Any]) -> None:
        clock, restarts = batched.window()
        steps = batched.agent_steps()
        result["batched"] = (steps / clock.wall, steps / clock.cpu)
        result["reset_share"] = (restarts.wall / clock.wall, restarts.cpu / clock.cpu)

    def run_scalar(result: dict[str, Any]) -> None:
        clock, steps = scalar.window(scalar_seconds)
        result["scalar"] = (steps / clock.wall, steps / clock.cpu)

    for round_ in range(rounds):
        result: dict[str, Any] = {}
        runs: list[Callable[[dict[str, Any]], None]] = [run_batched, run_scalar]
        for run in runs if round_ % 2 == 0 else runs[::-1]:  # the order alternates
            gc.collect()
            run(result)
        result["ratio"] = tuple(
            b / s for b, s in zip(result["batched"], result["scalar"], strict=True)
        )
        rows.append(result)
    return {
        "setup": {**setup, "games": GAMES, "max_turns": batched.turns},
        "rounds": rows,
        "batched_wall": statistics.median(r["batched"][0] for r in rows),
        "batched_cpu": statistics.median(r["batched"][1] for r in rows),
        "scalar_wall": statistics.median(r["scalar"][0] for r in rows),
        "scalar_cpu": statistics.median(r["scalar"][1] for r in rows),
        "ratio_wall": statistics.median(r["ratio"][0] for r in rows),
        "ratio_cpu": statistics.median(r["ratio"][1] for r in rows),
        "ratio_range": (min(r["ratio"][0] for r in rows), max(r["ratio"][0] for r in rows)),
        "reset_share_wall": statistics.median(r["reset_share"][0] for r in rows),
        "reset_share_cpu": statistics.median(r["reset_share"][1] for r in rows),
    }


def memory_per_game(setup: dict[str, Any]) -> dict[str, float]:
    """Bytes per game: (held by 8,192 games - held by 1,024) / 7,168, after 200 steps."""
    held = {}
    for games in (1024, 8192):
        rng = np.random.default_rng(0)  # the actions are the benchmark's, not the env's memory
        actions = [rng.integers(0, 5, games * setup["num_agents"]) for _ in range(_ACTION_SETS)]
        gc.collect()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        vec = maze_escape_v1.vector_env(num_games=games, **setup)
        vec.reset(seed=0)
        for i in range(200):
            vec.step(actions[i % _ACTION_SETS])
        gc.collect()
        held[games] = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.stop()
        del vec, actions
    return {
        "per_game": (held[8192] - held[1024]) / (8192 - 1024),
        "held_1024": held[1024],
        "held_8192": held[8192],
    }


def scaling(setup: dict[str, Any], sizes: tuple[int, ...]) -> list[dict[str, float]]:
    """Batched agent-steps per second for each number of games (steady state)."""
    curve = []
    for games in sizes:
        batched = Batched(setup, games)
        clock, _ = batched.window()
        while clock.wall < 0.5:  # small N: more windows, for a time worth measuring
            more, _ = batched.window()
            clock.wall += more.wall
            clock.cpu += more.cpu
        steps = (batched.done - 3 * batched.turns) * batched.vec.num_envs  # agent-steps
        curve.append(
            {
                "games": games,
                "agent_steps_wall": steps / clock.wall,
                "agent_steps_cpu": steps / clock.cpu,
            }
        )
        del batched
        gc.collect()
    return curve


def profile(setup: dict[str, Any], top: int = 12) -> str:
    batched = Batched(setup, GAMES)
    profiler = cProfile.Profile()
    profiler.enable()
    batched.window()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def report(results: dict[str, Any]) -> str:
    lines = [
        f"load average {results['load_start']:.2f} (1 min) at the start, "
        f"{results['load_end']:.2f} at the end; {results['pinned']}; "
        f"Python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}",
        "",
        "| setup | batched agent-steps/s (wall / CPU) | scalar (wall / CPU) | ratio (wall, "
        "range / CPU) | reset share (wall / CPU) |",
        "|---|---|---|---|---|",
    ]
    for name in SETUPS:
        r = results[name]
        low, high = r["ratio_range"]
        lines.append(
            f"| {name} | {r['batched_wall']:,.0f} / {r['batched_cpu']:,.0f} | "
            f"{r['scalar_wall']:,.0f} / {r['scalar_cpu']:,.0f} | {r['ratio_wall']:.0f}x "
            f"({low:.0f}-{high:.0f}x) / {r['ratio_cpu']:.0f}x | "
            f"{r['reset_share_wall']:.1%} / {r['reset_share_cpu']:.1%} |"
        )
    memory = results["memory"]
    lines += [
        "",
        f"memory per game (main setup): {memory['per_game']:,.0f} bytes "
        f"(1,024 games hold {memory['held_1024'] / 2**20:.1f} MiB, 8,192 games "
        f"{memory['held_8192'] / 2**20:.1f} MiB)",
        "",
        "| games | agent-steps/s (wall) | (CPU) |",
        "|---|---|---|",
    ]
    for point in results["scaling"]:
        lines.append(
            f"| {point['games']:,} | {point['agent_steps_wall']:,.0f} | "
            f"{point['agent_steps_cpu']:,.0f} |"
        )
    lines += ["", "goals:"]
    for name, (floor, ratio) in GOALS.items():
        r = results[name]
        lines.append(
            f"  {name}: >= {floor:,} agent-steps/s: {r['batched_wall']:,.0f} wall "
            f"({'met' if r['batched_wall'] >= floor else 'not met'}), {r['batched_cpu']:,.0f} CPU "
            f"({'met' if r['batched_cpu'] >= floor else 'not met'}); >= {ratio:.0f}x the scalar "
            f"env: {r['ratio_wall']:.0f}x ({'met' if r['ratio_wall'] >= ratio else 'not met'})"
        )
    per_game = memory["per_game"]
    lines.append(
        f"  memory per game <= {GOAL_MEMORY:,} bytes: {per_game:,.0f} "
        f"({'met' if per_game <= GOAL_MEMORY else 'not met'})"
    )
    share = results["main"]["reset_share_cpu"]
    lines.append(
        f"  reset share <= {GOAL_RESET_SHARE:.0%} (main): {share:.1%} CPU "
        f"({'met' if share <= GOAL_RESET_SHARE else 'not met'}); full setup "
        f"{results['full']['reset_share_cpu']:.1%}"
    )
    for name, text in results.get("profiles", {}).items():
        lines += ["", f"profile of a batched window ({name}):", text]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scalar-seconds", type=float, default=2.0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--scaling", type=int, nargs="*", default=list(SCALING), help="numbers of games"
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"pinned": pin_to_one_cpu(), "load_start": os.getloadavg()[0]}
    for name in SETUPS:
        results[name] = compare(name, args.rounds, args.scalar_seconds)
    results["memory"] = memory_per_game(SETUPS["main"])
    results["scaling"] = scaling(SETUPS["main"], tuple(args.scaling))
    if args.profile:
        results["profiles"] = {name: profile(setup) for name, setup in SETUPS.items()}
    results["load_end"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
