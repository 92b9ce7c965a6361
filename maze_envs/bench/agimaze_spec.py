"""AGI Maze setups of an experiment: single labyrinths and labyrinth sets, one pack vocabulary.

:class:`AgiMazeSetup` (``[[agimaze]]``) plays ``AgiMaze-v0`` on every bundle below its pack paths
or pack groups (``TUTORIAL``, ``TRAINING/S1-rivers``...). :class:`AgiMazeSetSetup`
(``[[agimaze_set]]``) plays ``AgiMazeSet-v0`` (:mod:`maze_envs.agimaze.set_env`): each game is one
*set*, the tutorials and then one target labyrinth, the agent starting each with ``start`` and
keeping what it learned from one to the next. Two ways to say which sets:

* ``targets``: pack paths or groups; every bundle below them is the target of its own set,
  played after ``tutorials`` (default: the seven ``TUTORIAL/STAGE-0k/0000.json``, as in the
  EnvTraverse curriculum setting; ``tutorials = []`` plays each target alone);
* ``paths``: one explicit, ordered list of bundles, played as one set (its last is the target).

Only the target counts for a set's score, as in the EnvTraverse evaluation: a set game's RHAE70,
solved and x1-solved are the target's; the steps of the tutorials count as resource use, and every
labyrinth's own result is kept (:func:`maze_envs.bench.metrics.agimaze_set_scores`).

Both setups share the pack fields (budget factor, pack root or shipped pack version) and build
their cases' pack metadata the same way (:class:`PackCase`); they are the runner's side of the
``AgiMaze-v0`` and ``AgiMazeSet-v0`` rows of the table of environments.

Example:
    >>> setup = AgiMazeSetSetup.model_validate(
    ...     {"targets": ["CLASSIC/EASY/keys/4x4/0005.json"], "policies": ["explorer"]})
    >>> (case,) = setup.cases()
    >>> case.kind, len(case.paths), case.paths[-1], case.group
    ('agimaze-set', 8, 'CLASSIC/EASY/keys/4x4/0005.json', 'CLASSIC')
    >>> (single,) = AgiMazeSetup.model_validate(
    ...     {"packs": "CLASSIC/EASY/keys/4x4/0005.json", "policies": ["explorer"]}).cases()
    >>> single.name, single.size == case.size, single.group == case.group
    ('CLASSIC/EASY/keys/4x4/0005.json', True, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from maze_envs._registration import EnvKind, find_entry, latest
from maze_envs.agimaze.scoring import DEFAULT_BUDGET_FACTOR
from maze_envs.bench.specbase import CaseBase, Row, SetupBase
from maze_envs.policies.seeds import agimaze_salt, agimaze_set_salt

#: Env ids as journals store them (from the table of environments).
AGIMAZE_ENV_ID = latest("agimaze").id
AGIMAZE_SET_ENV_ID = latest("agimaze", labyrinth_set=True).id


def default_tutorials() -> tuple[str, ...]:
    """The seven tutorials that open an EnvTraverse curriculum set."""
    from maze_envs.agimaze.set_env import TUTORIAL_PATHS

    return tuple(TUTORIAL_PATHS)


# --- cases ------------------------------------------------------------------------------------


class PackCase(CaseBase):
    """What an AGI Maze case knows of its bundle (a set's: its target's), for the tables."""

    budget_factor: float
    pack_root: str | None = None
    pack_version: str = ""
    group: str = ""
    family: str = ""
    stage: str = ""
    rows: int = 0
    cols: int = 0
    soft_good_steps: int | None = None
    hard_max_steps: int | None = None
    optimal_steps: int | None = None

    @property
    def policy_kind(self) -> EnvKind:
        """AGI Maze policies play single labyrinths and sets."""
        return "agimaze"

    @property
    def size(self) -> str:
        return f"{self.rows}x{self.cols}"

    def columns(self) -> Row:
        return {
            "group": self.group,
            "family": self.family,
            "stage": self.stage,
            "optimal_steps": self.optimal_steps,
        }

    def budget(self, max_steps: int) -> int:
        """The step budget the env truncates at, by its budget rule in the table of
        environments."""
        return find_entry(self.env_id).budget_rule()(self.budget_factor, max_steps)

    def shipped_version(self) -> str | None:
        """The shipped pack version the env loads by name (None: its pack root or files)."""
        from maze_envs.agimaze.packs import PACK_VERSIONS

        shipped = self.pack_root is None and self.pack_version in PACK_VERSIONS
        return self.pack_version if shipped else None


class AgiMazeCase(PackCase):
    """One AGI Maze bundle with its evaluation settings and pack metadata (for the tables)."""

    kind: Literal["agimaze"] = "agimaze"
    pack: str = Field(description="pack-relative bundle path")
    max_steps: int | None = None
    adapter: ClassVar[str] = "maze_envs.bench.envs:AgiMazeAdapter"

    @property
    def env_id(self) -> str:
        return AGIMAZE_ENV_ID

    @property
    def name(self) -> str:
        return self.pack

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


class AgiMazeSetCase(PackCase):
    """One labyrinth set: its ordered pack paths (the last is the target) and the target's meta."""

    kind: Literal["agimaze-set"] = "agimaze-set"
    paths: tuple[str, ...] = Field(min_length=1)
    adapter: ClassVar[str] = "maze_envs.bench.envs:AgiMazeSetAdapter"

    @property
    def env_id(self) -> str:
        return AGIMAZE_SET_ENV_ID

    @property
    def target(self) -> str:
        return self.paths[-1]

    @property
    def name(self) -> str:
        return self.target

    def key_data(self) -> dict[str, Any]:
        return {
            "env": self.env_id,
            "paths": list(self.paths),
            "pack_root": self.pack_root,
            "pack_version": self.pack_version,
            "budget_factor": self.budget_factor,
        }

    @property
    def salt(self) -> int:
        """What tells this case's games apart, for policy seeds (:mod:`maze_envs.policies.seeds`):
        the set (its paths, pack root and pack version), as an AGI Maze case's bundle. Not the
        budget: the same set under another budget gets the same seeds."""
        return agimaze_set_salt(self.env_id, self.paths, self.pack_root, self.pack_version)


