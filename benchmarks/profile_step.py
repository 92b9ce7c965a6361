"""Where a step's time goes: cProfile's top entries for the step paths that issue 16 measures.

Profiles, each after a warm-up, with the standard library's deterministic profiler:

* ``turn``: Maze Escape turns as ``escape_bench.py`` plays them (3 agents, 17x17, ``full``,
  random moves with notebook edits and radio, journal off);
* ``from_space``: ``Observation.from_space`` of observation-space samples (17x17 ``full``, v1);
* ``numeric``: ``maze_escape_v1`` (``full``, 9x9) under ``EscapeNumericObservation`` in its
  Dict, flattened and hashed-text forms, as ``wrappers_bench.py`` plays them;
* ``agimaze``: ``AgiMaze-v0`` under ``AgiMazeNumericObservation`` (with a local map).

Profiling inflates every call, so the shares are what to read, not the times. The
``benchmarks/README.md`` section "Profiles" keeps the top entries from before and after the step
path was rewritten.

Usage: ``python benchmarks/profile_step.py [turn|from_space|numeric|agimaze ...] [--top 12]``
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other benchmark scripts

PROFILES: dict[str, Callable[[], Callable[[], None]]] = {}


def profile(name: str) -> Callable[[Callable[[], Callable[[], None]]], Callable[[], None]]:
    def register(make: Callable[[], Callable[[], None]]) -> Callable[[], None]:
        PROFILES[name] = make
        return make  # type: ignore[return-value]

    return register


@profile("turn")
def turn() -> Callable[[], None]:
    from escape_bench import EscapeRunner, escape_actions

    runner = EscapeRunner(escape_actions(4096, seed=1), None)
    runner.run(2000)
    return lambda: runner.run(20000) and None


@profile("from_space")
def from_space() -> Callable[[], None]:
    from maze_envs import maze_escape_v1
    from maze_envs.escape.types import Observation

    env = maze_escape_v1.parallel_env(preset="full", width=17, height=17)
    space = env.observation_space("A")
    space.seed(1)
    samples = [space.sample() for _ in range(500)]
    config = env.config

    def run() -> None:
        for _ in range(40):
            for sample in samples:
                Observation.from_space(sample, config, "A")

    run()
    return run


@profile("numeric")
def numeric() -> Callable[[], None]:
    from wrappers_bench import ESCAPE, dict_actions, play_parallel

    from maze_envs import maze_escape_v1
    from wrappers.escape_numeric import EscapeNumericObservation

    envs = [
        EscapeNumericObservation(maze_escape_v1.parallel_env(**ESCAPE), **options)  # type: ignore[arg-type]
        for options in ({}, {"flatten": True}, {"text": "hash"})
    ]
    actions = dict_actions(2000)

    def run() -> None:
        for env in envs:
            play_parallel(env, actions, 6000)

    return run


@profile("agimaze")
def agimaze() -> Callable[[], None]:
    import gymnasium as gym
    import numpy as np
    from wrappers_bench import LABYRINTH, play_gym

    import maze_envs  # noqa: F401  (registers the environments)
    from wrappers.agimaze_numeric import AgiMazeNumericObservation

    env = AgiMazeNumericObservation(gym.make("maze_envs/AgiMaze-v0", path=LABYRINTH), local_map=2)
    actions = np.random.default_rng(0).integers(env.action_space.n, size=2000).tolist()  # type: ignore[attr-defined]
    return lambda: play_gym(env, actions, 40000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", help=f"profiles (default: all of {list(PROFILES)})")
    parser.add_argument("--top", type=int, default=12, help="entries per profile")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(PROFILES))
    if unknown:
        parser.error(f"unknown profile(s) {unknown}; choose from {list(PROFILES)}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    for name in args.names or list(PROFILES):
        run = PROFILES[name]()
        profiler = cProfile.Profile()
        profiler.enable()
        run()
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(args.top)
        lines = [line for line in out.getvalue().splitlines() if line.strip()]
        print(f"== {name}")
        print("\n".join(line.replace(str(Path.cwd()) + "/", "") for line in lines[2:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
