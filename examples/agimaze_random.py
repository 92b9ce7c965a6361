"""Score a uniform random agent and the exact planner on a TRAINING stage with RHAE70.

Run: ``.venv/bin/python examples/agimaze_random.py [STAGE_DIR]``
"""

from __future__ import annotations

import sys

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.packs import list_bundles
from maze_envs.agimaze.planner import solve
from maze_envs.agimaze.scoring import EpisodeResult, summarize


def play(path: str, agent: str, seed: int) -> EpisodeResult:
    env = gym.make("maze_envs/AgiMaze-v0", path=path)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    plan = solve(env.unwrapped.backend.labyrinth) if agent == "planner" else None
    while True:
        if plan:
            _, _, terminated, truncated, info = env.unwrapped.step_name(plan.pop(0))
        else:
            _, _, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            return EpisodeResult(path, info["steps"], info["max_steps"], info["solved"])


def main() -> None:
    stage = sys.argv[1] if len(sys.argv) > 1 else "TRAINING/S0-keys/STAGE-01"
    paths = list_bundles(stage.rstrip("/") + "/")
    for agent in ("random", "planner"):
        summary = summarize(play(p, agent, seed) for seed, p in enumerate(paths))
        print(
            f"{agent:>8}: {summary.solved}/{summary.count} solved, x1-solved {summary.x1_solved}, "
            f"RHAE70 {summary.mean_rhae:.3f} (RHAE60 {summary.sensitivity['0.6']:.3f}, "
            f"RHAE80 {summary.sensitivity['0.8']:.3f}), mean step fraction "
            f"{summary.mean_step_fraction:.2f}"
        )


if __name__ == "__main__":
    main()
