"""Which benchmark arm a journaled game belongs to: its setup and policy, from the game meta.

The runner stores each game's task in its meta (``meta["task"]``: the case with its setup label,
the policy entry) and the policy spec of every agent (``meta["policies"]``). The analysis puts
them in its rows, named as in the benchmark results (``setup``, ``policy``: the arm's label or
spec; ``agent_policy``: the agent's own spec, which differs within a mixed team), so a journal of
a multi-policy benchmark can be grouped by arm without joining files. Games recorded without the
runner have none (None).

Example:
    >>> meta = {"task": {"case": {"setup": "v1"}, "policy": {"team": ["explorer", "random"]}},
    ...         "policies": {"A": "explorer", "B": "random"}, "run_key": "k"}
    >>> labels = game_labels(meta)
    >>> labels.setup, labels.policy, labels.agent_policy("B"), labels.run_key
    ('v1', 'explorer+random', 'random', 'k')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from maze_envs.bench.policyspec import PolicyEntry


@dataclass(frozen=True)
class GameLabels:
    """A game's arm: setup, policy (the arm's name) and each agent's policy spec."""

    setup: str | None = None
    policy: str | None = None
    run_key: str | None = None
    policies: Mapping[str, str] = field(default_factory=dict)

    def agent_policy(self, agent: str) -> str | None:
        """The policy spec an agent played (the arm's name for the team row)."""
        return self.policies.get(agent, self.policy)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def game_labels(meta: Any) -> GameLabels:
    """The labels of a game from its meta (empty for games the runner did not play)."""
    if not isinstance(meta, Mapping):
        return GameLabels()
    task = _mapping(meta.get("task"))
    setup = _mapping(task.get("case")).get("setup")
    policy: str | None = None
    if task.get("policy") is not None:
        try:
            policy = PolicyEntry.model_validate(task["policy"]).name
        except ValidationError:
            policy = None
    policies = _mapping(meta.get("policies"))
    key = meta.get("run_key")
    return GameLabels(
        setup=None if setup is None else str(setup),
        policy=policy,
        run_key=key if isinstance(key, str) else None,
        policies={str(a): str(p) for a, p in policies.items()},
    )
