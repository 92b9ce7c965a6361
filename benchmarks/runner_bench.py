"""The benchmark runner's performance, in one run: overhead, process pool, executors, resume.

1. **Runner overhead per game** (``--only overhead``) against the bare environment loop with the
   same policy (env -> typed observation -> act -> step, episode builders, policy resets), journal
   off, in CPU time of this process: ``rollout.play`` per game, Maze Escape v1 17x17 explorer and
   AGI Maze TRAINING explorer. Rounds: each plays every game both ways (alternating), its ratio
   is over the round's sums; the median and range over rounds are printed (and the ratio of the
   per-game fastest times). Goal: <= 5 % (issue 16). ``--profile N`` prints the top N cProfile
   entries of both loops first (where the runner's extra time goes).
2. **The process pool against a bare ProcessPoolExecutor** (``--only pool``), same games, 2
   workers each: the bare game loop mapped over ``concurrent.futures.ProcessPoolExecutor(2)``
   (the peer) and the runner's ``ProcessExecutor(2)`` (batches, ``rollout.play``, journal off),
   pool start-up in both, the order alternating over rounds; the ratio bare / runner per round,
   median and range. Goal: >= 0.9x (issue 16). A whole journaled ``run_experiment`` on the pool
   is timed beside them, for reference.
3. **Games per second** (``--only executors``) of whole runs (journal on, no plots) for the
   oracle and the explorer on both environments, in-process, process pool (2) and local Ray (2),
   executors alternating in rounds (best of each), start-up costs apart, and a plain
   ``ProcessPoolExecutor(2)`` speed-up on the bare loop as the machine's ceiling. Goals of an
   earlier issue: process pool >= 1.6x and Ray >= 1.3x in-process.
4. **Resume** (``--only resume``) of a finished 1,000-game run: ``run_experiment(...,
   resume=True)`` and ``maze-envs bench --resume`` in a fresh process. Goal: under 2 s.

Usage: ``python benchmarks/runner_bench.py [--only overhead,pool,executors,resume] [--quick]
[--skip-ray] [--rounds N] [--profile N] [--json]``. The machine is small and shared: the load
average is printed with every table and at the start and the end; report it with the figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from maze_envs.bench.executors import ProcessExecutor
from maze_envs.bench.rollout import play
from maze_envs.bench.spec import EscapeCase, Experiment, GameTask
from maze_envs.policies.seeds import agent_seed


def RunOptions(**options: Any) -> Any:
    """``maze_envs.bench.runner.RunOptions``, imported on first use: every process-pool worker
    imports this script again when it starts (multiprocessing's rule for forkserver workers of a
    script), so its own imports stay as light as the ``maze-envs`` command's."""
    from maze_envs.bench.runner import RunOptions as options_class

    return options_class(**options)


def run_experiment(*args: Any, **kwargs: Any) -> Any:
    """``maze_envs.bench.runner.run_experiment``, imported on first use (see RunOptions)."""
    from maze_envs.bench.runner import run_experiment as run

    return run(*args, **kwargs)


GOAL_PROCESS = 1.6
GOAL_RAY = 1.3
GOAL_OVERHEAD = 0.05
GOAL_POOL = 0.9
GOAL_RESUME_S = 2.0


def escape_experiment(policy: str, seeds: str, size: int = 17) -> Experiment:
    return Experiment.model_validate(
        {
            "name": f"escape {policy}",
            "seeds": seeds,
            "escape": [{"preset": "navigator", "sizes": [size], "policies": [policy]}],
        }
    )


def agimaze_experiment(policy: str, seeds: str = "0") -> Experiment:
    return Experiment.model_validate(
        {
            "name": f"agimaze {policy}",
            "seeds": seeds,
            "agimaze": [{"packs": ["TRAINING"], "policies": [policy]}],
        }
    )


def timed_run(experiment: Experiment, executor: str, workers: int = 2) -> tuple[float, int]:
    """Seconds for a fresh run of ``experiment``, and its number of games."""
    with tempfile.TemporaryDirectory() as folder:
        options = RunOptions(executor=executor, workers=workers, plots=False, quiet=True)
        started = time.perf_counter()
        result = run_experiment(experiment, Path(folder) / "run", options)
        elapsed = time.perf_counter() - started
        errors = [r for r in result.rows if r.get("status") != "ok"]
        if errors:
            raise SystemExit(f"{experiment.name}: {len(errors)} games failed: {errors[0]['error']}")
        return elapsed, len(result.rows)


