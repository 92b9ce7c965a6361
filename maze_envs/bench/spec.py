"""One experiment: environment setups x policies x seeds, every combination a game.

An :class:`Experiment` holds Maze Escape setups (:class:`EscapeSetup`: env version, preset,
sizes, turn limit, any :class:`~maze_envs.escape.types.Config` override) and AGI Maze setups
(:class:`AgiMazeSetup`: pack paths or pack groups such as ``TUTORIAL``, ``TRAINING`` or
``TRAINING/S1-rivers``, budget factor, pack version) and AGI Maze labyrinth sets
(:class:`~maze_envs.bench.setspec.AgiMazeSetSetup`: the tutorials, then each target), each with
the policies it is played by
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
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from maze_envs._registration import EnvKind as PolicyKind
from maze_envs._registration import find_entry, latest, versions
from maze_envs.bench.policyspec import PolicyEntry
from maze_envs.bench.setspec import AgiMazeSetCase, AgiMazeSetSetup
from maze_envs.bench.specbase import (
    DEFAULT_BUDGET_FACTOR,
    Seeds,
    SetupBase,
    seeds_or_none,
)
from maze_envs.escape.types import Config
from maze_envs.policies.seeds import agimaze_salt, escape_salt, stable_key

#: The environment setups of an experiment (a labyrinth set is a setup of its own).
EnvKind = Literal["escape", "agimaze", "agimaze-set"]
ENV_KINDS: tuple[str, ...] = get_args(EnvKind)
#: Env ids per kind and version, as journals store them (from the table of environments).
ESCAPE_ENV_IDS = versions("escape")
#: Maze Escape versions the runner can play.
ESCAPE_VERSIONS = tuple(ESCAPE_ENV_IDS)
AGIMAZE_ENV_ID = latest("agimaze").id


def parse_size(value: Any) -> tuple[int, int]:
    """A maze size: ``9`` (9x9), ``"9"``, ``"13x9"`` or ``[13, 9]`` (width x height)."""
    if isinstance(value, bool):
        raise ValueError(f"a maze size is a number such as 9 or a text such as '13x9', got {value}")
    if isinstance(value, int):
        return value, value
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return value[0], value[1]
    if isinstance(value, str):
        width, sep, height = value.lower().partition("x")
        try:
            return (int(width), int(height)) if sep else (int(width), int(width))
        except ValueError:
            pass
    raise ValueError(f"a maze size is a number such as 9 or a text such as '13x9', got {value!r}")


# --- resolved cases (one per maze size or bundle) ---------------------------------------------


class EscapeCase(BaseModel):
    """One Maze Escape setup at one size: the env version and the full resolved config."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["escape"] = "escape"
    setup: str
    version: int
    size: str
    config: dict[str, Any]

    @property
    def env_id(self) -> str:
        return ESCAPE_ENV_IDS[self.version]

    @property
    def policy_kind(self) -> PolicyKind:
        """The registry's environment kind of the policies."""
        return "escape"

    @cached_property
    def game_config(self) -> Config:
        return Config.model_validate(self.config)

    def key_data(self) -> dict[str, Any]:
        return {"env": self.env_id, "config": self.config}

    @property
    def salt(self) -> int:
        """What tells this case's games apart from the other cases of its setup, for policy
        seeds (:mod:`maze_envs.policies.seeds`): the environment and the maze size. Not the rules:
        setups that differ only in what agents may do (the radio, the meeting alert) hand their
        policies the same seeds on the same maze, so paired arms differ in that rule alone."""
        config = self.game_config
        return escape_salt(self.env_id, config.width, config.height)


