"""The benchmark runner's performance, in one run: executors, overhead, resume.

1. **Games per second** of whole runs (``run_experiment``, journal on, no plots) for the oracle
   and the explorer: Maze Escape v1 at 17x17 (navigator preset, 3 agents) and AGI Maze on the
   TRAINING packs, with the in-process executor, the process pool on 2 workers and local Ray on 2
   workers. Goals: process pool >= 1.6x in-process, Ray >= 1.3x in-process. The machine is
   shared, so the executors take turns: ``--rounds`` rounds, each timing every workload on every
   executor (the executors' order rotating), and each rate is the best of its rounds (the one
   least slowed by other work). Start-up costs are reported on their own, since a cluster or a
   fork server outlives a run: Ray's ``ray.init`` (local, 2 CPUs) and the process pool's fork
   server (started once per Python process, with the game modules preloaded). The pool's worker
   processes start inside each run.
2. **Runner overhead per game** against the bare environment loop with the same policy
   (env -> typed observation -> act -> step, episode builders, policy resets), journal off, in
   CPU time of this process (load-independent):
   ``rollout.play`` per game, and a whole inline ``run_experiment`` (rows file, results) per
   game. Interleaved repetitions, medians. Goal: under 10 %.
3. **Resume** of a finished 1,000-game run (Maze Escape 5x5 oracle games): the time of
   ``run_experiment(..., resume=True)`` that finds every game done (it reads the journal's
   completed keys and the rows, writes the results and the plots). Goal: under 2 s.

Usage: ``python benchmarks/runner_bench.py [--quick] [--skip-ray] [--rounds N] [--json]``. The
machine is small and shared: report the load (printed at the start and the end) with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from maze_envs.bench.rollout import play
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.seeds import agent_seed
from maze_envs.bench.spec import EscapeCase, Experiment, GameTask

GOAL_PROCESS = 1.6
GOAL_RAY = 1.3
GOAL_OVERHEAD = 0.10
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


def overhead(tasks: list[GameTask], bare: Any, repeats: int) -> dict[str, float]:
    """Seconds per game: bare loop, ``play`` and a whole inline run; the overheads.

    Each repetition times every game both ways, one right after the other (alternating which
    goes first), so load changes hit both alike; a game's time is its fastest repetition, the
    figure least disturbed by other work on the machine. Times are this process's CPU time
    (``time.process_time``): everything here runs in this process, and CPU time does not count
    the waits a loaded machine adds.
    """
    bare_best = [float("inf")] * len(tasks)
    play_best = [float("inf")] * len(tasks)
    run_best = float("inf")
    experiment = _experiment_of(tasks)
    for repeat in range(repeats):
        for index, task in enumerate(tasks):
            for which in ("bare", "play") if (repeat + index) % 2 == 0 else ("play", "bare"):
                started = time.process_time()
                if which == "bare":
                    bare(task)
                else:
                    play(task, None)
                elapsed = time.process_time() - started
                best = bare_best if which == "bare" else play_best
                best[index] = min(best[index], elapsed)
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
        "play_overhead": p / b - 1,
        "run_overhead": r / b - 1,
    }


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer games (a smoke test)")
    parser.add_argument("--skip-ray", action="store_true", help="leave Ray out")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds per executor")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    scale = 0.25 if args.quick else 1.0
    print(f"runner_bench: {load()}", flush=True)
    figures: dict[str, Any] = {"load_start": load()}

    # 1. games per second per executor
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
    print(
        f"  plain 2-process pool on the bare loop: {figures['ceiling']['speedup']:.2f}x", flush=True
    )

    # 2. overhead against the bare loop, journal off
    escape_tasks = escape_experiment("explorer", "0-5" if args.quick else "0-11").tasks()
    agimaze_tasks = agimaze_experiment("explorer").tasks()[:: 4 if args.quick else 2]
    repeats = 3 if args.quick else 5
    figures["overhead"] = {
        "escape 17x17 explorer": overhead(escape_tasks, bare_escape_game, repeats),
        "agimaze TRAINING explorer": overhead(agimaze_tasks, bare_agimaze_game, repeats),
    }

    # 3. resume a finished run
    figures["resume"] = resume_time(200 if args.quick else 1000)
    figures["load_end"] = load()

    print(f"\nrunner_bench ({figures['load_start']}; at the end {figures['load_end']})\n")
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
    print(f"goals: process pool >= {GOAL_PROCESS}x, Ray >= {GOAL_RAY}x in-process\n")
    print(
        "| overhead per game, journal off | bare loop | rollout.play | overhead "
        "| inline run | overhead |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, o in figures["overhead"].items():
        verdicts.append(o["play_overhead"] < GOAL_OVERHEAD)
        print(
            f"| {name} | {1000 * o['bare_s']:.2f} ms | {1000 * o['play_s']:.2f} ms | "
            f"{100 * o['play_overhead']:+.1f}% | {1000 * o['run_s']:.2f} ms | "
            f"{100 * o['run_overhead']:+.1f}% |"
        )
    print(
        f"goal: overhead < {100 * GOAL_OVERHEAD:.0f}% (rollout.play: the runner's own work per "
        "game; the inline run adds the per-run fixed costs, amortized over its games: checking "
        "every policy and env before the first game, the results files and the bootstrap "
        "intervals)"
    )
    for name, o in figures["overhead"].items():
        fixed = (o["run_s"] - o["play_s"]) * o["games"]
        print(f"  {name}: fixed per-run cost {fixed:.2f} s over {o['games']} games")
    print()
    r = figures["resume"]
    verdicts.append(r["cli_resume_s"] < GOAL_RESUME_S)
    print(
        f"resume of a finished {r['games']}-game run: run_experiment {r['resume_s']:.2f} s, "
        f"`maze-envs bench --resume` in a fresh process {r['cli_resume_s']:.2f} s "
        f"({r['cli_resume_cpu_s']:.2f} s of CPU) "
        f"(goal < {GOAL_RESUME_S:.0f} s; the run itself took {r['first_run_s']:.1f} s)"
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    print(f"\n{sum(verdicts)}/{len(verdicts)} goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