# --- setups -----------------------------------------------------------------------------------


class PackSetup(SetupBase):
    """The pack fields of both AGI Maze setups: budget factor, pack root or pack version."""

    budget_factor: float = Field(DEFAULT_BUDGET_FACTOR, gt=0, allow_inf_nan=False)
    pack_root: str | None = None
    pack_version: str | None = Field(
        default=None, description="a shipped pack version by name (default: the current one)"
    )

    @model_validator(mode="after")
    def _one_root(self) -> PackSetup:
        if self.pack_root is not None and self.pack_version is not None:
            raise ValueError("give pack_root or pack_version, not both")
        return self

    def _root(self) -> Path | None:
        from maze_envs.agimaze.packs import version_root

        if self.pack_version is not None:
            return version_root(self.pack_version)
        return None if self.pack_root is None else Path(self.pack_root)

    def _bundles(self, paths: tuple[str, ...], root: Path | None) -> list[str]:
        """The bundles below pack paths or groups, in order (sorted within a path, repeats
        dropped); an unknown path raises ``ValueError`` listing the choices."""
        from maze_envs.agimaze.packs import list_bundles, resolve_pack_path

        names: list[str] = []
        for path in paths:
            found, _ = resolve_pack_path(path, root=root)
            if found == path.strip("/"):
                names.append(found)
            else:
                names.extend(list_bundles(path.strip("/") + "/", root=root))
        return list(dict.fromkeys(names))

    def _pack_fields(self, target: str, root: Path | None) -> dict[str, Any]:
        """A case's pack fields and the metadata of its (target) bundle."""
        from maze_envs.agimaze.packs import resolve_pack_path

        _, bundle = resolve_pack_path(target, root=root)
        meta, lab = bundle.meta, bundle.labyrinth
        return {
            "setup": self.name,
            "budget_factor": self.budget_factor,
            "pack_root": self.pack_root,
            "pack_version": meta.pack_version,
            "group": meta.group or target.split("/")[0],
            "family": meta.family,
            "stage": meta.stage or target.rsplit("/", 2)[-2],
            "rows": lab.rows,
            "cols": lab.cols,
            "soft_good_steps": meta.soft_good_steps,
            "hard_max_steps": lab.max_steps or meta.hard_max_steps,
            "optimal_steps": meta.optimal_steps,
        }

    def _budget_suffix(self) -> str:
        return "" if self.budget_factor == DEFAULT_BUDGET_FACTOR else f" x{self.budget_factor:g}"


