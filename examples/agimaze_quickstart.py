"""AGI Maze in five minutes: make the environment, read an observation, play and score a game.

A Gymnasium environment (``maze_envs/AgiMaze-v0``) over one labyrinth bundle: find the key, open
the chest, leave through the exit gap with the treasure, in as few steps as you can. The action
space is ``Discrete(n)`` over the labyrinth's action names (``env.unwrapped.action_names``); the
observation is a ``Dict`` with the narration ``text``, the ``formal`` observation, the
``inventory`` and, on open-map labyrinths such as the tutorials, the ``map``. The script

1. makes the env on a tutorial bundle and prints the spaces, the task info and the first
   observation, raw and as the text a language model would read;
2. plays it with random actions, then with the built-in explorer (``make_policy``), which learns
   the labyrinth from what happens to it;
3. scores both with RHAE70 (the benchmark's score: 1.0 is an optimal solution).

Run: ``python examples/agimaze_quickstart.py [--pack TUTORIAL/STAGE-01/0000.json] [--seed 0]``
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.packs import list_bundles
from maze_envs.policies import agimaze_episode, make_policy
from maze_envs.text.agimaze import render_agimaze


def random_game(path: str, seed: int) -> dict[str, Any]:
    env = gym.make("maze_envs/AgiMaze-v0", path=path)
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    print("actions:", env.unwrapped.action_names, "->", env.action_space)  # type: ignore[attr-defined]
    print("observation keys:", sorted(env.observation_space.spaces))  # type: ignore[attr-defined]
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    print("task info:", dict(agimaze_episode(env, info).task))
    print(
        "\nfirst observation, formal events (one bit per event):", obs["formal"]["events"].tolist()
    )
    print("formal (typed):", typed.formal)
    print("public map:")
    print(obs["map"])
    print("the same as text (what an LLM policy reads):")
    print(render_agimaze(typed))
    while True:
        obs, _, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            env.close()
            return dict(info)


def explorer_game(path: str, seed: int) -> dict[str, Any]:
    env = gym.make("maze_envs/AgiMaze-v0", path=path)
    obs, info = env.reset(seed=seed)
    policy = make_policy("explorer", "agimaze")
    policy.reset("player", seed, agimaze_episode(env, info))
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    while True:
        action = policy.act(typed)  # an action name such as "up"
        obs, _, terminated, truncated, info = env.unwrapped.step_name(action)  # type: ignore[attr-defined]
        if terminated or truncated:
            env.close()
            return dict(info)
        typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="AGI Maze quickstart")
    parser.add_argument("--pack", default=None, help="a bundle path (default: the first tutorial)")
    parser.add_argument("--seed", type=int, default=0, help="the random agent's seed")
    args = parser.parse_args(argv)
    path = args.pack or list_bundles("TUTORIAL/")[0]
    print("bundle:", path)
    keys = ("solved", "steps", "max_steps", "budget", "rhae")
    randomly = random_game(path, args.seed)
    print("\nrandom actions:", {k: randomly.get(k) for k in keys})
    explored = explorer_game(path, args.seed)
    print("explorer:      ", {k: explored.get(k) for k in keys})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
