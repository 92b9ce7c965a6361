"""Play one Maze Escape game with random actions and print what happened.

Run: ``python examples/escape_random.py``
"""

from __future__ import annotations

from maze_envs import maze_escape_v0


def main() -> None:
    env = maze_escape_v0.parallel_env(preset="full", width=9, height=9, max_turns=200)
    observations, infos = env.reset(seed=42)
    print("agents:", env.agents, "| ground truth:", env.ground_truth())
    print("A's first observation:", observations["A"])
    returns = dict.fromkeys(env.agents, 0.0)
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
        if any(terminations.values()) or any(truncations.values()):
            print("last infos:", infos)
    print("returns:", returns)
    print("outcome:", env.outcome())
    env.close()


if __name__ == "__main__":
    main()
