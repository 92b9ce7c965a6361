"""Maze Escape in five minutes: make the environment, look at one observation, play a game.

A PettingZoo ``ParallelEnv``: three agents (A, B, C) start apart in a perfect maze and the team
wins when every agent has visited the exit. Every agent has the same observation space (a
``Dict``) and action space (a ``Dict``: a move, an optional notebook edit, an optional radio
message). The script

1. makes the env, prints the spaces and A's first observation, raw and typed, and the text a
   language model would read;
2. plays one game with random actions (``action_space.sample()``);
3. plays the same maze with a team of built-in explorers (``make_policy``) and prints the
   outcome beside the fastest possible finish.

Run: ``python examples/escape_quickstart.py [--size 9] [--seed 0]``
"""

from __future__ import annotations

import argparse

from maze_envs import maze_escape_v1
from maze_envs.escape.types import Observation
from maze_envs.policies import escape_episode, make_policy
from maze_envs.text.escape import render_escape


def random_game(size: int, seed: int) -> dict[str, object]:
    env = maze_escape_v1.parallel_env(preset="full", width=size, height=size, max_turns=200)
    observations, _ = env.reset(seed=seed)
    for agent in env.agents:
        env.action_space(agent).seed(seed)
    print("agents:", env.agents)
    print("observation space keys:", sorted(env.observation_space("A").spaces))
    print("action space:", env.action_space("A"))
    print("\nA's first observation (raw): edges", observations["A"]["edges"].tolist())
    typed = Observation.from_space(observations["A"], env.config, "A")
    print("A's first observation (typed): edges", typed.edges, "| on exit:", typed.on_exit)
    print("\nthe same as text (what an LLM policy reads):")
    print(render_escape(typed, env.config))
    while env.agents:  # random actions until the turn limit or the team's escape
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, *_ = env.step(actions)
    outcome = env.outcome()
    env.close()
    return outcome


def explorer_game(size: int, seed: int) -> dict[str, object]:
    env = maze_escape_v1.parallel_env(preset="full", width=size, height=size, max_turns=600)
    observations, _ = env.reset(seed=seed)
    team = {agent: make_policy("explorer") for agent in env.possible_agents}
    for number, (agent, policy) in enumerate(team.items()):
        policy.reset(agent, seed=number, episode=escape_episode(env, agent))
    while env.agents:
        typed = {a: Observation.from_space(observations[a], env.config, a) for a in env.agents}
        observations, *_ = env.step({a: team[a].act(typed[a]) for a in env.agents})
    outcome = env.outcome()
    env.close()
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Maze Escape quickstart")
    parser.add_argument("--size", type=int, default=9, help="maze width and height (default 9)")
    parser.add_argument("--seed", type=int, default=0, help="the maze's seed (default 0)")
    args = parser.parse_args(argv)
    keys = ("success", "turns", "first_visit_turn", "fastest_possible_finish")
    randomly = random_game(args.size, args.seed)
    print("\nrandom actions:", {k: randomly[k] for k in keys})
    explored = explorer_game(args.size, args.seed)
    print("explorer team: ", {k: explored[k] for k in keys})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
