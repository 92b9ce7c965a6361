"""Parameter-shared PPO on Maze Escape: one policy plays every agent (SB3 + SuperSuit).

The parallel env gets the numeric observation (flattened, for ``MlpPolicy``) and move-only
actions (``Discrete(5)``); SuperSuit turns its three agents into three slots of a vector env
and concatenates copies of it, so Stable-Baselines3's PPO trains one network on the experience
of every agent. Before and after training, the shared policy plays evaluation games (every
agent by the same network) and the script prints the team's success rate and mean finish turn
(failed games count as ``max_turns``) and the share of agents that reached the exit ("agents
out"), beside a uniform random policy.

Measured (5x5, 60 turns, 60k-100k agent-steps, with and without the training shaping): the
shared policy was not yet measurably better than uniform random play (success 0.03-0.07,
"agents out" 0.27-0.32 against 0.31); a longer run (--timesteps) is the place to start.

Run:  python examples/train_escape_shared_ppo.py [--timesteps 20000] [--quick]
Needs the rl extra: pip install 'maze-envs[rl]'
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseParallelWrapper

from maze_envs import maze_escape_v1
from wrappers.escape_numeric import EscapeNumericObservation
from wrappers.move_only import MoveOnlyActions

Chooser = Callable[[np.ndarray], np.ndarray]


class TrainingShaping(BaseParallelWrapper[str, Any, Any]):
    """Training-only reward shaping (a custom wrapper): ``progress`` times each step's progress
    along the maze towards the exit (``info["path_distance_to_exit"]``, which the agents never
    observe) until an agent's first exit visit, and ``-bump`` for each wall bump. Evaluation
    uses the plain env; observations and actions pass through."""

    def __init__(self, env: Any, progress: float, bump: float) -> None:
        super().__init__(env)
        self.progress, self.bump = progress, bump
        self._distance: dict[str, int] = {}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._distance = {a: info["path_distance_to_exit"] for a, info in infos.items()}
        return observations, infos

    def step(self, actions: dict[str, Any]) -> Any:
        observations, rewards, terms, truncs, infos = self.env.step(actions)
        shaped = dict(rewards)
        for agent, info in infos.items():
            now = info["path_distance_to_exit"]
            if not info["visited_exit"] or info["events"]["first_exit_visit"]:
                shaped[agent] += self.progress * (self._distance[agent] - now)
            if info["events"]["move"].startswith("bumped"):
                shaped[agent] -= self.bump
            self._distance[agent] = now
        return observations, shaped, terms, truncs, infos


def make_env(size: int, max_turns: int, preset: str = "sparse") -> Any:
    """The wrapped parallel env: numeric (flattened) observations, move-only actions."""
    base = maze_escape_v1.parallel_env(preset=preset, width=size, height=size, max_turns=max_turns)
    return MoveOnlyActions(EscapeNumericObservation(base, flatten=True))


def evaluate(choose: Chooser, games: int, size: int, max_turns: int, seed: int) -> dict[str, float]:
    """Success rate and mean finish turn of ``choose`` (stacked observations -> move codes)
    playing every agent, over ``games`` games of seeds ``seed, seed + 1, ...``."""
    env = make_env(size, max_turns)
    successes, finishes, visited = 0, [], []
    for game in range(games):
        observations, _ = env.reset(seed=seed + game)
        success, turns = False, max_turns
        while env.agents:
            names = list(env.agents)
            codes = choose(np.stack([observations[a] for a in names]))
            observations, _, terms, _, _ = env.step(
                {a: int(c) for a, c in zip(names, codes, strict=True)}
            )
            if any(terms.values()):  # terminated: every agent has visited the exit
                success, turns = True, int(env.unwrapped.outcome()["turns"])
        successes += success
        finishes.append(turns)
        visited.append(
            np.mean([t is not None for t in env.unwrapped.outcome()["first_visit_turn"].values()])
        )
    return {
        "success_rate": successes / games,
        "mean_finish": float(np.mean(finishes)),
        "exit_visits": float(np.mean(visited)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="train_escape_shared_ppo.py",
        description="Parameter-shared PPO on Maze Escape (numeric + move-only wrappers).",
    )
    parser.add_argument("--timesteps", type=int, default=20_000, help="PPO agent-steps")
    parser.add_argument("--quick", action="store_true", help="tiny run (a smoke test)")
    parser.add_argument("--size", type=int, default=5, help="maze width and height (>= 5)")
    parser.add_argument("--max-turns", type=int, default=60)
    parser.add_argument("--copies", type=int, default=4, help="env copies (x 3 agents)")
    parser.add_argument("--eval-games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--progress", type=float, default=0.1, help="training shaping per step towards the exit"
    )
    parser.add_argument("--bump", type=float, default=0.05, help="training penalty per wall bump")
    args = parser.parse_args(argv)
    if args.quick:
        args.timesteps, args.eval_games, args.copies = 1_536, 4, 2
    try:
        import supersuit as ss
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.utils import set_random_seed
    except ImportError as exc:
        print(f"this example needs the rl extra ({exc}): pip install 'maze-envs[rl]'")
        return 1
    torch.set_num_threads(1)  # a small network: threads cost more than they give
    set_random_seed(args.seed)
    vec = ss.concat_vec_envs_v1(
        ss.pettingzoo_env_to_vec_env_v1(
            TrainingShaping(make_env(args.size, args.max_turns), args.progress, args.bump)
        ),
        args.copies,
        num_cpus=0,
        base_class="stable_baselines3",
    )
    # SuperSuit's SB3 wrapper has no working seed(): seed the games through the env it wraps
    # (and so do not pass seed= to PPO, which would call it).
    vec.venv.reset(seed=args.seed)
    n_steps = 128 if not args.quick else 64
    model = PPO(
        "MlpPolicy",
        vec,
        n_steps=n_steps,
        batch_size=256 if not args.quick else 64,
        learning_rate=1e-3,
        ent_coef=0.01,
        gamma=0.97,
        verbose=0,
    )

    def shared(deterministic: bool) -> Chooser:
        return lambda stacked: model.predict(stacked, deterministic=deterministic)[0]

    rng = np.random.default_rng(args.seed)

    def uniform(stacked: np.ndarray) -> np.ndarray:
        return rng.integers(0, 5, size=len(stacked))

    eval_seed = 10_000 + args.seed  # evaluation games differ from the training games
    shape = (args.eval_games, args.size, args.max_turns, eval_seed)
    rows = [("random", evaluate(uniform, *shape)), ("PPO before", evaluate(shared(False), *shape))]
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    seconds = time.perf_counter() - start
    rows.append(("PPO after", evaluate(shared(False), *shape)))
    print(
        f"Maze Escape {args.size}x{args.size}, 3 agents, {args.max_turns} turns; shared PPO "
        f"trained {args.timesteps} agent-steps in {seconds:.1f} s "
        f"({args.timesteps / seconds:.0f} steps/s); {args.eval_games} evaluation games"
    )
    print(f"{'policy':<12} {'success rate':>12} {'mean finish':>12} {'agents out':>11}")
    for name, r in rows:
        print(
            f"{name:<12} {r['success_rate']:>12.2f} {r['mean_finish']:>12.1f} "
            f"{r['exit_visits']:>11.2f}"
        )
    vec.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
