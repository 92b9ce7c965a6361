"""Applications that drive the games with a language model, apart from the LLM policy itself.

* :mod:`llm_policies.apps.evaluation`: the games the project evaluates on (the seeds of the shipped
  studies and front ends, the AGI Maze evaluation labyrinths) and the guard that keeps a training
  dataset clear of them;
* :mod:`llm_policies.apps.verifiers`: Maze Escape and AGI Maze as verifiers environments (the
  ``verifiers`` extra, in its own environment: docs/hubs.md).

The Inspect AI tasks are :mod:`llm_policies.inspect` (docs/inspect.md).
"""
