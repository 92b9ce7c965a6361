"""One experiment: environment setups x policies x seeds, every combination a game.

An :class:`Experiment` holds one table of setups per environment setup class of the table of
environments (``EnvEntry.setup``, :func:`setup_classes`): Maze Escape setups
(:class:`~maze_envs.bench.escape_spec.EscapeSetup`: env version, preset, sizes, turn limit, any
:class:`~maze_envs.escape.types.Config` override), AGI Maze setups
(:class:`~maze_envs.bench.agimaze_spec.AgiMazeSetup`: pack paths or pack groups such as
``TUTORIAL``, ``TRAINING`` or ``TRAINING/S1-rivers``, budget factor, pack version) and AGI Maze
labyrinth sets (:class:`~maze_envs.bench.agimaze_spec.AgiMazeSetSetup`: the tutorials, then each
target), each with the policies it is played by
(:class:`~maze_envs.bench.policyspec.PolicyEntry`) and optionally its own seeds. Everything is
validated when the experiment is built, so a typo fails before the first game.

:meth:`Experiment.tasks` expands it into :class:`GameTask` objects, one per game: a setup case
(one maze size, or one AGI Maze bundle), a policy entry and a seed, with a stable **run key**,
the SHA-256 of the canonical JSON of the resolved environment (the whole Maze Escape config, or
the bundle path and budget), the policy specs per agent and the seed. Labels are not part of the
key, so renaming an arm keeps a run resumable; two arms that would play the same games are
refused. Tasks are picklable (they travel to worker processes and Ray).

An experiment is one file (TOML, YAML or JSON), committed with its results::

    name = "baselines"
    seeds = "0-9"

    [[escape]]
    preset = "navigator"
    sizes = [9, 13, 17]
    set = { radio = false }
    policies = ["explorer", "cooperative", { team = ["explorer", "explorer", "random"] }]

    [[agimaze]]
    packs = ["TRAINING/S1-rivers"]
    policies = ["random", "explorer"]

    [[agimaze_set]]
    targets = ["CLASSIC/EASY/keys/4x4/0005.json", "EXTENDED/boat/STAGE-01-4x4/0005.json"]
    policies = ["explorer"]

Example:
    >>> exp = Experiment.model_validate({"seeds": "0-1", "escape": [
    ...     {"sizes": [9, 11], "max_turns": 50, "policies": ["explorer", "random"]}]})
    >>> tasks = exp.tasks()
    >>> len(tasks), tasks[0].case.size, tasks[0].policy.name, tasks[0].seed
    (8, '9x9', 'explorer', 0)
    >>> len({task.run_key for task in tasks})
    8
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Annotated, Any, cast

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from maze_envs._registration import ENVIRONMENTS, EnvKind, load
from maze_envs.agimaze.scoring import DEFAULT_BUDGET_FACTOR
from maze_envs.bench.agimaze_spec import (
    AGIMAZE_ENV_ID,
    AgiMazeCase,
    AgiMazeSetCase,
    AgiMazeSetSetup,
    AgiMazeSetup,
)
from maze_envs.bench.escape_spec import (
    ESCAPE_ENV_IDS,
    ESCAPE_VERSIONS,
    EscapeCase,
    EscapeSetup,
    parse_size,
)
from maze_envs.bench.policyspec import PolicyEntry
from maze_envs.bench.specbase import CaseBase, Seeds, SetupBase, describe_errors, seeds_or_none

#: The registry's environment kind of a case's policies (``escape`` or ``agimaze``).
PolicyKind = EnvKind


@cache
def setup_classes() -> dict[str, type[SetupBase]]:
    """The runner's setup class of each environment of the table, by its word (``--env``, the
    ``env`` column of result rows), in table order: each supplies its cases, adapter, summary
    and report section."""
    found: dict[str, type[SetupBase]] = {}
    for entry in ENVIRONMENTS:
        setup: type[SetupBase] = load(entry.setup)
        found.setdefault(setup.model_fields["kind"].default, setup)
    return found


#: The words of the environment setups of an experiment (a labyrinth set is a setup of its own).
ENV_KINDS: tuple[str, ...] = tuple(setup_classes())


# --- one game ---------------------------------------------------------------------------------


Case = Annotated[EscapeCase | AgiMazeCase | AgiMazeSetCase, Field(discriminator="kind")]
AnyCase = EscapeCase | AgiMazeCase | AgiMazeSetCase


class GameTask(BaseModel):
    """One game to play: a case, a policy entry, a seed, and its stable run key."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    case: Case
    policy: PolicyEntry
    seed: int
    run_key: str
    experiment: str = ""

    @property
    def agents(self) -> tuple[str, ...]:
        return self.case.agents


