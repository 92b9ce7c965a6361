"""Which arms a study compares, and the check that compared arms play the same mazes.

An arm of a run is ``(arm name, policy label)``: the study's arm, played by one model (or by
the arm's classical policy). A study's ``[[compare]]`` pair becomes one comparison per model
(the same model in both arms; a classical arm is the same for every model), and
``compare_models`` adds every pair of models on each model arm.

Pairing is what makes a small study worth running: two arms are compared game by game, the
same maze and the same seed on both sides, so the maze's own difficulty cancels out. That holds
only when the two arms' rules leave the maze alone (the layout depends on the size, the number
of agents and landmarks, the generator and the seed, not on the radio or the prompt).
:func:`check_same_mazes` builds both arms' mazes and refuses a comparison whose mazes differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from maze_envs.bench.spec import EscapeCase, EscapeSetup, Experiment
from maze_envs.studies.spec import Study

Arm = tuple[str, str]


@dataclass(frozen=True)
class Pair:
    """One comparison of a run: ``first`` minus ``second``."""

    first: Arm
    second: Arm
    about: str = ""

    @property
    def name(self) -> str:
        return f"{describe_arm(self.first)} vs {describe_arm(self.second)}"


def describe_arm(arm: Arm) -> str:
    """``arm (policy)``."""
    return f"{arm[0]} ({arm[1]})"


def run_arms(study: Study, models: Sequence[str], names: Sequence[str]) -> list[Arm]:
    """The arms of a run, in the study's order: each model arm once per model."""
    out: list[Arm] = []
    for arm in study.arms:
        if arm.name not in names:
            continue
        if arm.uses_model:
            out += [(arm.name, model) for model in models]
        else:
            assert arm.policy is not None
            out.append((arm.name, arm.policy))
    return out


def comparisons(study: Study, models: Sequence[str], names: Sequence[str]) -> list[Pair]:
    """The comparisons of a run of ``study`` by ``models`` over the arms ``names``."""
    pairs: list[Pair] = []
    for compare in study.compare:
        if compare.first not in names or compare.second not in names:
            continue
        first, second = study.arm(compare.first), study.arm(compare.second)
        for model in models:
            pair = Pair(
                (first.name, model if first.uses_model else str(first.policy)),
                (second.name, model if second.uses_model else str(second.policy)),
                compare.about,
            )
            if pair not in pairs:
                pairs.append(pair)
    if study.compare_models:
        for arm in study.arms:
            if arm.uses_model and arm.name in names:
                for one, other in combinations(models, 2):
                    pairs.append(Pair((arm.name, one), (arm.name, other), "the same setup"))
    return pairs


def _case(setup: EscapeSetup, size: str) -> EscapeCase | None:
    return next((case for case in setup.cases() if case.size == size), None)


def _layout(case: EscapeCase, seed: int) -> tuple[object, ...]:
    from maze_envs.escape.env import MazeEscapeEnv

    env = MazeEscapeEnv(case.game_config)
    env.reset(seed=seed)
    layout = env.layout
    env.close()
    return (
        np.asarray(layout.maze).tobytes(),
        layout.exit_cell,
        layout.doorway,
        layout.landmarks,
        layout.starts,
    )


def check_same_mazes(experiment: Experiment, pairs: Sequence[Pair]) -> None:
    """Raise ValueError when two compared arms would not play the same mazes: different sizes,
    or a first seed whose maze differs between them."""
    setups = {setup.name: setup for setup in experiment.escape}
    seed = experiment.seeds[0]
    checked: set[tuple[str, str]] = set()
    for pair in pairs:
        names = (pair.first[0], pair.second[0])
        if names[0] == names[1] or names in checked:
            continue
        checked.add(names)
        one, other = setups[names[0]], setups[names[1]]
        sizes = [case.size for case in one.cases()]
        if sizes != [case.size for case in other.cases()]:
            raise ValueError(f"{pair.name}: the two arms play different maze sizes")
        for size in sizes:
            first, second = _case(one, size), _case(other, size)
            assert first is not None and second is not None
            if _layout(first, seed) != _layout(second, seed):
                raise ValueError(
                    f"{pair.name}: the two arms play different mazes at {size} (seed {seed}); "
                    "an arm may change what the agents may do, not the maze (size, agents, "
                    "landmarks, generator)"
                )