# --- 2. overhead --------------------------------------------------------------------------------


def bare_escape_game(task: GameTask) -> None:
    """The loop a user would write by hand: env, episodes, typed observations, act, step."""
    from maze_envs import maze_escape_v1
    from maze_envs.escape.convert import observation_to_model
    from maze_envs.policies.episodes import escape_episode
    from maze_envs.policies.registry import make_policy

    case = task.case
    assert isinstance(case, EscapeCase)
    config = case.game_config
    env = maze_escape_v1.parallel_env(config=config)
    observations, _ = env.reset(seed=task.seed)
    team = {}
    for index, (agent, spec) in enumerate(
        zip(config.agents, task.policy.members(config.agents), strict=True)
    ):
        policy = make_policy(spec.spec, "escape", **spec.options)
        privileged = bool(getattr(policy, "privileged", False))
        policy.reset(
            agent,
            agent_seed(task.seed, index, case.salt),
            escape_episode(env, agent, privileged=privileged),
        )
        team[agent] = policy
    while env.agents:
        actions = {
            agent: team[agent].act(observation_to_model(observations[agent], config, agent))
            for agent in env.agents
        }
        observations, *_ = env.step(actions)
    env.close()


def bare_agimaze_game(task: GameTask) -> None:
    from maze_envs.agimaze.env import AgiMazeEnv
    from maze_envs.agimaze.observation import AgiMazeObservation
    from maze_envs.policies.episodes import agimaze_episode
    from maze_envs.policies.registry import make_policy

    case = task.case
    env = AgiMazeEnv(path=case.pack, budget_factor=case.budget_factor)  # type: ignore[union-attr]
    obs, info = env.reset(seed=task.seed)
    spec = task.policy.members(("player",))[0]
    policy = make_policy(spec.spec, "agimaze", **spec.options)
    privileged = bool(getattr(policy, "privileged", False))
    policy.reset(
        "player",
        agent_seed(task.seed, 0, case.salt),
        agimaze_episode(env, info, privileged=privileged),
    )
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    while True:
        action = policy.act(typed)
        obs, _, terminated, truncated, info = env.step_name(action)
        if terminated or truncated:
            break
        typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)
    env.close()


def overhead(tasks: list[GameTask], bare: Any, rounds: int) -> dict[str, Any]:
    """Seconds per game, bare loop against ``rollout.play`` (and a whole inline run), and the
    overhead ``play / bare - 1`` per round, its median and range.

    Each round times every game both ways, one right after the other (alternating which goes
    first), so load changes hit both alike; a round's ratio is over the sum of its games. Times
    are this process's CPU time (``time.process_time``): everything here runs in this process,
    and CPU time does not count the waits a loaded machine adds (it still feels its caches).
    The garbage is collected before each game, so neither side pays for the other's (each pays
    for its own). ``best`` is the ratio of the per-game fastest times over all rounds.
    """
    bare_best = [float("inf")] * len(tasks)
    play_best = [float("inf")] * len(tasks)
    ratios: list[float] = []
    run_best = float("inf")
    experiment = _experiment_of(tasks)
    for round_ in range(rounds):
        spent = {"bare": 0.0, "play": 0.0}
        for index, task in enumerate(tasks):
            for which in ("bare", "play") if (round_ + index) % 2 == 0 else ("play", "bare"):
                gc.collect()  # neither side pays for the other's garbage
                started = time.process_time()
                if which == "bare":
                    bare(task)
                else:
                    play(task, None)
                elapsed = time.process_time() - started
                spent[which] += elapsed
                best = bare_best if which == "bare" else play_best
                best[index] = min(best[index], elapsed)
        ratios.append(spent["play"] / spent["bare"] - 1)
        with tempfile.TemporaryDirectory() as folder:
            options = RunOptions(journal=False, plots=False, quiet=True)
            started = time.process_time()
            run_experiment(experiment, Path(folder) / "run", options)
            run_best = min(run_best, time.process_time() - started)
    b, p = sum(bare_best) / len(tasks), sum(play_best) / len(tasks)
    r = run_best / len(tasks)
    return {
        "games": len(tasks),
        "bare_s": b,
        "play_s": p,
        "run_s": r,
        "rounds": ratios,
        "median": statistics.median(ratios),
        "best": p / b - 1,
        "run_overhead": r / b - 1,
    }