def run_key(case: CaseBase, policy: PolicyEntry, seed: int) -> str:
    """The stable identity of a game: hash of the resolved env, the policy specs and the seed."""
    return case.run_key(policy, seed)


class Experiment(BaseModel):
    """A whole experiment (see the module docstring). ``seeds`` is the default of each setup."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = "experiment"
    description: str = ""
    seeds: Seeds = (0,)
    escape: tuple[EscapeSetup, ...] = ()
    agimaze: tuple[AgiMazeSetup, ...] = ()
    agimaze_set: tuple[AgiMazeSetSetup, ...] = ()

    @field_validator("seeds", mode="before")
    @classmethod
    def _parse_seeds(cls, value: Any) -> Any:
        return seeds_or_none(value)

    @field_validator("escape", "agimaze", "agimaze_set", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    def setups(self) -> list[SetupBase]:
        """Every setup, in the order of the tables of environments."""
        return [setup for cls in setup_classes().values() for setup in getattr(self, cls.table)]

    def tasks(self) -> list[GameTask]:
        """Every game: setups in order, then cases, policies and seeds.

        Raises ValueError when the experiment has no setup, or two arms play the same games.
        """
        if not self.setups():
            *tables, last = (f"[[{cls.table}]]" for cls in setup_classes().values())
            raise ValueError(
                f"the experiment has no environment setup: add an {', '.join(tables)} or {last} "
                f"table (or --env {'|'.join(ENV_KINDS)} on the command line)"
            )
        tasks: list[GameTask] = []
        seen: dict[str, str] = {}
        for setup in self.setups():
            seeds = setup.seeds or self.seeds
            for case in setup.cases():
                for entry in setup.policies:
                    case.check_policy(entry)  # a team of the wrong size fails
                    for seed in seeds:
                        key = case.run_key(entry, seed)
                        where = f"{case.setup} / {case.name} / {entry.name}"
                        if key in seen:
                            raise ValueError(
                                f"two arms play the same games: {seen[key]!r} and {where!r} "
                                f"(seed {seed}); remove one or change its settings"
                            )
                        seen[key] = where
                        tasks.append(
                            GameTask(
                                case=cast(AnyCase, case),
                                policy=entry,
                                seed=seed,
                                run_key=key,
                                experiment=self.name,
                            )
                        )
        return tasks

    @classmethod
    def load(cls, path: str | Path) -> Experiment:
        """Read an experiment file: ``.toml``, ``.yaml``/``.yml`` or ``.json``.

        Raises ValueError naming the file and the problem (unknown suffix, syntax, validation).
        """
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read experiment file {file}: {exc}") from None
        suffix = file.suffix.lower()
        try:
            if suffix == ".toml":
                data = tomllib.loads(text)
            elif suffix in {".yaml", ".yml"}:
                try:
                    import yaml
                except ImportError:
                    raise ValueError(
                        "YAML experiment files need PyYAML: pip install 'maze-envs[bench]' "
                        "(or write the experiment as TOML)"
                    ) from None
                data = yaml.safe_load(text)
            elif suffix == ".json":
                data = orjson.loads(text)
            else:
                raise ValueError(f"experiment file {file}: use .toml, .yaml/.yml or .json")
        except (tomllib.TOMLDecodeError, orjson.JSONDecodeError) as exc:
            raise ValueError(f"experiment file {file} is not valid {suffix[1:]}: {exc}") from None
        except Exception as exc:  # yaml.YAMLError and friends
            if isinstance(exc, ValueError) and str(exc).startswith(("YAML", "experiment file")):
                raise
            raise ValueError(f"experiment file {file} is not valid {suffix[1:]}: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError(f"experiment file {file} must hold a table of settings")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"experiment file {file}: {describe_errors(exc)}") from None


__all__ = [
    "AGIMAZE_ENV_ID",
    "DEFAULT_BUDGET_FACTOR",
    "ENV_KINDS",
    "ESCAPE_ENV_IDS",
    "ESCAPE_VERSIONS",
    "AgiMazeCase",
    "AgiMazeSetCase",
    "AgiMazeSetSetup",
    "AgiMazeSetup",
    "AnyCase",
    "Case",
    "EscapeCase",
    "EscapeSetup",
    "Experiment",
    "GameTask",
    "PolicyKind",
    "Seeds",
    "describe_errors",
    "parse_size",
    "run_key",
    "setup_classes",
]
