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

from llm_policies.apps.evaluation import (
    TRAINING_PACKS,
    TRAINING_SEED_START,
    check_clear_of_evaluation,
    front_games,
)
from llm_policies.apps.verifiers.policy import (
    AGIMAZE_POLICY,
    ESCAPE_POLICY,
    check_policy_options,
)
from maze_envs.bench.agimaze_spec import AgiMazeSetCase
from maze_envs.bench.policyspec import PolicyEntry, PolicySpec
from maze_envs.bench.spec import AgiMazeCase, EscapeCase, GameTask

#: The experiment name the games' journal meta carries (``verifiers:<kind>``).
EXPERIMENT: Final = "verifiers"
#: The seeds of a dataset unless asked: 100 Maze Escape mazes per size; one game per labyrinth.
DEFAULT_ESCAPE_SEEDS: Final = f"{TRAINING_SEED_START}-{TRAINING_SEED_START + 99}"
DEFAULT_AGIMAZE_SEEDS: Final = f"{TRAINING_SEED_START}"
#: The AGI Maze labyrinths of a dataset unless asked.
DEFAULT_PACKS: Final = TRAINING_PACKS


def _games(
    kind: str,
    spec: str,
    env_kind: str,
    setup: Mapping[str, Any],
    seeds: Any,
    options: Mapping[str, Any],
) -> list[GameTask]:
    """The games of ``setup``, every agent the verifiers policy ``spec`` with ``options``."""
    policy = _entry(spec, env_kind, options)
    return front_games(EXPERIMENT, kind, {**setup, "policies": [policy]}, seeds, "dataset")


def _check_bundles(
    bundles: list[str], setup: Mapping[str, Any], allow_evaluation: bool, what: str
) -> None:
    """Refuse evaluation labyrinths in a dataset of the shipped packs (unless allowed)."""
    if not allow_evaluation and setup.get("pack_root") is None:
        check_clear_of_evaluation(bundles=bundles, what=what)


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
    games = _games("escape", ESCAPE_POLICY, "escape", setup, seeds, options)
    if not allow_evaluation:
        check_clear_of_evaluation(seeds=[g.seed for g in games], what="Maze Escape dataset")
    return games


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
    games = _games("agimaze", AGIMAZE_POLICY, "agimaze", setup, seeds, options)
    packs = [g.case.pack for g in games if isinstance(g.case, AgiMazeCase)]
    _check_bundles(packs, setup, allow_evaluation, "AGI Maze dataset")
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
    games = _games("agimaze_set", AGIMAZE_POLICY, "agimaze", setup, seeds, options)
    targets = [g.case.target for g in games if isinstance(g.case, AgiMazeSetCase)]
    _check_bundles(targets, setup, allow_evaluation, "AGI Maze labyrinth-set dataset")
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