# --- the process pool against a bare ProcessPoolExecutor ----------------------------------------


def _bare_pool(tasks: list[GameTask], bare: Any, workers: int, start: str | None = None) -> None:
    """What a user would write: the bare game loop mapped over a ProcessPoolExecutor (the
    platform's default start, ``fork`` on Linux; or ``start``, with the runner's preload)."""
    context = None
    if start is not None:
        import multiprocessing

        from maze_envs.bench.executors import PRELOAD

        context = multiprocessing.get_context(start)
        if start == "forkserver":
            context.set_forkserver_preload(PRELOAD)
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        for _ in pool.map(bare, tasks):
            pass


def _executor_pool(tasks: list[GameTask], workers: int) -> None:
    """The runner's process pool on the same games (no journal, as the bare pool has none)."""
    for _ in ProcessExecutor(workers).run(tasks, None):
        pass


def _journaled_run(tasks: list[GameTask], workers: int) -> None:
    """A whole ``run_experiment`` on the process pool, journal on (what a user runs)."""
    with tempfile.TemporaryDirectory() as folder:
        options = RunOptions(executor="process", workers=workers, plots=False, quiet=True)
        run_experiment(_experiment_of(tasks), Path(folder) / "run", options)


def pool_vs_bare(tasks: list[GameTask], bare: Any, rounds: int, workers: int = 2) -> dict[str, Any]:
    """Wall time of the same games on a bare ``ProcessPoolExecutor(workers)`` (the peer) and on
    the runner's ``ProcessExecutor(workers)``; per round, the ratio bare / runner (>= 1: the
    runner is as fast), with the order alternating. Pool start-up is inside both times (each
    run starts its pool; the runner's fork server is warmed first, as it outlives a run). A
    whole journaled ``run_experiment`` on the pool is timed beside them (not in the goal: the
    journal's cost is the journal's, issue 16's other rows)."""
    _executor_pool(tasks[:2], workers)  # starts the fork server (once per process)
    _bare_pool(tasks[:2], bare, workers)
    sides = ["bare", "bare forkserver", "runner", "journaled"]
    times: dict[str, list[float]] = {side: [] for side in sides}
    for round_ in range(rounds):
        for which in sides[round_ % 4 :] + sides[: round_ % 4]:
            started = time.perf_counter()
            if which == "bare":
                _bare_pool(tasks, bare, workers)
            elif which == "bare forkserver":
                _bare_pool(tasks, bare, workers, "forkserver")
            elif which == "runner":
                _executor_pool(tasks, workers)
            else:
                _journaled_run(tasks, workers)
            times[which].append(time.perf_counter() - started)

    def against(side: str) -> list[float]:
        return [b / r for b, r in zip(times["bare"], times[side], strict=True)]

    return {
        "games": len(tasks),
        "times": times,
        "ratios": against("runner"),
        "median": statistics.median(against("runner")),
        "forkserver_median": statistics.median(against("bare forkserver")),
        "journaled_median": statistics.median(against("journaled")),
    }


def profile_overhead(tasks: list[GameTask], bare: Any, top: int) -> None:
    """cProfile of ``rollout.play`` and of the bare loop over ``tasks`` (top ``top`` entries by
    own time each): where the runner's extra time goes."""
    import cProfile
    import pstats

    for name, function in (("rollout.play", lambda t: play(t, None)), ("bare loop", bare)):
        profiler = cProfile.Profile()
        profiler.enable()
        for task in tasks:
            function(task)
        profiler.disable()
        stats = pstats.Stats(profiler).sort_stats("tottime")
        print(f"\n--- {name}, {len(tasks)} games: top {top} by own time")
        stats.print_stats(top)
        if name == "rollout.play":
            print(f"--- {name}: the runner's own functions (maze_envs/bench), top {top}")
            stats.print_stats("maze_envs/bench/", top)


