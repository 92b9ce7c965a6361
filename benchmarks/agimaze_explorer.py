"""The AGI Maze explorer on the packs: every bundle on many seeds, and its rules on paired seeds.

``all`` (default): the explorer plays every bundle of the chosen groups with each seed, within
the 5x budget (the EnvTraverse evaluation budget). It prints the episodes solved per group and
every episode not solved, with why: "lost at step N" when it entered a dead state (a state from
which no action sequence wins: :func:`maze_envs.agimaze.planner.lost_at`), otherwise "not
solved while a win was possible" (a weakness of the explorer, not of the labyrinth).

``rules``: the risk-aware rule of the explorer (``frame_edges_first``; see
:class:`maze_envs.policies.AgiMazeExplorer`) measured on *paired* seeds: every variant plays the
same bundles with the same seeds, and an episode "falls in a trap" when it entered a dead state.
Per variant: the trap rate with its Wilson 95 % interval, episodes solved, mean steps; against
the variant without any rule, the episodes *rescued* (trapped without the rule, not with it) and
*lost* (the other way round). The default bundles are the four TRAINING bundles of the earlier
packs (``agimaze-packs-2``) with river traps, on seeds 1000-1199.

Usage::

    python benchmarks/agimaze_explorer.py all --seeds 0-19 [--groups TUTORIAL TRAINING ...]
    python benchmarks/agimaze_explorer.py rules [--seeds 1000-1199] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.packs import DEFAULT_PACK_VERSION, list_bundles, version_root
from maze_envs.agimaze.planner import lost_at
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.stats import wilson_interval
from maze_envs.policies import AgiMazeExplorer, agimaze_episode

#: The TRAINING bundles of agimaze-packs-2 with a reachable dead state (river traps).
TRAP_BUNDLES = (
    "TRAINING/S3-full/STAGE-01/0004.json",
    "TRAINING/S3-full/STAGE-01/0009.json",
    "TRAINING/S3-full/STAGE-05/0005.json",
    "TRAINING/S3-full/STAGE-06/0000.json",
)
#: The variants of ``rules``: name -> explorer options.
VARIANTS: dict[str, dict[str, bool]] = {
    "no rule": {"frame_edges_first": False},
    "frame edges first (default)": {"frame_edges_first": True},
}


@dataclass(frozen=True)
class Episode:
    path: str
    seed: int
    variant: str
    solved: bool
    steps: int
    budget: int
    lost_at: int | None  # the step that entered a dead state (None: never)


def play(job: tuple[str, int, str, str, dict[str, bool]]) -> Episode:
    """One explorer episode of a bundle within the 5x budget."""
    path, seed, version, variant, options = job
    env = gym.make("maze_envs/AgiMaze-v0", path=path, pack_version=version)
    obs, info = env.reset(seed=seed)
    policy = AgiMazeExplorer(**options)
    policy.reset("player", seed, agimaze_episode(env, info))
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    actions: list[str] = []
    while True:
        action = policy.act(typed)
        actions.append(action)
        obs, _, terminated, truncated, info = env.unwrapped.step_name(action)
        typed = AgiMazeObservation.from_env(obs, info, last_action=action, env=env)
        if terminated or truncated:
            break
    lab: Any = env.unwrapped.backend.labyrinth
    env.close()
    lost = None if info["solved"] else lost_at(lab, actions)
    return Episode(path, seed, variant, bool(info["solved"]), info["steps"], info["budget"], lost)


def _run(jobs: list[Any], workers: int) -> list[Episode]:
    if workers == 1:
        return [play(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(play, jobs, chunksize=8))


def _rate(hits: int, n: int) -> str:
    low, high = wilson_interval(hits, n)
    assert low is not None and high is not None
    return f"{hits}/{n} = {100 * hits / n:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


def run_all(groups: Sequence[str], seeds: Sequence[int], version: str, workers: int) -> int:
    root = version_root(version)
    paths = [p for g in groups for p in list_bundles(g.rstrip("/") + "/", root=root)]
    jobs = [(p, s, version, "default", {}) for p in paths for s in seeds]
    started = time.perf_counter()
    episodes = _run(jobs, workers)
    print(f"explorer on {version}, seeds {seeds[0]}-{seeds[-1]}, 5x budget\n")
    print("| group | bundles | episodes | solved | entered a dead state | mean steps / budget |")
    print("|---|---:|---:|---|---:|---:|")
    for group in groups:
        mine = [e for e in episodes if e.path.startswith(group.rstrip("/") + "/")]
        solved = sum(e.solved for e in mine)
        dead = sum(e.lost_at is not None for e in mine)
        fraction = sum(e.steps / e.budget for e in mine) / len(mine)
        bundles = len({e.path for e in mine})
        print(
            f"| {group} | {bundles} | {len(mine)} | {_rate(solved, len(mine))} | {dead} | "
            f"{fraction:.3f} |"
        )
    failed = [e for e in episodes if not e.solved]
    for e in failed:
        why = (
            f"lost at step {e.lost_at}"
            if e.lost_at is not None
            else "not solved while a win was possible"
        )
        print(f"  not solved: {e.path} seed {e.seed}: {why}")
    print(f"\n{len(episodes)} episodes in {time.perf_counter() - started:.0f} s")
    return 0 if not failed else 1


def run_rules(paths: Sequence[str], seeds: Sequence[int], version: str, workers: int) -> int:
    jobs = [
        (p, s, version, name, opts) for name, opts in VARIANTS.items() for p in paths for s in seeds
    ]
    started = time.perf_counter()
    episodes = _run(jobs, workers)
    by = {(e.variant, e.path, e.seed): e for e in episodes}
    base = "no rule"
    print(
        f"explorer rules on paired seeds {seeds[0]}-{seeds[-1]}, {version}, {len(paths)} bundles\n"
    )
    print("| variant | episodes | fell in a trap (95% CI) | solved | mean steps | rescued | lost |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name in VARIANTS:
        mine = [by[(name, p, s)] for p in paths for s in seeds]
        trapped = sum(e.lost_at is not None for e in mine)
        rescued = lost = 0
        for e in mine:
            other = by[(base, e.path, e.seed)]
            rescued += other.lost_at is not None and e.lost_at is None
            lost += other.lost_at is None and e.lost_at is not None
        steps = sum(e.steps for e in mine) / len(mine)
        print(
            f"| {name} | {len(mine)} | {_rate(trapped, len(mine))} | "
            f"{sum(e.solved for e in mine)} | {steps:.1f} | "
            f"{'–' if name == base else rescued} | {'–' if name == base else lost} |"
        )
    print(f"\n{len(episodes)} episodes in {time.perf_counter() - started:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("mode", nargs="?", choices=("all", "rules"), default="all")
    parser.add_argument("--seeds", nargs="+", help="e.g. 0-19 (all) or 1000-1199 (rules)")
    parser.add_argument(
        "--groups", nargs="+", default=["TUTORIAL", "TRAINING", "CLASSIC", "EXTENDED"]
    )
    parser.add_argument("--bundles", nargs="+", help="rules: bundle paths (default: traps)")
    parser.add_argument("--pack-version", help="default: current (all), agimaze-packs-2 (rules)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    if args.mode == "all":
        seeds = parse_seeds(args.seeds or ["0-19"])
        version = args.pack_version or DEFAULT_PACK_VERSION
        return run_all(args.groups, seeds, version, args.workers)
    seeds = parse_seeds(args.seeds or ["1000-1199"])
    version = args.pack_version or "agimaze-packs-2"
    return run_rules(args.bundles or TRAP_BUNDLES, seeds, version, args.workers)


if __name__ == "__main__":
    sys.exit(main())
