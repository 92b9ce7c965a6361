"""The datasets of the verifiers environments: games as the benchmark runner's game tasks.

Each verifiers task is one whole game, a :class:`~maze_envs.bench.spec.GameTask` expanded from an
:class:`~maze_envs.bench.spec.Experiment` with one setup and the verifiers policy
(:mod:`~llm_policies.apps.verifiers.policy`), so the games get the runner's validation, run keys,
rollout and journal meta, as ``maze-envs bench`` and the Inspect tasks do:

* Maze Escape (:func:`escape_games`): one game per maze size and seed;
* AGI Maze (:func:`agimaze_games`): one game per bundle below the packs (bundles, stage
  directories or groups) and seed; labyrinth sets (:func:`agimaze_set_games`): each target after
  the tutorials, or one set given by its paths.

Training datasets stay clear of the evaluation games (:mod:`llm_policies.apps.evaluation`): by
default Maze Escape seeds from 1,000,000 on and the AGI Maze ``TRAINING`` labyrinths; seeds or
labyrinths of a shipped evaluation are refused unless ``allow_evaluation`` (a set counts by its
target, the labyrinth it is scored on; labyrinths from another ``pack_root`` are not checked).

Example:
    >>> games = escape_games({"sizes": [5], "max_turns": 8}, "1000000-1000001", {})
    >>> [(g.case.size, g.seed, g.agents) for g in games]
    [('5x5', 1000000, ('A', 'B', 'C')), ('5x5', 1000001, ('A', 'B', 'C'))]
    >>> escape_games({"sizes": [5]}, "0", {})
    Traceback (most recent call last):
    ...
    ValueError: Maze Escape dataset: seeds 0 are evaluation seeds of the project (seed 0: ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError

from llm_policies.apps.evaluation import (
    TRAINING_PACKS,
    TRAINING_SEED_START,
    check_clear_of_evaluation,
)
from llm_policies.apps.verifiers.policy import (
    AGIMAZE_POLICY,
    ESCAPE_POLICY,
    check_policy_options,
)
from maze_envs.bench.agimaze_spec import AgiMazeSetCase
from maze_envs.bench.policyspec import PolicyEntry, PolicySpec
from maze_envs.bench.spec import AgiMazeCase, EscapeCase, Experiment, GameTask, describe_errors

#: The experiment name the games' journal meta carries (``verifiers:<kind>``).
EXPERIMENT: Final = "verifiers"
#: The seeds of a dataset unless asked: 100 Maze Escape mazes per size; one game per labyrinth.
DEFAULT_ESCAPE_SEEDS: Final = f"{TRAINING_SEED_START}-{TRAINING_SEED_START + 99}"
DEFAULT_AGIMAZE_SEEDS: Final = f"{TRAINING_SEED_START}"
#: The AGI Maze labyrinths of a dataset unless asked.
DEFAULT_PACKS: Final = TRAINING_PACKS


def _tasks(kind: str, setup: Mapping[str, Any], seeds: Any) -> list[GameTask]:
    try:
        experiment = Experiment.model_validate(
            {"name": f"{EXPERIMENT}:{kind}", "seeds": seeds, kind: [dict(setup)]}
        )
        return experiment.tasks()
    except ValidationError as exc:
        raise ValueError(f"invalid {kind} dataset: {describe_errors(exc)}") from None


def _entry(spec: str, env_kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
    check_policy_options(env_kind, options)
    return PolicyEntry(policy=PolicySpec(spec=spec, options=dict(options))).model_dump(mode="json")


def escape_games(
    setup: Mapping[str, Any],
    seeds: Any,
    options: Mapping[str, Any],
    *,
    allow_evaluation: bool = False,
) -> list[GameTask]:
    """One game per maze size and seed of a Maze Escape setup, every agent a verifiers seat.

    ``setup``: the fields of :class:`~maze_envs.bench.spec.EscapeSetup` (``preset``, ``sizes``,
    ``max_turns``, ``version``, ``set``); ``options``: the policy's options.
    """
    policy = _entry(ESCAPE_POLICY, "escape", options)
    games = _tasks("escape", {**setup, "policies": [policy]}, seeds)
    if not allow_evaluation:
        check_clear_of_evaluation(seeds=[g.seed for g in games], what="Maze Escape dataset")
    return games


def _shipped(pack_root: str | None) -> bool:
    return pack_root is None


def agimaze_games(
    setup: Mapping[str, Any],
    seeds: Any,
    options: Mapping[str, Any],
    *,
    allow_evaluation: bool = False,
) -> list[GameTask]:
    """One game per bundle below the packs of an AGI Maze setup, and seed.

    ``setup``: the fields of :class:`~maze_envs.bench.spec.AgiMazeSetup` (``packs``,
    ``budget_factor``, ``max_steps``, ``pack_root``, ``pack_version``).
    """
    policy = _entry(AGIMAZE_POLICY, "agimaze", options)
    games = _tasks("agimaze", {**setup, "policies": [policy]}, seeds)
    if not allow_evaluation and _shipped(setup.get("pack_root")):
        check_clear_of_evaluation(
            bundles=[g.case.pack for g in games if isinstance(g.case, AgiMazeCase)],
            what="AGI Maze dataset",
        )
    return games


def agimaze_set_games(
    setup: Mapping[str, Any],
    seeds: Any,
    options: Mapping[str, Any],
    *,
    allow_evaluation: bool = False,
) -> list[GameTask]:
    """One game per labyrinth set of a set setup, and seed.

    ``setup``: the fields of :class:`~maze_envs.bench.agimaze_spec.AgiMazeSetSetup` (``targets``
    with ``tutorials``, or ``paths``; ``budget_factor``, ``pack_root``, ``pack_version``).
    """
    policy = _entry(AGIMAZE_POLICY, "agimaze", options)
    games = _tasks("agimaze_set", {**setup, "policies": [policy]}, seeds)
    if not allow_evaluation and _shipped(setup.get("pack_root")):
        check_clear_of_evaluation(
            bundles=[g.case.target for g in games if isinstance(g.case, AgiMazeSetCase)],
            what="AGI Maze labyrinth-set dataset",
        )
    return games


def game_name(game: GameTask) -> str:
    """A short readable name of a game: ``9x9/seed=3``, ``TRAINING/.../0004.json/seed=0``."""
    case = game.case
    if isinstance(case, EscapeCase):
        where = case.size
    elif isinstance(case, AgiMazeCase):
        where = case.pack
    else:
        where = f"set:{case.target}"
    return f"{where}/seed={game.seed}"


def seats(game: GameTask) -> Sequence[str]:
    """The players of a game: the Maze Escape agents, or the AGI Maze player."""
    return game.agents