class AgiMazeCase(BaseModel):
    """One AGI Maze bundle with its evaluation settings and pack metadata (for the tables)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["agimaze"] = "agimaze"
    setup: str
    pack: str = Field(description="pack-relative bundle path")
    budget_factor: float
    max_steps: int | None = None
    pack_root: str | None = None
    group: str = ""
    family: str = ""
    stage: str = ""
    rows: int = 0
    cols: int = 0
    soft_good_steps: int | None = None
    hard_max_steps: int | None = None
    optimal_steps: int | None = None
    pack_version: str = ""

    @property
    def env_id(self) -> str:
        return AGIMAZE_ENV_ID

    @property
    def policy_kind(self) -> PolicyKind:
        """The registry's environment kind of the policies."""
        return "agimaze"

    @property
    def size(self) -> str:
        return f"{self.rows}x{self.cols}"

    def budget(self, max_steps: int) -> int:
        """The step budget the env truncates at, by its budget rule in the table of
        environments."""
        return find_entry(self.env_id).budget_rule()(self.budget_factor, max_steps)

    def key_data(self) -> dict[str, Any]:
        return {
            "env": self.env_id,
            "pack": self.pack,
            "pack_root": self.pack_root,
            "pack_version": self.pack_version,
            "budget_factor": self.budget_factor,
            "max_steps": self.max_steps,
            # the env has no reward shaping any more (a wrapper adds it); the constant keeps
            # the keys, and so the policy seeds, of earlier runs unchanged
            "reward_shaping": False,
        }

    @property
    def salt(self) -> int:
        """What tells this case's games apart, for policy seeds (:mod:`maze_envs.policies.seeds`):
        the bundle (its path, pack root and pack version), so no two bundles hand a policy the
        same seed. Not the budget: the same bundle under another budget gets the same seeds."""
        return agimaze_salt(self.env_id, self.pack, self.pack_root, self.pack_version)


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
        if isinstance(self.case, EscapeCase):
            return self.case.game_config.agents
        return ("player",)


def _case_name(case: AnyCase) -> str:
    if isinstance(case, EscapeCase):
        return case.size
    return case.pack if isinstance(case, AgiMazeCase) else case.target


def run_key(case: AnyCase, policy: PolicyEntry, seed: int) -> str:
    """The stable identity of a game: hash of the resolved env, the policy specs and the seed."""
    agents = (
        Config.model_validate(case.config).agents if isinstance(case, EscapeCase) else ("player",)
    )
    return stable_key({"env": case.key_data(), "policy": policy.key_data(agents), "seed": seed})


# --- setups ----------------------------------------------------------------------------------


class EscapeSetup(SetupBase):
    """Maze Escape games: a version, a preset, sizes, a turn limit and config overrides.

    ``sizes`` empty plays the preset's own size; each size is ``9`` (9x9) or ``"13x9"``.
    ``set`` holds any :class:`~maze_envs.escape.types.Config` field (``radio = false``, ...).
    """

    kind: Literal["escape"] = "escape"
    version: int = ESCAPE_VERSIONS[-1]
    preset: str | None = None
    sizes: tuple[tuple[int, int], ...] = ()
    max_turns: int | None = None
    set: dict[str, Any] = Field(default_factory=dict)

    @field_validator("version")
    @classmethod
    def _version(cls, version: int) -> int:
        if version not in ESCAPE_VERSIONS:
            known = " or ".join(map(str, ESCAPE_VERSIONS))
            raise ValueError(f"Maze Escape version {version} does not exist; use {known}")
        return version

    @field_validator("sizes", mode="before")
    @classmethod
    def _sizes(cls, value: Any) -> Any:
        values = value if isinstance(value, list | tuple) else [value]
        return tuple(parse_size(v) for v in values)

    def cases(self) -> list[EscapeCase]:
        """One case per size, each with its validated config."""
        clash = {"width", "height"} & set(self.set) if self.sizes else set()
        if clash:
            raise ValueError(f"give the maze size by 'sizes' or by 'set', not both ({clash})")
        overrides = dict(self.set)
        if self.max_turns is not None:
            overrides["max_turns"] = self.max_turns
        shapes: list[tuple[int, int] | None] = list(self.sizes) or [None]
        cases = []
        for shape in shapes:
            extra = {} if shape is None else {"width": shape[0], "height": shape[1]}
            try:
                config = Config.from_preset(self.preset, **overrides, **extra)
            except ValidationError as exc:
                at = "" if shape is None else f" at size {shape[0]}x{shape[1]}"
                raise ValueError(
                    f"Maze Escape setup {self.name!r}{at}: {describe_errors(exc)}"
                ) from None
            cases.append(
                EscapeCase(
                    setup=self.name,
                    version=self.version,
                    size=f"{config.width}x{config.height}",
                    config=config.model_dump(mode="json"),
                )
            )
        return cases

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        parts = [f"v{self.version}", self.preset or "default"]
        parts += [f"{k}={v}" for k, v in self.set.items()]
        if self.max_turns is not None:
            parts.append(f"max_turns={self.max_turns}")
        return " ".join(parts)


