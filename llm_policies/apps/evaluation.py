"""The games the project evaluates on, and the guard that keeps a training dataset clear of them.

Shipped evaluations:

* **Maze Escape**: a game is a maze size and a seed (the seed draws the maze and its starts).
  The evaluation seeds (:func:`evaluation_seeds`) are those of every shipped study
  (``maze_envs/studies/data/*.toml``), the benchmark runner's default
  (:class:`~maze_envs.bench.spec.Experiment`'s ``seeds``) and the default of the Inspect task
  ``maze_envs/escape`` (:data:`INSPECT_ESCAPE_SEEDS`). A seed counts at every size.
* **AGI Maze**: a game is a bundle, a fixed labyrinth (the seed only feeds the policies). The
  evaluation bundles (:func:`evaluation_bundles`) are the benchmark's evaluation groups
  (:data:`EVALUATION_GROUPS`: ``CLASSIC`` and ``EXTENDED``, the EnvTraverse evaluation
  labyrinths, from which the labyrinth sets' targets come) and the default labyrinths of the
  Inspect task ``maze_envs/agimaze`` (:data:`INSPECT_AGIMAZE_PACKS`, the tutorials).

A training dataset (the verifiers environments') takes Maze Escape seeds from
:data:`TRAINING_SEED_START` on and AGI Maze labyrinths from :data:`TRAINING_PACKS`;
:func:`check_clear_of_evaluation` refuses one that meets an evaluation game, naming where that
game is evaluated, unless asked to allow it.

Example:
    >>> 3 in evaluation_seeds()["study:radio"], TRAINING_SEED_START in all_evaluation_seeds()
    (True, False)
    >>> "CLASSIC/MEDIUM/keys/6x6/0005.json" in all_evaluation_bundles()
    True
    >>> check_clear_of_evaluation(seeds=[TRAINING_SEED_START], what="escape dataset")
    >>> check_clear_of_evaluation(seeds=[0, 5], what="escape dataset")
    Traceback (most recent call last):
    ...
    ValueError: escape dataset: seeds 0, 5 are evaluation seeds of the project (seed 0: bench ...
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Final

from pydantic import ValidationError

from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import Experiment, GameTask, describe_errors

#: The seeds of the Inspect task ``maze_envs/escape`` unless ``-T seeds=`` says otherwise.
INSPECT_ESCAPE_SEEDS: Final = "0-9"
#: The seeds of the Inspect tasks ``maze_envs/agimaze`` and ``maze_envs/agimaze_set``.
INSPECT_AGIMAZE_SEEDS: Final = "0"
#: The labyrinths of the Inspect task ``maze_envs/agimaze`` unless ``-T packs=`` says otherwise.
INSPECT_AGIMAZE_PACKS: Final = "TUTORIAL"
#: The AGI Maze groups the benchmark evaluates on (the labyrinth sets' targets come from them).
EVALUATION_GROUPS: Final = ("CLASSIC", "EXTENDED")
#: The AGI Maze labyrinths made for training (calibrated stages of the real training table).
TRAINING_PACKS: Final = ("TRAINING",)
#: The first Maze Escape seed of a training dataset: far above every shipped evaluation seed.
TRAINING_SEED_START: Final = 1_000_000
#: How many overlapping games an error names before "..." (the rest are counted).
_SHOWN: Final = 3


@cache
def evaluation_seeds() -> Mapping[str, frozenset[int]]:
    """The Maze Escape evaluation seeds, by where they are evaluated: ``study:<name>`` for each
    shipped study, ``bench default`` for the runner's default, ``inspect:maze_envs/escape``."""
    from maze_envs.studies.catalog import shipped

    found: dict[str, frozenset[int]] = {
        f"study:{study.name}": frozenset(study.seeds) for study, _ in shipped()
    }
    found["bench default"] = frozenset(Experiment().seeds)
    found["inspect:maze_envs/escape"] = frozenset(parse_seeds(INSPECT_ESCAPE_SEEDS))
    return found


