"""The Inspect AI tasks ``maze_envs/escape``, ``maze_envs/agimaze`` and ``maze_envs/agimaze_set``.

::

    inspect eval maze_envs/escape --model anthropic/claude-sonnet-5-5 \\
        -T preset=navigator -T sizes=9,13 -T seeds=0-19 -T prompt_version=v12
    inspect eval maze_envs/agimaze --model openai/gpt-4o-mini -T packs=TRAINING/S1-rivers
    inspect eval maze_envs/agimaze_set --model ollama/qwen3:8b \\
        -T targets=CLASSIC/HARD/pits/8x8/0005.json

Each sample is one whole game (:mod:`~llm_policies.apps.inspect.games`), played by the LLM policies
on the model under evaluation (:mod:`~llm_policies.apps.inspect.solver`), written to our journal
(``journal=``, default ``logs/maze_envs.sqlite`` beside Inspect's logs, or under
``$INSPECT_LOG_DIR``) and scored by :mod:`~llm_policies.apps.inspect.scorer`.

Task parameters (``-T key=value``):

* the setup: Maze Escape ``preset``, ``sizes`` (``9``, ``9,13,17``, ``13x9``), ``max_turns``,
  ``version`` (0 or 1) and any configuration switch of
  :class:`~maze_envs.escape.types.Config` by name (``radio=false``, ``coordinates=own``) or all
  at once (``config='{radio: false}'``); AGI Maze ``packs`` (bundles, directories or groups),
  ``budget_factor``, ``max_steps``, ``pack_root``; labyrinth sets
  ``targets`` (each played after the seven tutorials) or ``paths`` (one whole set);
* ``seeds`` (``0-19``, ``1,5,9``);
* the harness, as the LLM policies take it
  (:func:`~llm_policies.apps.inspect.policy.policy_option_names`):
  ``prompt_version``, ``output_mode`` (``tool``, ``native``, ``prompted``), ``check``,
  ``order``, ``history``, ``window``, ``parse_retries``, ``temperature``, caps...;
* ``journal``: the SQLite file every game is written to.

Every parameter is checked when the task is made, before any model is called. Inspect names a
package's tasks after the top-level import package of their module; these tasks belong to the
``maze-envs`` distribution (entry point ``maze_envs`` of the group ``inspect_ai``) but live above
``maze_envs`` in the layering, so each declares ``maze_envs`` as its module
(:func:`_in_maze_envs`, under Inspect's own ``@task``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.util import registry_info

from llm_policies.apps.evaluation import (
    INSPECT_AGIMAZE_PACKS,
    INSPECT_AGIMAZE_SEEDS,
    INSPECT_ESCAPE_SEEDS,
)
from llm_policies.apps.inspect import stand_in  # noqa: F401  (registers the provider stand-in/...)
from llm_policies.apps.inspect.games import agimaze_games, escape_games, game_sample, set_games
from llm_policies.apps.inspect.policy import check_policy_options
from llm_policies.apps.inspect.scorer import agimaze_score, agimaze_set_score, escape_score
from llm_policies.apps.inspect.solver import play_game
from maze_envs.agimaze.set_env import DEFAULT_TARGET
from maze_envs.bench.spec import DEFAULT_BUDGET_FACTOR
from maze_envs.escape.types import Config

#: The journal file name, in Inspect's log directory unless ``journal=`` says otherwise.
JOURNAL_NAME: Final = "maze_envs.sqlite"
#: The labyrinths of ``maze_envs/agimaze`` unless ``packs`` says otherwise.
DEFAULT_PACKS: Final = INSPECT_AGIMAZE_PACKS
#: Default seeds of a task (the project's evaluation seeds: llm_policies.apps.evaluation).
DEFAULT_SEEDS: Final = INSPECT_ESCAPE_SEEDS

F = TypeVar("F", bound=Callable[..., Any])
#: This module's name when imported from the package (the entry point's value).
__spec_name__: Final = "llm_policies.apps.inspect.tasks"


def _in_maze_envs(function: F) -> F:
    """Put ``function`` in the ``maze_envs`` package, whose name Inspect gives its task (module
    docstring); loaded as a file (``inspect eval .../tasks.py@escape``) it keeps its module."""
    if function.__module__ == __spec_name__:
        function.__module__ = "maze_envs"
    return function


def _named_whole(function: F) -> F:
    """``function``'s task registered as ``maze_envs/<name>`` when Inspect gave it its plain name.

    Inspect prefixes a task's name with its package only when it finds the package installed
    (site-packages, or an editable install's metadata); a checkout ahead of that metadata on
    ``sys.path`` (its ``maze_envs.egg-info``) hides it: the task is then registered again, under
    its whole name, and that registration is the module's.
    """
    if function.__module__ != "maze_envs" or registry_info(function).name != function.__name__:
        return function
    whole: F = task(name=f"maze_envs/{function.__name__}")(function.__wrapped__)  # type: ignore[attr-defined]
    return whole


def default_journal() -> Path:
    """``$INSPECT_LOG_DIR/maze_envs.sqlite`` (a local log directory), else ``logs/...``."""
    log_dir = os.environ.get("INSPECT_LOG_DIR", "")
    if not log_dir or "://" in log_dir:
        log_dir = "logs"
    return Path(log_dir) / JOURNAL_NAME


def _journal(journal: str | None) -> str:
    # absolute now: Inspect may run a task from another working directory
    return str((Path(journal) if journal else default_journal()).expanduser().resolve())


def _list(value: Any, what: str) -> list[Any] | None:
    """A ``-T`` list: a YAML list, a comma-separated text, or one value."""
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [value]
    raise ValueError(f"{what} must be a list or a comma-separated text, got {value!r}")


def _plural(options: dict[str, Any], singular: str, plural: str, value: Any) -> Any:
    """``-T size=9`` for ``-T sizes=9`` (and ``pack``, ``target``): one of the two, not both."""
    if singular not in options:
        return value
    if value is not None:
        raise ValueError(f"give {plural!r} or {singular!r}, not both")
    return options.pop(singular)


def _config(config: Any, switches: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            raise ValueError(
                f"config must be a mapping such as '{{\"radio\": false}}', got {config!r}"
            ) from None
    if config is not None and not isinstance(config, Mapping):
        raise ValueError(f"config must be a mapping of Config fields, got {config!r}")
    merged = {**dict(config or {}), **switches}
    unknown = sorted(set(merged) - set(Config.model_fields))
    if unknown:
        raise ValueError(f"unknown Maze Escape config field(s) {unknown}")
    return merged


def _policy_options(env_kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
    given = {k: v for k, v in options.items() if v is not None}
    check_policy_options(env_kind, given)
    return given


def _task(
    games: Sequence[Any], scorer: Any, journal: str, name: str, metadata: dict[str, Any]
) -> Task:
    return Task(
        dataset=MemoryDataset([game_sample(g) for g in games], name=name),
        solver=play_game(journal),
        scorer=scorer,
        metadata={**metadata, "journal": journal},
    )


@task
@_in_maze_envs
def escape(
    preset: str | None = None,
    sizes: Any = None,
    max_turns: int | None = None,
    version: int = 1,
    config: Any = None,
    seeds: Any = DEFAULT_SEEDS,
    prompt_version: str | None = None,
    output_mode: str | None = None,
    journal: str | None = None,
    **options: Any,
) -> Task:
    """Maze Escape: each sample one game of a team of the model, one agent per call.

    Scored by team success and finish / fastest possible finish. ``options``: Maze Escape
    config switches by name (``radio=false``) and the LLM policies' options (``check=required``,
    ``temperature=0.2``...); ``size`` is accepted for ``sizes``.
    """
    sizes = _plural(options, "size", "sizes", sizes)
    switches = {k: v for k, v in options.items() if k in Config.model_fields}
    policy = {k: v for k, v in options.items() if k not in switches}
    policy.update(prompt_version=prompt_version, output_mode=output_mode)
    setup: dict[str, Any] = {"version": version, "set": _config(config, switches)}
    if preset is not None:
        setup["preset"] = preset
    if sizes is not None:
        setup["sizes"] = _list(sizes, "sizes")
    if max_turns is not None:
        setup["max_turns"] = max_turns
    games = escape_games(setup, seeds, _policy_options("escape", policy))
    path = _journal(journal)
    return _task(games, escape_score(), path, "maze_envs/escape", {"setup": setup})


@task
@_in_maze_envs
def agimaze(
    packs: Any = None,
    budget_factor: float = DEFAULT_BUDGET_FACTOR,
    max_steps: int | None = None,
    pack_root: str | None = None,
    seeds: Any = INSPECT_AGIMAZE_SEEDS,
    prompt_version: str | None = None,
    output_mode: str | None = None,
    history: str | None = None,
    journal: str | None = None,
    **options: Any,
) -> Task:
    """AGI Maze: each sample one labyrinth (every bundle below ``packs``) and seed.

    Scored by solved (within ``budget_factor`` x ``max_steps``) and RHAE70. ``packs`` default
    to ``TUTORIAL``; ``pack`` is accepted for ``packs``.
    """
    packs = _plural(options, "pack", "packs", packs) or DEFAULT_PACKS
    policy = dict(options, prompt_version=prompt_version, output_mode=output_mode, history=history)
    setup: dict[str, Any] = {
        "packs": _list(packs, "packs"),
        "budget_factor": budget_factor,
    }
    if max_steps is not None:
        setup["max_steps"] = max_steps
    if pack_root is not None:
        setup["pack_root"] = str(Path(pack_root).expanduser().resolve())
    games = agimaze_games(setup, seeds, _policy_options("agimaze", policy))
    path = _journal(journal)
    return _task(games, agimaze_score(), path, "maze_envs/agimaze", {"setup": setup})


@task
@_in_maze_envs
def agimaze_set(
    targets: Any = None,
    paths: Any = None,
    budget_factor: float = DEFAULT_BUDGET_FACTOR,
    pack_root: str | None = None,
    seeds: Any = INSPECT_AGIMAZE_SEEDS,
    prompt_version: str | None = None,
    output_mode: str | None = None,
    history: str | None = None,
    journal: str | None = None,
    **options: Any,
) -> Task:
    """AGI Maze labyrinth sets: each sample the seven tutorials and then a target, one seed.

    ``targets`` default to ``CLASSIC/MEDIUM/keys/6x6/0005.json``; ``paths`` gives one whole set
    instead. Scored by the target solved and its RHAE70, and the set's shares. ``target`` is
    accepted for ``targets``.
    """
    targets = _plural(options, "target", "targets", targets)
    policy = dict(options, prompt_version=prompt_version, output_mode=output_mode, history=history)
    root = None if pack_root is None else str(Path(pack_root).expanduser().resolve())
    path_list = _list(paths, "paths")
    target_list = _list(targets, "targets")
    if target_list is None and not path_list:
        target_list = [DEFAULT_TARGET]
    games = set_games(
        targets=[str(t) for t in target_list or []],
        paths=[str(p) for p in path_list or []],
        budget_factor=float(budget_factor),
        pack_root=root,
        seeds=seeds,
        options=_policy_options("agimaze", policy),
    )
    path = _journal(journal)
    metadata = {"sets": sorted({g.name for g in games}), "budget_factor": budget_factor}
    return _task(games, agimaze_set_score(), path, "maze_envs/agimaze_set", metadata)


escape = _named_whole(escape)
agimaze = _named_whole(agimaze)
agimaze_set = _named_whole(agimaze_set)
