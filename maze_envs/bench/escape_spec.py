"""Maze Escape setups of an experiment (``[[escape]]``): the runner's side of the Maze Escape rows.

An :class:`EscapeSetup` names an env version, a preset, sizes, a turn limit and any
:class:`~maze_envs.escape.types.Config` override; each size is an :class:`EscapeCase` with the
whole resolved config.

Example:
    >>> setup = EscapeSetup.model_validate(
    ...     {"sizes": [9, "13x9"], "set": {"radio": False}, "policies": ["explorer"]})
    >>> [(case.name, case.env_id) for case in setup.cases()]
    [('9x9', 'maze_envs/MazeEscape-v1'), ('13x9', 'maze_envs/MazeEscape-v1')]
    >>> setup.name
    'v1 default radio=False'
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError, field_validator

from maze_envs._registration import EnvKind, versions
from maze_envs.bench.specbase import CaseBase, SetupBase, describe_errors
from maze_envs.escape.types import Config
from maze_envs.policies.seeds import escape_salt

#: Env ids per version, as journals store them (from the table of environments).
ESCAPE_ENV_IDS = versions("escape")
#: Maze Escape versions the runner can play.
ESCAPE_VERSIONS = tuple(ESCAPE_ENV_IDS)


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


class EscapeCase(CaseBase):
    """One Maze Escape setup at one size: the env version and the full resolved config."""

    kind: Literal["escape"] = "escape"
    version: int
    size: str
    config: dict[str, Any]
    adapter: ClassVar[str] = "maze_envs.bench.envs:EscapeAdapter"

    @property
    def env_id(self) -> str:
        return ESCAPE_ENV_IDS[self.version]

    @property
    def policy_kind(self) -> EnvKind:
        """The registry's environment kind of the policies."""
        return "escape"

    @cached_property
    def game_config(self) -> Config:
        return Config.model_validate(self.config)

    @property
    def agents(self) -> tuple[str, ...]:
        return self.game_config.agents

    @property
    def name(self) -> str:
        return self.size

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
    table: ClassVar[str] = "escape"
    summary: ClassVar[str] = "maze_envs.bench.results:escape_summary"
    report: ClassVar[str] = "maze_envs.bench.report:escape_section"

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


__all__ = ["ESCAPE_ENV_IDS", "ESCAPE_VERSIONS", "EscapeCase", "EscapeSetup", "parse_size"]
