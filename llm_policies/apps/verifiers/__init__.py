"""Maze Escape and AGI Maze as verifiers environments (``pip install 'maze-envs[verifiers]'``).

verifiers (0.4, ``verifiers.v1``) runs an environment as a *taskset* (the games, with their
rewards), an *env* (how one task becomes one episode: here the game loop, with the model's
seats as verifiers agents) and a *harness* (the program a seat's model runs in). The pieces:

* :mod:`~llm_policies.apps.verifiers.games`: the datasets (Maze Escape seeds, AGI Maze bundles
  and labyrinth sets) as the benchmark runner's game tasks, clear of the evaluation games;
* :mod:`~llm_policies.apps.verifiers.episode`: one game played by the LLM policies through the
  seats' interactions, into the journal, by the runner's own rollout;
* :mod:`~llm_policies.apps.verifiers.backend`: the policies' model backend over a verifiers
  interaction; :mod:`~llm_policies.apps.verifiers.wire`: a request as chat messages;
* :mod:`~llm_policies.apps.verifiers.harness`: the seats' harness, one chat completion per turn
  through verifiers' interception (so verifiers records every call in the trace);
* :mod:`~llm_policies.apps.verifiers.policy`: the LLM policies on that backend (runner factories);
* :mod:`~llm_policies.apps.verifiers.rubric`: the rewards and metrics, from the project's scoring;
* :mod:`~llm_policies.apps.verifiers.escape`, :mod:`~llm_policies.apps.verifiers.agimaze`: the
  tasksets and envs, installed by name as the packages ``maze_envs_escape`` and
  ``maze_envs_agimaze`` (``vf-eval maze_envs_escape``; docs/hubs.md).

verifiers needs ``openai<3`` and the ``llm`` extra (pydantic-ai) ``openai>=3.50``: the two extras
go in separate environments. Nothing here imports pydantic-ai: the model calls are verifiers'.
"""

from __future__ import annotations

try:
    import verifiers.v1  # noqa: F401  (the optional dependency this package is built on)
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the verifiers environments need verifiers; install the extra in an environment of its "
        "own (not with the llm extra): pip install 'maze-envs[verifiers]'"
    ) from error
