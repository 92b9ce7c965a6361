"""Maze Escape and AGI Maze as Inspect AI tasks: one harness, two front ends.

``pip install 'maze-envs[inspect]'`` registers the tasks (entry point ``maze_envs`` of the group
``inspect_ai``), so ``inspect eval maze_envs/escape --model anthropic/claude-sonnet-5-5`` plays
full games through Inspect's model API: its providers, retries, rate limits and logs. The
prompts, the reply schema, the quirk-tolerant parsing and the decision records are the
``llm_policies`` harness itself, and every game is also written to our journal, so ``maze-envs
verify``, ``view`` and ``analyze`` work on it.

Modules, one part each:

* :mod:`~llm_policies.apps.inspect.backend`: a ``ModelBackend`` on ``inspect_ai.model``;
* :mod:`~llm_policies.apps.inspect.policy`: the LLM policies on it (policy-registry factories);
* :mod:`~llm_policies.apps.inspect.games`: one game per sample (the dataset);
* :mod:`~llm_policies.apps.inspect.solver`: plays the sample's game into the journal;
* :mod:`~llm_policies.apps.inspect.sets`: the labyrinth-set game loop;
* :mod:`~llm_policies.apps.inspect.scores`, :mod:`~llm_policies.apps.inspect.scorer`: what a
  game scores;
* :mod:`~llm_policies.apps.inspect.tasks`: the tasks and their ``-T`` parameters.
"""

from __future__ import annotations

from typing import Any

try:
    import inspect_ai  # noqa: F401  (the optional dependency this package is built on)
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the Inspect AI tasks need inspect-ai; install the extra: pip install 'maze-envs[inspect]'"
    ) from error

#: The tasks (``maze_envs/escape``...), imported from :mod:`~llm_policies.apps.inspect.tasks` on
#: first use, so importing one part of this package does not register them all.
__all__ = ["agimaze", "agimaze_set", "escape"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from llm_policies.apps.inspect import tasks

        return getattr(tasks, name)
    raise AttributeError(f"module 'llm_policies.apps.inspect' has no attribute {name!r}")