def _experiment_of(tasks: list[GameTask]) -> Experiment:
    """An experiment of exactly ``tasks`` (one policy, their seeds, sizes or bundles)."""
    first = tasks[0]
    seeds = ",".join(dict.fromkeys(str(t.seed) for t in tasks))
    if isinstance(first.case, EscapeCase):
        return escape_experiment(first.policy.name, seeds, size=int(first.case.size.split("x")[0]))
    packs = list(dict.fromkeys(t.case.pack for t in tasks))  # type: ignore[union-attr]
    return Experiment.model_validate(
        {
            "name": f"agimaze {first.policy.name}",
            "seeds": seeds,
            "agimaze": [{"packs": packs, "policies": [first.policy.name]}],
        }
    )


# --- 3. resume ---------------------------------------------------------------------------------


def resume_time(games: int) -> dict[str, float]:
    """A finished run (journal, results, plots), then ``--resume``: in this process
    (``run_experiment``) and as a user runs it, ``maze-envs bench --config ... --resume`` in a
    fresh Python process (imports included)."""
    import subprocess

    experiment = escape_experiment("oracle", f"0-{games - 1}", size=5)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        config = Path(folder) / "experiment.json"
        config.write_text(experiment.model_dump_json(), encoding="utf-8")
        started = time.perf_counter()
        run_experiment(experiment, out, RunOptions(executor="process", quiet=True))
        first = time.perf_counter() - started
        started = time.perf_counter()
        result = run_experiment(experiment, out, RunOptions(resume=True, quiet=True))
        resumed = time.perf_counter() - started
        assert result.played == 0 and result.skipped == games, (result.played, result.skipped)
        command = [sys.executable, "-m", "maze_envs", "bench", "--config", str(config)]
        command += ["--out", str(out), "--resume", "--quiet"]
        import resource

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        cli = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "games": games,
        "first_run_s": first,
        "resume_s": resumed,
        "cli_resume_s": cli,
        "cli_resume_cpu_s": cpu,
    }


def _bare_share(seeds: str) -> float:
    tasks = escape_experiment("explorer", seeds).tasks()
    started = time.perf_counter()
    for task in tasks:
        bare_escape_game(task)
    return time.perf_counter() - started


def machine_ceiling(games: int) -> dict[str, float]:
    """The speed-up a plain 2-process pool gets on the bare env loop right now (the peer).

    No runner, no journal: ``games`` explorer games at 17x17 one after another, then split in
    two halves over a warm ``ProcessPoolExecutor(2)``. On a shared machine this, not the
    runner, bounds what any executor can show.
    """
    from concurrent.futures import ProcessPoolExecutor

    half = games // 2
    first, second = f"1000-{1000 + half - 1}", f"{1000 + half}-{1000 + 2 * half - 1}"
    started = time.perf_counter()
    _bare_share(first)
    _bare_share(second)
    serial = time.perf_counter() - started
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_bare_share, ["900", "901"]))  # warm
        started = time.perf_counter()
        list(pool.map(_bare_share, [first, second]))
        parallel = time.perf_counter() - started
    return {"serial_s": serial, "pool_s": parallel, "speedup": serial / parallel}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


SECTIONS = ("overhead", "pool", "executors", "resume")


def _range(values: list[float], scale: float = 1.0, fmt: str = ".2f") -> str:
    low, high = min(values) * scale, max(values) * scale
    return f"{low:{fmt}}..{high:{fmt}}"


