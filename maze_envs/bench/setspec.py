"""Labyrinth-set setups of an experiment: AGI Maze curricula as the EnvTraverse evaluation runs.

An :class:`AgiMazeSetSetup` plays ``AgiMazeSet-v0`` (:mod:`maze_envs.agimaze.set_env`): each
game is one *set*, the tutorials and then one target labyrinth, the agent starting each with
``start`` and keeping what it learned from one to the next. Two ways to say which sets:

* ``targets``: pack paths or groups; every bundle below them is the target of its own set,
  played after ``tutorials`` (default: the seven ``TUTORIAL/STAGE-0k/0000.json``, as in the
  EnvTraverse curriculum setting; ``tutorials = []`` plays each target alone);
* ``paths``: one explicit, ordered list of bundles, played as one set (its last is the target).

Only the target counts for the score, as in the EnvTraverse evaluation: a set game's RHAE70,
solved and x1-solved are the target's; the steps of the tutorials count as resource use, and every
labyrinth's own result is kept (:mod:`maze_envs.bench.setgames`).

Example:
    >>> setup = AgiMazeSetSetup.model_validate(
    ...     {"targets": ["CLASSIC/EASY/keys/4x4/0005.json"], "policies": ["explorer"]})
    >>> (case,) = setup.cases()
    >>> case.kind, len(case.paths), case.paths[-1], case.group
    ('agimaze-set', 8, 'CLASSIC/EASY/keys/4x4/0005.json', 'CLASSIC')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from maze_envs._registration import latest
from maze_envs.bench.specbase import DEFAULT_BUDGET_FACTOR, SetupBase
from maze_envs.policies.seeds import agimaze_set_salt

#: Env id of the labyrinth set, as journals store it.
AGIMAZE_SET_ENV_ID = latest("agimaze", labyrinth_set=True).id


def default_tutorials() -> tuple[str, ...]:
    """The seven tutorials that open an EnvTraverse curriculum set."""
    from maze_envs.agimaze.set_env import TUTORIAL_PATHS

    return tuple(TUTORIAL_PATHS)


class AgiMazeSetCase(BaseModel):
    """One labyrinth set: its ordered pack paths (the last is the target) and the target's meta."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["agimaze-set"] = "agimaze-set"
    setup: str
    paths: tuple[str, ...] = Field(min_length=1)
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
    def env_id(self) -> str:
        return AGIMAZE_SET_ENV_ID

    @property
    def policy_kind(self) -> Literal["agimaze"]:
        """The registry's environment kind of the policies (AGI Maze policies play sets)."""
        return "agimaze"

    @property
    def target(self) -> str:
        return self.paths[-1]

    @property
    def size(self) -> str:
        return f"{self.rows}x{self.cols}"

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


class AgiMazeSetSetup(SetupBase):
    """Labyrinth sets: ``targets`` after ``tutorials`` (a set per target), or one set ``paths``."""

    kind: Literal["agimaze-set"] = "agimaze-set"
    targets: tuple[str, ...] = ()
    tutorials: tuple[str, ...] | None = Field(
        default=None, description="played before each target; default: the seven tutorials"
    )
    paths: tuple[str, ...] = ()
    budget_factor: float = Field(DEFAULT_BUDGET_FACTOR, gt=0, allow_inf_nan=False)
    pack_root: str | None = None
    pack_version: str | None = None

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
        if self.pack_root is not None and self.pack_version is not None:
            raise ValueError("give pack_root or pack_version, not both")
        return self

    def _root(self) -> Path | None:
        from maze_envs.agimaze.packs import version_root

        if self.pack_version is not None:
            return version_root(self.pack_version)
        return None if self.pack_root is None else Path(self.pack_root)

    def cases(self) -> list[AgiMazeSetCase]:
        """One case per set, in order (targets sorted within a pack path, repeats dropped)."""
        from maze_envs.agimaze.packs import list_bundles, resolve_pack_path

        root = self._root()
        if self.paths:
            sets = [tuple(resolve_pack_path(p, root=root)[0] for p in self.paths)]
        else:
            tutorials = default_tutorials() if self.tutorials is None else self.tutorials
            before = tuple(resolve_pack_path(p, root=root)[0] for p in tutorials)
            names: list[str] = []
            for target in self.targets:
                found, _ = resolve_pack_path(target, root=root)  # lists choices if unknown
                if found == target.strip("/"):
                    names.append(found)
                else:
                    names.extend(list_bundles(target.strip("/") + "/", root=root))
            sets = [(*before, name) for name in dict.fromkeys(names)]
        cases = []
        for paths in sets:
            _, bundle = resolve_pack_path(paths[-1], root=root)
            meta, lab = bundle.meta, bundle.labyrinth
            cases.append(
                AgiMazeSetCase(
                    setup=self.name,
                    paths=paths,
                    budget_factor=self.budget_factor,
                    pack_root=self.pack_root,
                    pack_version=self.pack_version or meta.pack_version,
                    group=meta.group or paths[-1].split("/")[0],
                    family=meta.family,
                    stage=meta.stage or paths[-1].rsplit("/", 2)[-2],
                    rows=lab.rows,
                    cols=lab.cols,
                    soft_good_steps=meta.soft_good_steps,
                    hard_max_steps=lab.max_steps or meta.hard_max_steps,
                    optimal_steps=meta.optimal_steps,
                )
            )
        return cases

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        what = "+".join(self.targets) if self.targets else f"set of {len(self.paths)}"
        lead = "" if self.paths or self.tutorials == () else "tutorials, then "
        budget = "" if self.budget_factor == DEFAULT_BUDGET_FACTOR else f" x{self.budget_factor:g}"
        return f"{lead}{what}{budget}"


__all__ = ["AGIMAZE_SET_ENV_ID", "AgiMazeSetCase", "AgiMazeSetSetup", "default_tutorials"]
