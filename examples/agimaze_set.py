"""The labyrinth set (seven tutorials, then a target) played by the exact planner.

Shows the start gating and the fixed transition messages, and prints each labyrinth's result.

Run: ``.venv/bin/python examples/agimaze_set.py``
"""

from __future__ import annotations

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.planner import solve


def main() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0")
    set_env = env.unwrapped
    obs, info = env.reset(seed=0)
    print(obs["message"])
    terminated = False
    while not terminated:
        obs, _, terminated, _, info = set_env.step_name("start")
        labyrinth = set_env.labyrinth
        plan = solve(labyrinth) or []
        for action in plan:
            obs, _, terminated, _, info = set_env.step_name(action)
        print(f"labyrinth {len(info['results'])}: {obs['message']}")
    for result in info["results"]:
        print(
            f"  {result['name']}: solved={result['solved']} steps={result['steps']} "
            f"max_steps={result['max_steps']} RHAE70={result['rhae']:.2f}"
        )


if __name__ == "__main__":
    main()
