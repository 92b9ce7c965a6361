"""AGI Maze wrappers' step cost and Stable-Baselines3 PPO training speed, in one run.

1. Step throughput of each AGI Maze wrapper relative to the bare env (``gym.make`` of
   ``AgiMaze-v0`` on a TRAINING 5x5 river labyrinth, uniform random actions generated before the
   timed loops, resets inside them). Each wrapper is timed in pairs of short windows with its
   bare env (alternating which goes first), so a change of machine load hits both sides of a
   pair alike; cost = 1 - the median over the pairs of (wrapped rate / bare rate). Rates are
   steps per CPU second of this process (``time.process_time``), which other jobs on a shared
   machine disturb far less than wall-clock time; the loops are single-threaded.
   Goal: the numeric encoding costs < 30 %. The hidden-map labyrinth is the hard case (the
   engine takes a few microseconds a step); on an open-map tutorial the env itself renders the
   map text every step, so the same wrapper costs relatively less.
2. SB3 PPO training timesteps per second on ``TUTORIAL/STAGE-07`` with the flat numeric
   observation and a radius-2 local map (``MlpPolicy``, 4 envs in a ``DummyVecEnv``, the
   settings of ``examples/train_agimaze_ppo.py``, one torch thread), and with the ``Dict``
   observation (``MultiInputPolicy``).

Run: ``.venv/bin/python benchmarks/sb3_bench.py [--steps N] [--rounds N] [--ppo-steps N]
[--json]`` (about a minute with the defaults; needs ``pip install 'maze-envs[rl]'`` for part 2).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import maze_envs  # noqa: F401  (registers the environments)
from wrappers.agimaze_numeric import AgiMazeNumericObservation
from wrappers.agimaze_options import HiddenMap, RewardShaping

LABYRINTH = "TRAINING/S1-rivers/STAGE-06/0000.json"
PPO_LABYRINTH = "TUTORIAL/STAGE-07/0000.json"
GOAL_NUMERIC_COST = 0.30
MakeEnv = Callable[[], gym.Env[Any, Any]]


def bare() -> gym.Env[Any, Any]:
    return gym.make("maze_envs/AgiMaze-v0", path=LABYRINTH)


def bare_open() -> gym.Env[Any, Any]:  # an open map, for HiddenMap to blank
    return gym.make("maze_envs/AgiMaze-v0", path=PPO_LABYRINTH)


VARIANTS: dict[str, tuple[MakeEnv, MakeEnv]] = {  # name -> (bare reference, wrapped)
    "AgiMazeNumericObservation()": (bare, lambda: AgiMazeNumericObservation(bare())),
    "AgiMazeNumericObservation(local_map=2)": (
        bare,
        lambda: AgiMazeNumericObservation(bare(), local_map=2),
    ),
    "AgiMazeNumericObservation(local_map=2, flatten=True)": (
        bare,
        lambda: AgiMazeNumericObservation(bare(), local_map=2, flatten=True),
    ),
    "AgiMazeNumericObservation(local_map=2, flatten=True), open-map tutorial": (
        bare_open,
        lambda: AgiMazeNumericObservation(bare_open(), local_map=2, flatten=True),
    ),
    "HiddenMap (open-map tutorial)": (bare_open, lambda: HiddenMap(bare_open())),
    "RewardShaping(all five terms)": (
        bare,
        lambda: RewardShaping(
            bare(),
            step_penalty=0.01,
            bump_penalty=0.01,
            item_bonus=0.1,
            exploration_bonus=0.01,
            solve_bonus=0.5,
        ),
    ),
}


def rate(env: gym.Env[Any, Any], actions: list[int], seed: int) -> float:
    """Steps per CPU second of the given actions from a seeded reset, resets included."""
    env.reset(seed=seed)
    step = env.step
    start = time.process_time()
    for action in actions:
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            env.reset()
    return len(actions) / (time.process_time() - start)


def bench_wrappers(steps: int, rounds: int) -> dict[str, dict[str, float]]:
    """Per variant: paired windows (bare, wrapped, alternating which goes first), the median
    of the per-pair rate ratios (robust to the load changing between pairs) and the best rates.
    """
    actions = [int(a) for a in np.random.default_rng(0).integers(4, size=steps)]
    out: dict[str, dict[str, float]] = {}
    for name, (reference, wrapped) in VARIANTS.items():
        bare_env, wrapped_env = reference(), wrapped()
        ratios: list[float] = []
        best_bare = best_wrapped = 0.0
        for r in range(rounds):
            if r % 2:
                wrapped_rate, bare_rate = rate(wrapped_env, actions, r), rate(bare_env, actions, r)
            else:
                bare_rate, wrapped_rate = rate(bare_env, actions, r), rate(wrapped_env, actions, r)
            ratios.append(wrapped_rate / bare_rate)
            best_bare, best_wrapped = max(best_bare, bare_rate), max(best_wrapped, wrapped_rate)
        bare_env.close()
        wrapped_env.close()
        out[name] = {
            "steps_per_s": best_wrapped,
            "bare_steps_per_s": best_bare,
            "cost": 1.0 - float(np.median(ratios)),
        }
    return out


def bench_ppo(steps: int) -> dict[str, float]:
    """PPO timesteps per second (wall clock and CPU), flat (MlpPolicy) and Dict
    (MultiInputPolicy)."""
    try:
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError as error:
        raise SystemExit(f"PPO needs: pip install 'maze-envs[rl]' ({error})") from None
    example = Path(__file__).resolve().parent.parent / "examples" / "train_agimaze_ppo.py"
    spec = importlib.util.spec_from_file_location("train_agimaze_ppo", example)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    n_envs: int = module.N_ENVS
    settings: dict[str, Any] = module.PPO_SETTINGS

    torch.set_num_threads(1)
    results: dict[str, float] = {}
    for policy, flatten in (("MlpPolicy", True), ("MultiInputPolicy", False)):

        def make(flat: bool = flatten) -> gym.Env[Any, Any]:
            env = gym.make("maze_envs/AgiMaze-v0", path=PPO_LABYRINTH)
            return AgiMazeNumericObservation(env, local_map=2, flatten=flat)

        venv = make_vec_env(make, n_envs=n_envs, seed=0)
        model = PPO(policy, venv, seed=0, device="cpu", verbose=0, **settings)
        start, cpu = time.perf_counter(), time.process_time()
        model.learn(total_timesteps=steps)
        results[policy] = steps / (time.perf_counter() - start)
        results[f"{policy} (per CPU second)"] = steps / (time.process_time() - cpu)
        venv.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5_000, help="env steps per timed window")
    parser.add_argument("--rounds", type=int, default=11, help="paired windows per wrapper")
    parser.add_argument("--ppo-steps", type=int, default=16_384)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if min(args.steps, args.rounds, args.ppo_steps) < 1:
        parser.error("--steps, --rounds and --ppo-steps must be >= 1")
    wrappers = bench_wrappers(args.steps, args.rounds)
    ppo = bench_ppo(args.ppo_steps)
    if args.json:
        print(json.dumps({"wrappers": wrappers, "ppo_steps_per_s": ppo}, indent=2))
        return 0
    print(
        f"AGI Maze wrappers on {LABYRINTH}: best rates of {args.rounds} paired windows of "
        f"{args.steps} steps; cost from the median paired ratio"
    )
    print(f"{'wrapper':<72} {'steps/s':>9} {'bare':>9} {'cost':>7}")
    for name, figures in wrappers.items():
        print(
            f"{name:<72} {figures['steps_per_s']:>9.0f} {figures['bare_steps_per_s']:>9.0f} "
            f"{figures['cost']:>7.1%}"
        )
    numeric = wrappers["AgiMazeNumericObservation(local_map=2, flatten=True)"]["cost"]
    verdict = "met" if numeric < GOAL_NUMERIC_COST else "NOT met"
    print(f"goal numeric (local map, flat) cost < {GOAL_NUMERIC_COST:.0%}: {verdict}")
    print(f"SB3 PPO on {PPO_LABYRINTH}, {args.ppo_steps} timesteps, {4} envs, 1 torch thread:")
    for policy, value in ppo.items():
        print(f"  {policy:<33} {value:>7.0f} timesteps/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