def run_overhead(args: argparse.Namespace, figures: dict[str, Any]) -> list[bool]:
    escape_tasks = escape_experiment("explorer", "0-5" if args.quick else "0-11").tasks()
    agimaze_tasks = agimaze_experiment("explorer").tasks()[:: 4 if args.quick else 1]
    workloads = {
        "Maze Escape 17x17 explorer": (escape_tasks, bare_escape_game),
        "AGI Maze TRAINING explorer": (agimaze_tasks, bare_agimaze_game),
    }
    if args.profile:
        for name, (tasks, bare) in workloads.items():
            print(f"\n=== profile: {name}")
            profile_overhead(tasks, bare, args.profile)
    rounds = 3 if args.quick else max(5, args.rounds)
    figures["overhead"] = {
        name: overhead(tasks, bare, rounds) for name, (tasks, bare) in workloads.items()
    }
    print(f"\nrunner overhead per game against the bare loop, journal off, CPU time ({load()})\n")
    print("| workload | bare loop | rollout.play | overhead, median of rounds | rounds | best |")
    print("|---|---:|---:|---:|---:|---:|")
    verdicts = []
    for name, o in figures["overhead"].items():
        verdicts.append(o["median"] <= GOAL_OVERHEAD)
        print(
            f"| {name} ({o['games']} games) | {1000 * o['bare_s']:.2f} ms | "
            f"{1000 * o['play_s']:.2f} ms | {100 * o['median']:+.1f} % | "
            f"{_range(o['rounds'], 100, '+.1f')} % | {100 * o['best']:+.1f} % |"
        )
    print(
        f"goal: overhead <= {100 * GOAL_OVERHEAD:.0f} % (median of {rounds} rounds; each round "
        "plays every game both ways, alternating)"
    )
    for name, o in figures["overhead"].items():
        fixed = (o["run_s"] - o["play_s"]) * o["games"]
        print(
            f"  {name}: a whole inline run adds {fixed:.2f} s of fixed per-run costs over its "
            f"{o['games']} games (checks before the first game, results files, intervals)"
        )
    return verdicts


