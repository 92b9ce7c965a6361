"""Applications that drive the games with a language model, apart from the LLM policy itself.

* :mod:`llm_policies.apps.evaluation`: the games the project evaluates on (the seeds of the shipped
  studies and front ends, the AGI Maze evaluation labyrinths) and the guard that keeps a training
  dataset clear of them;
* :mod:`llm_policies.apps.verifiers`: Maze Escape and AGI Maze as verifiers environments (the
  ``verifiers`` extra, in its own environment: docs/hubs.md).

* :mod:`llm_policies.apps.inspect`: the Inspect AI tasks (docs/inspect.md);
* :mod:`llm_policies.apps.study_run` (with its dry run :mod:`~llm_policies.apps.study_plan`):
  ``maze-envs study run``, a study played with a model through the benchmark runner;
* :mod:`llm_policies.apps.replay` (its figures :mod:`~llm_policies.apps.replay_report`):
  ``maze-envs replay-decisions``.

The LLM policy below them (backends, prompts, harness, registry, policies) never imports these
nor the runner (the ``llm-policy-apart-from-apps`` import contract). Their old import paths
(``llm_policies.inspect``, ``llm_policies.study_run``...) still work, with a DeprecationWarning.
"""