class AgiMazeSetup(SetupBase):
    """AGI Maze games: pack paths or pack groups, every bundle below them a case."""

    kind: Literal["agimaze"] = "agimaze"
    packs: tuple[str, ...] = Field(min_length=1)
    budget_factor: float = Field(DEFAULT_BUDGET_FACTOR, gt=0, allow_inf_nan=False)
    max_steps: int | None = Field(None, ge=1)
    pack_root: str | None = None
    pack_version: str | None = Field(
        default=None, description="a shipped pack version by name (default: the current one)"
    )

    @field_validator("packs", mode="before")
    @classmethod
    def _packs(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def cases(self) -> list[AgiMazeCase]:
        """One case per bundle below the packs (sorted within a pack, repeats dropped)."""
        from maze_envs.agimaze.packs import list_bundles, resolve_pack_path, version_root

        if self.pack_root is not None and self.pack_version is not None:
            raise ValueError(f"AGI Maze setup {self.name!r}: give pack_root or pack_version")
        root = None if self.pack_root is None else Path(self.pack_root)
        if self.pack_version is not None:
            root = version_root(self.pack_version)
        names: list[str] = []
        for pack in self.packs:
            found, _ = resolve_pack_path(pack, root=root)  # validates; lists choices if unknown
            if found == pack.strip("/"):
                names.append(found)
            else:
                names.extend(list_bundles(pack.strip("/") + "/", root=root))
        cases = []
        for name in dict.fromkeys(names):
            _, bundle = resolve_pack_path(name, root=root)
            meta, lab = bundle.meta, bundle.labyrinth
            cases.append(
                AgiMazeCase(
                    setup=self.name,
                    pack=name,
                    budget_factor=self.budget_factor,
                    max_steps=self.max_steps,
                    pack_root=self.pack_root,
                    group=meta.group or name.split("/")[0],
                    family=meta.family,
                    stage=meta.stage or name.rsplit("/", 2)[-2],
                    rows=lab.rows,
                    cols=lab.cols,
                    soft_good_steps=meta.soft_good_steps,
                    hard_max_steps=lab.max_steps or meta.hard_max_steps,
                    optimal_steps=meta.optimal_steps,
                    pack_version=meta.pack_version,
                )
            )
        return cases

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        budget = "" if self.budget_factor == DEFAULT_BUDGET_FACTOR else f" x{self.budget_factor:g}"
        return "+".join(self.packs) + budget


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

    def tasks(self) -> list[GameTask]:
        """Every game: setups in order, then cases, policies and seeds.

        Raises ValueError when the experiment has no setup, or two arms play the same games.
        """
        if not self.escape and not self.agimaze and not self.agimaze_set:
            raise ValueError(
                "the experiment has no environment setup: add an [[escape]], [[agimaze]] or "
                "[[agimaze_set]] table (or --env escape|agimaze|agimaze-set on the command line)"
            )
        tasks: list[GameTask] = []
        seen: dict[str, str] = {}
        setups: list[EscapeSetup | AgiMazeSetup | AgiMazeSetSetup] = [
            *self.escape,
            *self.agimaze,
            *self.agimaze_set,
        ]
        for setup in setups:
            seeds = setup.seeds or self.seeds
            for case in setup.cases():
                for entry in setup.policies:
                    if isinstance(case, EscapeCase):
                        entry.members(case.game_config.agents)  # a team of the wrong size fails
                    for seed in seeds:
                        key = run_key(case, entry, seed)
                        where = f"{case.setup} / {_case_name(case)} / {entry.name}"
                        if key in seen:
                            raise ValueError(
                                f"two arms play the same games: {seen[key]!r} and {where!r} "
                                f"(seed {seed}); remove one or change its settings"
                            )
                        seen[key] = where
                        tasks.append(
                            GameTask(
                                case=case,
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


def describe_errors(exc: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    """A pydantic error as one readable line per problem, with where it is.

    ``flags`` maps field names to the command-line options that set them: a problem in such a
    field is placed by its option (``--size``) rather than by its path in the experiment
    (``escape.0.sizes``). A validator's own message is given as written, without pydantic's
    ``Value error,`` prefix.
    """
    lines = []
    for error in exc.errors():
        named = [flags[p] for p in error["loc"] if isinstance(p, str) and flags and p in flags]
        where = named[-1] if named else ".".join(str(p) for p in error["loc"]) or "<experiment>"
        cause = (error.get("ctx") or {}).get("error")
        own = error["type"] == "value_error" and cause is not None
        message = str(cause) if own else error["msg"]
        lines.append(f"{where}: {message}")
    return "; ".join(lines)