def run_pool(args: argparse.Namespace, figures: dict[str, Any]) -> list[bool]:
    workloads = {
        "Maze Escape 17x17 explorer": (
            escape_experiment("explorer", "0-11" if args.quick else "0-31").tasks(),
            bare_escape_game,
        ),
        "AGI Maze TRAINING explorer": (
            agimaze_experiment("explorer").tasks()[:: 4 if args.quick else 1],
            bare_agimaze_game,
        ),
    }
    rounds = 3 if args.quick else max(5, args.rounds)
    figures["pool"] = {
        name: pool_vs_bare(tasks, bare, rounds) for name, (tasks, bare) in workloads.items()
    }
    print(
        f"\nprocess pool (2 workers) against a bare ProcessPoolExecutor(2), same games ({load()})\n"
    )
    print(
        "| workload | bare pool | runner's pool | bare / runner, median | rounds | "
        "bare / bare on forkserver | bare / journaled run |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    verdicts = []
    for name, o in figures["pool"].items():
        verdicts.append(o["median"] >= GOAL_POOL)
        print(
            f"| {name} ({o['games']} games) | {statistics.median(o['times']['bare']):.2f} s | "
            f"{statistics.median(o['times']['runner']):.2f} s | {o['median']:.2f}x | "
            f"{_range(o['ratios'])}x | {o['forkserver_median']:.2f}x | "
            f"{o['journaled_median']:.2f}x |"
        )
    print(
        f"goal: >= {GOAL_POOL}x (the bare pool maps the bare game loop, default start; the "
        "runner's pool plays the same games through rollout.play, in batches, journal off; pool "
        "start-up in all; for reference, the bare pool on the runner's forkserver start and the "
        "whole run_experiment with its journal)"
    )
    return verdicts


def run_executors(args: argparse.Namespace, figures: dict[str, Any]) -> list[bool]:
    scale = 0.25 if args.quick else 1.0
    workloads = {
        "escape 17x17 oracle": escape_experiment("oracle", f"0-{int(200 * scale) - 1}"),
        "escape 17x17 explorer": escape_experiment("explorer", f"0-{int(60 * scale) - 1}"),
        "agimaze TRAINING oracle": agimaze_experiment("oracle", "0" if args.quick else "0-3"),
        "agimaze TRAINING explorer": agimaze_experiment("explorer", "0" if args.quick else "0-1"),
    }
    executors = ["inline", "process"] + ([] if args.skip_ray else ["ray"])
    warm = escape_experiment("oracle", "0-3", size=5)
    started = time.perf_counter()
    timed_run(warm, "process")
    figures["forkserver_start_s"] = time.perf_counter() - started
    if not args.skip_ray:
        import ray

        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        figures["ray_init_s"] = time.perf_counter() - started
        timed_run(warm, "ray")  # Ray's workers import the game modules once
    rates: dict[str, dict[str, float]] = {name: {} for name in workloads}
    for round_ in range(args.rounds):
        for offset, (name, experiment) in enumerate(workloads.items()):
            turn = (round_ + offset) % len(executors)
            for executor in executors[turn:] + executors[:turn]:
                elapsed, games = timed_run(experiment, executor)
                rate = games / elapsed
                rates[name][executor] = max(rates[name].get(executor, 0.0), rate)
                print(
                    f"  round {round_ + 1} {name:<26} {executor:<8} {games:>4} games "
                    f"{elapsed:6.2f} s {rate:8.1f} games/s",
                    flush=True,
                )
    if not args.skip_ray:
        import ray

        ray.shutdown()
    figures["games_per_s"] = rates
    figures["ceiling"] = machine_ceiling(8 if args.quick else 24)
    print(f"\ngames per second of whole runs, journal on ({load()})\n")
    print("| workload | in-process games/s | process pool (2) | x | Ray (2) | x |")
    print("|---|---:|---:|---:|---:|---:|")
    verdicts = []
    for name, by in rates.items():
        inline = by["inline"]
        process = by["process"] / inline
        ray_ratio = by["ray"] / inline if "ray" in by else None
        verdicts.append(process >= GOAL_PROCESS)
        if ray_ratio is not None:
            verdicts.append(ray_ratio >= GOAL_RAY)
        ray_cells = f"{by['ray']:.1f} | {ray_ratio:.2f}x" if ray_ratio is not None else "– | –"
        print(f"| {name} | {inline:.1f} | {by['process']:.1f} | {process:.2f}x | {ray_cells} |")
    print(
        f"\nbest of {args.rounds} interleaved round(s) per executor; start-up, not in the rates: "
        f"process pool fork server {figures['forkserver_start_s']:.1f} s (once per Python "
        "process)"
        + (
            f", Ray (ray.init, local, 2 CPUs) {figures['ray_init_s']:.1f} s"
            if "ray_init_s" in figures
            else ""
        )
    )
    ceiling = figures["ceiling"]
    print(
        f"peer in the same run: a plain ProcessPoolExecutor(2) over the bare env loop (no runner, "
        f"no journal) got {ceiling['speedup']:.2f}x ({ceiling['serial_s']:.1f} s -> "
        f"{ceiling['pool_s']:.1f} s): the most any executor could show on the machine just then"
    )
    print(f"goals: process pool >= {GOAL_PROCESS}x, Ray >= {GOAL_RAY}x in-process")
    return verdicts


def run_resume(args: argparse.Namespace, figures: dict[str, Any]) -> list[bool]:
    figures["resume"] = r = resume_time(200 if args.quick else 1000)
    print(
        f"\nresume of a finished {r['games']}-game run: run_experiment {r['resume_s']:.2f} s, "
        f"`maze-envs bench --resume` in a fresh process {r['cli_resume_s']:.2f} s "
        f"({r['cli_resume_cpu_s']:.2f} s of CPU) "
        f"(goal < {GOAL_RESUME_S:.0f} s; the run itself took {r['first_run_s']:.1f} s)"
    )
    return [r["cli_resume_s"] < GOAL_RESUME_S]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer games (a smoke test)")
    parser.add_argument("--skip-ray", action="store_true", help="leave Ray out")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--rounds", type=int, default=2, help="timed rounds (at least 5 for ratios)"
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"sections to run, comma-separated: {', '.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="with the overhead: the top N cProfile entries of rollout.play and the bare loop",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    sections = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; use {', '.join(SECTIONS)}")
    print(f"runner_bench: {load()}", flush=True)
    figures: dict[str, Any] = {"load_start": load()}
    runners = {
        "overhead": run_overhead,
        "pool": run_pool,
        "executors": run_executors,
        "resume": run_resume,
    }
    verdicts: list[bool] = []
    for name in SECTIONS:
        if name in sections:
            verdicts += runners[name](args, figures)
    figures["load_end"] = load()
    print(f"\nrunner_bench: load at the start {figures['load_start']}, at the end {load()}")
    if args.json:
        print(json.dumps(figures, indent=2))
    print(f"{sum(verdicts)}/{len(verdicts)} goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