def all_evaluation_seeds() -> frozenset[int]:
    """Every Maze Escape evaluation seed (:func:`evaluation_seeds`, all sources)."""
    return frozenset().union(*evaluation_seeds().values())


@cache
def evaluation_bundles() -> Mapping[str, frozenset[str]]:
    """The AGI Maze evaluation bundles of the shipped packs, by where they are evaluated:
    ``agimaze:<group>`` for each evaluation group, ``inspect:maze_envs/agimaze`` for that task's
    default labyrinths."""
    from maze_envs.agimaze.packs import list_bundles

    found = {
        f"agimaze:{group}": frozenset(list_bundles(f"{group}/")) for group in EVALUATION_GROUPS
    }
    found["inspect:maze_envs/agimaze"] = frozenset(list_bundles(f"{INSPECT_AGIMAZE_PACKS}/"))
    return found


def all_evaluation_bundles() -> frozenset[str]:
    """Every AGI Maze evaluation bundle (:func:`evaluation_bundles`, all sources)."""
    return frozenset().union(*evaluation_bundles().values())


def _where(item: object, sources: Mapping[str, frozenset[object]]) -> list[str]:
    return sorted(name for name, items in sources.items() if item in items)


def check_clear_of_evaluation(
    *,
    seeds: Iterable[int] = (),
    bundles: Iterable[str] = (),
    what: str,
) -> None:
    """Raise ValueError when ``seeds`` (Maze Escape) or ``bundles`` (AGI Maze, shipped packs)
    meet an evaluation game; the message names the games, where each is evaluated, and the way
    out. ``what`` names the dataset in the message."""
    problems = []
    seed_sources = evaluation_seeds()
    hit_seeds = sorted({s for s in seeds if _where(s, seed_sources)})
    if hit_seeds:
        shown = ", ".join(str(s) for s in hit_seeds[:_SHOWN])
        more = f" and {len(hit_seeds) - _SHOWN} more" if len(hit_seeds) > _SHOWN else ""
        first = hit_seeds[0]
        places = _where(first, seed_sources)
        listed = ", ".join(places[:_SHOWN]) + (", ..." if len(places) > _SHOWN else "")
        problems.append(
            f"seeds {shown}{more} are evaluation seeds of the project (seed {first}: {listed}); "
            f"take seeds from {TRAINING_SEED_START} on"
        )
    bundle_sources = evaluation_bundles()
    hit_bundles = sorted({b for b in bundles if _where(b, bundle_sources)})
    if hit_bundles:
        shown = ", ".join(hit_bundles[:_SHOWN])
        more = f" and {len(hit_bundles) - _SHOWN} more" if len(hit_bundles) > _SHOWN else ""
        places = _where(hit_bundles[0], bundle_sources)
        problems.append(
            f"labyrinths {shown}{more} are evaluation labyrinths ({', '.join(places)}); take them "
            f"from {', '.join(TRAINING_PACKS)}"
        )
    if problems:
        raise ValueError(
            f"{what}: {'; '.join(problems)}, or allow evaluation games (allow_evaluation=true)"
        )


def front_games(
    front: str, kind: str, setup: Mapping[str, Any], seeds: Any, what: str
) -> list[GameTask]:
    """The games of one setup of a hub front end (``front``: ``inspect``, ``verifiers``): the
    benchmark's experiment ``front:kind`` of ``setup`` (its policies included) over ``seeds``;
    ValueError naming what is wrong with the ``what`` (``task parameters``, ``dataset``)."""
    try:
        experiment = Experiment.model_validate(
            {"name": f"{front}:{kind}", "seeds": seeds, kind: [dict(setup)]}
        )
        return experiment.tasks()
    except ValidationError as exc:
        raise ValueError(f"invalid {kind} {what}: {describe_errors(exc)}") from None
