"""The games of an Inspect task, one per sample: what to play, as data.

Maze Escape and single AGI Maze labyrinths are the benchmark runner's own game tasks
(:class:`~maze_envs.bench.spec.GameTask`, expanded from an
:class:`~maze_envs.bench.spec.Experiment` with one setup and the Inspect policy), so they get the
runner's validation, run keys, rollout and journal meta. Labyrinth sets, which the runner does
not play, are :class:`SetGame` objects. Each game becomes an Inspect
:class:`~inspect_ai.dataset.Sample` whose metadata holds the game (``metadata["game"]``, plain
JSON) and the columns a researcher filters on (env id, setup, size or pack, seed).

Example:
    >>> tasks = escape_games({"sizes": [5, 7], "max_turns": 20}, "0-1", {})
    >>> [(t.case.size, t.seed) for t in tasks]
    [('5x5', 0), ('5x5', 1), ('7x7', 0), ('7x7', 1)]
    >>> game_sample(tasks[0]).id
    '5x5/seed=0'
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from inspect_ai.dataset import Sample
from pydantic import BaseModel, ConfigDict, Field

from llm_policies.apps.evaluation import front_games
from llm_policies.apps.inspect.policy import AGIMAZE_POLICY, ESCAPE_POLICY
from maze_envs.agimaze.set_env import DEFAULT_TARGET, TUTORIAL_PATHS
from maze_envs.bench.policyspec import PolicyEntry, PolicySpec
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import (
    DEFAULT_BUDGET_FACTOR,
    AgiMazeCase,
    EscapeCase,
    GameTask,
)
from maze_envs.policies.episodes import AGIMAZE_SET_ENV_ID

#: The experiment name the games' journal meta carries.
EXPERIMENT: Final = "inspect"
#: What an error in a setup names.
PARAMETERS: Final = "task parameters"


def escape_games(
    setup: Mapping[str, Any], seeds: Any, options: Mapping[str, Any]
) -> list[GameTask]:
    """One game per maze size and seed of a Maze Escape setup, every agent the Inspect model.

    ``setup``: the fields of :class:`~maze_envs.bench.spec.EscapeSetup` (``preset``, ``sizes``,
    ``max_turns``, ``version``, ``set``); ``options``: the policy's options.
    """
    policy = PolicyEntry(policy=PolicySpec(spec=ESCAPE_POLICY, options=dict(options)))
    return front_games(EXPERIMENT, "escape", {**setup, "policies": [policy]}, seeds, PARAMETERS)


def agimaze_games(
    setup: Mapping[str, Any], seeds: Any, options: Mapping[str, Any]
) -> list[GameTask]:
    """One game per bundle and seed below the packs of an AGI Maze setup.

    ``setup``: the fields of :class:`~maze_envs.bench.spec.AgiMazeSetup` (``packs``,
    ``budget_factor``, ``max_steps``, ``pack_root``).
    """
    policy = PolicyEntry(policy=PolicySpec(spec=AGIMAZE_POLICY, options=dict(options)))
    return front_games(EXPERIMENT, "agimaze", {**setup, "policies": [policy]}, seeds, PARAMETERS)


class SetGame(BaseModel):
    """One AGI Maze labyrinth set (``AgiMazeSet-v0``) to play: its labyrinths, seed and player.

    ``name`` says which set it is (its target, or ``custom`` for a list of paths); ``run_key``
    identifies the game like a runner game's (hash of the set, the policy and the seed).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["agimaze_set"] = "agimaze_set"
    name: str
    paths: tuple[str, ...] = Field(min_length=1)
    budget_factor: float = Field(DEFAULT_BUDGET_FACTOR, gt=0, allow_inf_nan=False)
    pack_root: str | None = None
    seed: int = Field(ge=0)
    policy: PolicySpec
    run_key: str = ""
    experiment: str = f"{EXPERIMENT}:agimaze_set"

    @property
    def env_id(self) -> str:
        return AGIMAZE_SET_ENV_ID

    def key_data(self) -> dict[str, Any]:
        """What identifies the game (the run key hashes it)."""
        return {
            "env": self.env_id,
            "paths": list(self.paths),
            "budget_factor": self.budget_factor,
            "pack_root": self.pack_root,
            "policy": self.policy.model_dump(mode="json"),
            "seed": self.seed,
        }


def _check_paths(paths: Sequence[str], pack_root: str | None) -> None:
    from maze_envs.agimaze.packs import resolve_pack_path

    root = None if pack_root is None else Path(pack_root)
    for path in paths:
        found, _ = resolve_pack_path(path, root=root)  # raises naming the choices
        if found != path.strip("/"):
            raise ValueError(
                f"labyrinth set path {path!r} is a pack directory; a set lists single bundles "
                "(e.g. 'CLASSIC/MEDIUM/keys/6x6/0005.json')"
            )


def set_games(
    *,
    targets: Sequence[str] | None,
    paths: Sequence[str] | None,
    budget_factor: float,
    pack_root: str | None,
    seeds: Any,
    options: Mapping[str, Any],
) -> list[SetGame]:
    """One labyrinth set per target (the seven tutorials, then the target) and seed.

    ``paths`` instead gives one whole set, in order. Every path is checked now.
    """
    if paths and targets:
        raise ValueError("give the labyrinth set by 'targets' or by 'paths', not both")
    sets: list[tuple[str, tuple[str, ...]]]
    if paths:
        sets = [("custom", tuple(paths))]
    else:
        sets = [(t, (*TUTORIAL_PATHS, t)) for t in (targets or [DEFAULT_TARGET])]
    policy = PolicySpec(spec=AGIMAZE_POLICY, options=dict(options))
    games: list[SetGame] = []
    for name, labyrinths in sets:
        _check_paths(labyrinths, pack_root)
        for seed in parse_seeds(seeds):
            game = SetGame(
                name=name,
                paths=labyrinths,
                budget_factor=budget_factor,
                pack_root=pack_root,
                seed=seed,
                policy=policy,
            )
            digest = orjson.dumps(game.key_data(), option=orjson.OPT_SORT_KEYS)
            games.append(
                game.model_copy(update={"run_key": hashlib.sha256(digest).hexdigest()[:32]})
            )
    return games


def game_sample(game: GameTask | SetGame) -> Sample:
    """The Inspect sample of one game (its id names the maze or set and the seed)."""
    if isinstance(game, SetGame):
        where, what = game.name, f"AGI Maze labyrinth set ending with {game.name}"
        columns: dict[str, Any] = {"env_id": game.env_id, "set": game.name}
    elif isinstance(game.case, EscapeCase):
        case = game.case
        where = case.size
        what = f"Maze Escape {case.setup}, {case.size}, {len(game.agents)} agents"
        columns = {"env_id": case.env_id, "setup": case.setup, "size": case.size}
    else:
        assert isinstance(game.case, AgiMazeCase)
        where = game.case.pack
        what = f"AGI Maze {game.case.pack} (budget x{game.case.budget_factor:g})"
        columns = {"env_id": game.case.env_id, "pack": game.case.pack, "size": game.case.size}
    return Sample(
        id=f"{where}/seed={game.seed}",
        input=f"Play one game: {what}, seed {game.seed}.",
        metadata={**columns, "seed": game.seed, "game": game.model_dump(mode="json")},
    )
