"""Before a run's first game: every policy built once, every environment loaded, and what the
policies need of their model servers asked once for the whole run.

:func:`check_tasks` fails fast (:class:`~maze_envs.bench.folder.RunError`) on an unknown policy
name, a bad option or an environment that cannot be built, and collects what the policies learnt
for every game and worker of the run (``prepare_run``: :mod:`maze_envs.policies.run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from maze_envs.bench.folder import RunError
from maze_envs.bench.spec import EscapeCase, GameTask, PolicyKind
from maze_envs.policies.run import prepare_run

__all__ = ["Checked", "check_tasks"]


@dataclass
class Checked:
    """What :func:`check_tasks` found: whether any policy is async, and what the policies
    learnt for the whole run (installed in every worker: :mod:`maze_envs.policies.run`)."""

    any_async: bool
    shared: list[Any] = field(default_factory=list)


def check_tasks(tasks: Sequence[GameTask], prepare: bool = True) -> Checked:
    """Build each distinct policy once and load each env version, so that an unknown name, a
    bad option or a missing environment fails before any game. A policy with a
    ``check_config(config)`` method (a learned policy, which reads only the observations it was
    trained on) is asked about each Maze Escape setup it plays; a ``ValueError`` fails the run.
    With ``prepare``, each policy asks what the run needs of its model server, once for all its
    games and workers (``prepare_run``: :mod:`maze_envs.policies.run`). Raises
    :class:`RunError`.
    """
    import importlib

    from maze_envs._registration import find_entry
    from maze_envs.bench.envs import make_adapter, make_policy
    from maze_envs.policies.interface import is_async

    for env_id in sorted({t.case.env_id for t in tasks}):
        entry = find_entry(env_id)
        try:
            importlib.import_module(entry.module)
        except ImportError as exc:
            raise RunError(f"{entry.name} is not available: {exc}") from None
    # each distinct policy once, and each of its Maze Escape setups once
    setups_of: dict[tuple[PolicyKind, str], tuple[Any, dict[str, Any]]] = {}
    for task in tasks:
        for spec in task.policy.specs:
            key = (task.case.policy_kind, spec.model_dump_json())
            _, configs = setups_of.setdefault(key, (spec, {}))
            if isinstance(task.case, EscapeCase):
                configs.setdefault(f"{task.case.setup}, {task.case.size}", task.case.game_config)
    checked = Checked(any_async=False)
    for (kind, _), (spec, configs) in setups_of.items():
        try:
            policy = make_policy(spec.spec, kind, spec.options)
        except Exception as exc:
            raise RunError(f"policy {spec.text!r} ({kind}): {exc}") from None
        try:
            checked.any_async = checked.any_async or is_async(policy)
            check = getattr(policy, "check_config", None)
            if callable(check):  # a policy that cannot play a setup says so now
                for setup, config in configs.items():
                    try:
                        check(config)
                    except ValueError as exc:
                        raise RunError(
                            f"policy {spec.text!r} cannot play {setup!r}: {exc}"
                        ) from None
            shared = prepare_run(policy) if prepare else None
        finally:
            policy.close()
        if shared is not None:
            checked.shared.append(shared)
    setups: dict[str, GameTask] = {}
    for task in tasks:
        setups.setdefault(task.case.setup, task)
    for setup, task in setups.items():
        try:
            make_adapter(task, None).close()
        except Exception as exc:
            raise RunError(f"setup {setup!r}: the environment cannot be built: {exc}") from None
    return checked
