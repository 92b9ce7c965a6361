"""What every environment setup and case of an experiment shares (:mod:`.spec`).

A **setup** (a ``[[table]]`` of an experiment file) has a label, the policies it is played by
and optionally its own seeds, and expands into **cases**: one resolved environment each (a maze
size, an AGI Maze bundle, a labyrinth set). Each environment of the table of environments
(:data:`maze_envs._registration.ENVIRONMENTS`) names its setup class (``EnvEntry.setup``); the
setup class supplies the rest of the environment's row in the runner: its cases, the adapter the
runner plays a case with, the summary of its result rows and their Markdown tables. The runner
reads them from here, never by asking which environment a case is.

Cases and run keys are hashed with :func:`stable_key`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from maze_envs._registration import EnvKind, load
from maze_envs.bench.policyspec import PolicyEntry
from maze_envs.bench.seeds import parse_seeds
from maze_envs.policies.seeds import stable_key

Seeds = Annotated[tuple[int, ...], Field(min_length=1)]
Row = dict[str, Any]


def seeds_or_none(value: Any) -> tuple[int, ...] | None:
    return None if value is None else parse_seeds(value)


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


class CaseBase(BaseModel):
    """One resolved environment of a setup: what its games are played on.

    Subclasses set ``kind`` (a ``Literal``: the experiment's discriminator and the ``env`` column
    of result rows), ``adapter`` (the import string of the runner's
    :class:`~maze_envs.bench.envs.EnvAdapter` class), ``size`` (the ``size`` column: a field or
    a property) and the properties below.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: str
    setup: str
    #: ``package.module:Class`` of the adapter that plays this case's games.
    adapter: ClassVar[str]

    @property
    def env_id(self) -> str:
        """The environment's id, as journals store it."""
        raise NotImplementedError

    @property
    def policy_kind(self) -> EnvKind:
        """The registry's environment kind of the policies that play it."""
        raise NotImplementedError

    @property
    def agents(self) -> tuple[str, ...]:
        """The agents of each game, one policy each."""
        return ("player",)

    @property
    def name(self) -> str:
        """What tells the case apart within its setup (the ``case`` column of result rows)."""
        raise NotImplementedError

    @property
    def salt(self) -> int:
        """What tells this case's games apart, for policy seeds."""
        raise NotImplementedError

    def key_data(self) -> dict[str, Any]:
        """The resolved environment, as the run key hashes it."""
        raise NotImplementedError

    def columns(self) -> Row:
        """Result-row columns of this case beyond the common ones (pack metadata...)."""
        return {}

    def check_policy(self, policy: PolicyEntry) -> None:
        """Raise ``ValueError`` when ``policy`` cannot play this case (a team of the wrong
        size)."""
        policy.members(self.agents)

    def adapter_class(self) -> Any:
        """The adapter class (imported now): an :class:`~maze_envs.bench.envs.EnvAdapter`."""
        return load(self.adapter)

    def run_key(self, policy: PolicyEntry, seed: int) -> str:
        """The stable identity of a game: hash of the resolved env, the policy specs, the seed."""
        agents = self.agents
        return stable_key({"env": self.key_data(), "policy": policy.key_data(agents), "seed": seed})


class SetupBase(BaseModel):
    """The fields every setup has: a label, its policies, its own seeds (optional).

    Subclasses set ``kind`` (a ``Literal``, the word of ``--env``), ``table`` (the experiment
    file's ``[[table]]`` and the key of the run's summary), ``summary`` and ``report`` (import
    strings of the functions that aggregate this kind's result rows and lay the aggregates out
    as Markdown), and implement :meth:`cases` and :attr:`name`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: str
    label: str | None = None
    policies: tuple[PolicyEntry, ...] = Field(min_length=1)
    seeds: Seeds | None = None
    #: The ``[[table]]`` of an experiment file (and the key of the run's summary).
    table: ClassVar[str]
    #: ``package.module:function``: result rows -> this kind's aggregates (JSON data).
    summary: ClassVar[str]
    #: ``package.module:function``: the aggregates -> the report's parts (``report.Part``).
    report: ClassVar[str]

    @field_validator("seeds", mode="before")
    @classmethod
    def _parse_seeds(cls, value: Any) -> Any:
        return seeds_or_none(value)

    @property
    def name(self) -> str:
        raise NotImplementedError

    def cases(self) -> Sequence[CaseBase]:
        raise NotImplementedError

    @classmethod
    def summarize(cls, rows: Sequence[Row]) -> Any:
        """The aggregates of this kind's result rows (JSON data)."""
        return load(cls.summary)(rows)

    @classmethod
    def sections(cls, summary: Any) -> list[Any]:
        """The report's parts (:class:`maze_envs.bench.report.Part`: headings, tables, notes)
        of :meth:`summarize`'s aggregates; none when there are none."""
        parts: list[Any] = load(cls.report)(summary) if summary else []
        return parts
