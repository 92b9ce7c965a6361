"""A team of depth-first explorers plays a journaled Maze Escape game; then the journal is
verified by replay and the final state is drawn as text.

Run: ``python examples/escape_explorers.py`` (writes ``explorers.sqlite`` in a temp folder)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_to_model
from maze_envs.policies import TremauxExplorer
from maze_envs.verify import verify_journal


def main() -> None:
    journal_path = Path(tempfile.mkdtemp()) / "explorers.sqlite"
    env = maze_escape_v0.parallel_env(
        preset="navigator", width=12, height=12, render_mode="ansi", journal=journal_path
    )
    observations, _ = env.reset(seed=7)
    team = {agent: TremauxExplorer() for agent in env.possible_agents}
    for number, (agent, policy) in enumerate(team.items()):
        policy.reset(agent, number)
    while env.agents:
        actions = {
            agent: team[agent].act(observation_to_model(observations[agent], env.config, agent))
            for agent in env.agents
        }
        observations, *_ = env.step(actions)
    print(env.render())
    print("outcome:", env.outcome())
    env.close()
    for report in verify_journal(journal_path):
        print("verified:", report)


if __name__ == "__main__":
    main()