class AgiMazeSetup(PackSetup):
    """AGI Maze games: pack paths or pack groups, every bundle below them a case."""

    kind: Literal["agimaze"] = "agimaze"
    packs: tuple[str, ...] = Field(min_length=1)
    max_steps: int | None = Field(None, ge=1)
    table: ClassVar[str] = "agimaze"
    summary: ClassVar[str] = "maze_envs.bench.results:agimaze_levels"
    report: ClassVar[str] = "maze_envs.bench.report:agimaze_tables"

    @field_validator("packs", mode="before")
    @classmethod
    def _packs(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def cases(self) -> list[AgiMazeCase]:
        """One case per bundle below the packs (sorted within a pack, repeats dropped)."""
        root = self._root()
        return [
            AgiMazeCase(pack=name, max_steps=self.max_steps, **self._pack_fields(name, root))
            for name in self._bundles(self.packs, root)
        ]

    @property
    def name(self) -> str:
        return self.label or "+".join(self.packs) + self._budget_suffix()


class AgiMazeSetSetup(PackSetup):
    """Labyrinth sets: ``targets`` after ``tutorials`` (a set per target), or one set ``paths``."""

    kind: Literal["agimaze-set"] = "agimaze-set"
    targets: tuple[str, ...] = ()
    tutorials: tuple[str, ...] | None = Field(
        default=None, description="played before each target; default: the seven tutorials"
    )
    paths: tuple[str, ...] = ()
    table: ClassVar[str] = "agimaze_set"
    summary: ClassVar[str] = "maze_envs.bench.setresults:agimaze_set_summary"
    report: ClassVar[str] = "maze_envs.bench.setresults:agimaze_set_section"

    @field_validator("targets", "paths", "tutorials", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> AgiMazeSetSetup:
        if bool(self.targets) == bool(self.paths):
            raise ValueError(
                "a labyrinth-set setup needs targets (a set per target, after the tutorials) "
                "or paths (one set), not both and not neither"
            )
        if self.paths and self.tutorials is not None:
            raise ValueError("tutorials go with targets; paths already list the whole set")
        return self

    def cases(self) -> list[AgiMazeSetCase]:
        """One case per set, in order (targets sorted within a pack path, repeats dropped)."""
        from maze_envs.agimaze.packs import resolve_pack_path

        root = self._root()
        if self.paths:
            sets = [tuple(resolve_pack_path(p, root=root)[0] for p in self.paths)]
        else:
            tutorials = default_tutorials() if self.tutorials is None else self.tutorials
            before = tuple(resolve_pack_path(p, root=root)[0] for p in tutorials)
            sets = [(*before, name) for name in self._bundles(self.targets, root)]
        cases = []
        for paths in sets:
            fields = self._pack_fields(paths[-1], root)
            fields["pack_version"] = self.pack_version or fields["pack_version"]
            cases.append(AgiMazeSetCase(paths=paths, **fields))
        return cases

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        what = "+".join(self.targets) if self.targets else f"set of {len(self.paths)}"
        lead = "" if self.paths or self.tutorials == () else "tutorials, then "
        return f"{lead}{what}{self._budget_suffix()}"


__all__ = [
    "AGIMAZE_ENV_ID",
    "AGIMAZE_SET_ENV_ID",
    "AgiMazeCase",
    "AgiMazeSetCase",
    "AgiMazeSetSetup",
    "AgiMazeSetup",
    "PackCase",
    "PackSetup",
    "default_tutorials",
]
