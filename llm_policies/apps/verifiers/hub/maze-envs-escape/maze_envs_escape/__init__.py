"""Maze Escape (maze-envs) as a verifiers environment: ``vf-eval maze_envs_escape -m MODEL``.

The taskset, the env and the seats' harness are ``llm_policies.apps.verifiers`` of the
``maze-envs`` package; this package only gives them the name verifiers and the Environments Hub
install and resolve them by (verifiers finds the classes through ``__all__``).
"""

from llm_policies.apps.verifiers.escape import EscapeEnv, EscapeTaskset, load_environment
from llm_policies.apps.verifiers.harness import MazeChatHarness

__all__ = ["EscapeEnv", "EscapeTaskset", "MazeChatHarness", "load_environment"]
