"""A study as data: a question, paired arms, the comparisons to report, what a decision costs.

A study file (TOML, shipped in ``maze_envs/studies/data/``) says:

* ``name``, ``number``, ``title``, ``question`` (what it answers), ``finding`` (what the Maze
  Escape write-up saw, in our words, and from how many games);
* ``seeds``: the mazes of every arm (each seed is one maze per size; the same seeds in every
  arm, so arms pair up game by game);
* ``[setups.NAME]``: what arms share: ``preset``, ``sizes``, ``max_turns``, ``set`` (Maze Escape
  ``Config`` overrides; TOML has no null, so ``"none"`` switches off a feature whose value may
  be null: ``coordinates = "none"``) and ``harness`` (options every model arm's policy gets:
  prompt version, output mode, check...);
* ``[[arm]]``: ``name``, ``about``, its ``setup`` (the only one when omitted), and what it
  changes: ``set`` (rules) and ``harness`` (model options); or ``policy``, a classical policy
  that plays instead of the model (``cooperative``);
* ``[[compare]]``: pairs of arms, ``first`` against ``second`` (first minus second);
  ``compare_models = true`` also compares every pair of models on each model arm;
* ``metrics``: the behaviour measures the question is about (:mod:`maze_envs.studies.measures`);
* ``[tokens]``: typical tokens per decision and the share of the turn limit a game lasts, with
  where those figures come from (the dry run's cost estimate);
* ``[replay]`` (the temperature study): the recorded decisions of one arm re-asked with changed
  settings, beside full games of another arm played with those settings.

:meth:`Study.experiment` turns a study and the models to run into a benchmark
:class:`~maze_envs.bench.spec.Experiment`: one Maze Escape setup per arm (labelled with the
arm's name), played by one policy entry per model (labelled with the model) or by the arm's
classical policy. The model's options and the arm's are merged; an option given both ways is
refused, so a study's own switch is never silently overridden.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from maze_envs.bench.policyspec import PolicyEntry, PolicySpec
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import EscapeSetup, Experiment, describe_errors, parse_size

#: Model options that do not name the model (where replies are cached): left out of labels.
UNLABELLED_OPTIONS: Final = frozenset({"cache", "cache_mode"})


class Tokens(BaseModel):
    """Typical tokens of one decision of a study's arms, and where the figures come from.

    ``input`` counts every input token (cache reads included), ``cache_read_share`` the share
    of them read from a provider's prompt cache; ``turn_share`` the share of the turn limit a
    game typically lasts (1.0: every game runs to its limit; a bound on the calls either way).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    input: int = Field(gt=0)
    output: int = Field(gt=0)
    cache_read_share: float = Field(0.0, ge=0.0, le=1.0)
    turn_share: float = Field(1.0, gt=0.0, le=1.0)
    source: str = Field(min_length=1)


class TokensOverride(BaseModel):
    """An arm's own typical tokens where they differ from the study's."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    input: int | None = Field(None, gt=0)
    output: int | None = Field(None, gt=0)
    cache_read_share: float | None = Field(None, ge=0.0, le=1.0)
    turn_share: float | None = Field(None, gt=0.0, le=1.0)


class SetupSpec(BaseModel):
    """What the arms of a setup share."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    preset: str | None = None
    version: int = 1
    sizes: tuple[tuple[int, int], ...] = Field(min_length=1)
    max_turns: int | None = Field(None, ge=1)
    set: dict[str, Any] = Field(default_factory=dict)
    harness: dict[str, Any] = Field(default_factory=dict)
    about: str = ""

    @field_validator("sizes", mode="before")
    @classmethod
    def _sizes(cls, value: Any) -> Any:
        values = value if isinstance(value, list | tuple) else [value]
        return tuple(parse_size(v) for v in values)


class ArmSpec(BaseModel):
    """One arm: a setup with its own rules and model options, or a classical policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(min_length=1)
    about: str = ""
    setup: str | None = None
    set: dict[str, Any] = Field(default_factory=dict)
    harness: dict[str, Any] = Field(default_factory=dict)
    policy: str | None = None
    tokens: TokensOverride | None = None

    @model_validator(mode="after")
    def _classical_has_no_harness(self) -> ArmSpec:
        if self.policy is not None and self.harness:
            raise ValueError(
                f"arm {self.name!r} plays the classical policy {self.policy!r}: it takes no "
                "model options (harness)"
            )
        return self

    @property
    def uses_model(self) -> bool:
        return self.policy is None


class Comparison(BaseModel):
    """``first`` against ``second`` (differences are first minus second)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    first: str
    second: str
    about: str = ""


class ReplaySpec(BaseModel):
    """Decision replay beside full games: the recorded decisions of arm ``recorded`` re-asked
    with the settings ``set`` changed, beside the full games of arm ``full_games``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    recorded: str
    full_games: str
    set: dict[str, Any] = Field(min_length=1)
    limit: int | None = Field(60, ge=1)


class Study(BaseModel):
    """One study (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    number: int = Field(0, ge=0)
    title: str = Field(min_length=1)
    question: str = Field(min_length=1)
    finding: str = ""
    seeds: tuple[int, ...] = Field(min_length=1)
    setups: dict[str, SetupSpec] = Field(min_length=1)
    arms: tuple[ArmSpec, ...] = Field(min_length=2, alias="arm")
    compare: tuple[Comparison, ...] = ()
    compare_models: bool = False
    metrics: tuple[str, ...] = ()
    tokens: Tokens
    replay: ReplaySpec | None = None

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> Any:
        return parse_seeds(value)

    @model_validator(mode="after")
    def _references(self) -> Study:
        names = [arm.name for arm in self.arms]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"arm names must be distinct; repeated: {', '.join(twice)}")
        for arm in self.arms:
            self.setup_of(arm)  # an unknown or missing setup fails here
        for pair in self.compare:
            for name in (pair.first, pair.second):
                if name not in names:
                    raise ValueError(f"compare names no arm {name!r}; arms: {', '.join(names)}")
        if not any(arm.uses_model for arm in self.arms):
            raise ValueError("a study needs at least one arm played by the model")
        from maze_envs.studies.measures import MEASURES

        unknown = [m for m in self.metrics if m not in MEASURES]
        if unknown:
            raise ValueError(
                f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(sorted(MEASURES))}"
            )
        if self.replay is not None:
            for name in (self.replay.recorded, self.replay.full_games):
                named = next((a for a in self.arms if a.name == name), None)
                if named is None or not named.uses_model:
                    raise ValueError(f"replay names {name!r}, which is not a model arm")
        return self

    def setup_of(self, arm: ArmSpec) -> SetupSpec:
        """The setup an arm builds on."""
        if arm.setup is None:
            if len(self.setups) != 1:
                raise ValueError(
                    f"arm {arm.name!r} must name its setup: one of {', '.join(self.setups)}"
                )
            return next(iter(self.setups.values()))
        if arm.setup not in self.setups:
            raise ValueError(
                f"arm {arm.name!r} names setup {arm.setup!r}; setups: {', '.join(self.setups)}"
            )
        return self.setups[arm.setup]

    def arm(self, name: str) -> ArmSpec:
        for arm in self.arms:
            if arm.name == name:
                return arm
        raise ValueError(f"study {self.name!r} has no arm {name!r}; arms: {self.arm_names}")

    @property
    def arm_names(self) -> str:
        return ", ".join(arm.name for arm in self.arms)

    def tokens_of(self, arm: ArmSpec) -> Tokens:
        """The typical tokens of a decision of ``arm`` (the study's, with the arm's own)."""
        if arm.tokens is None:
            return self.tokens
        own = arm.tokens.model_dump(exclude_none=True)
        return self.tokens.model_copy(update=own)

    @classmethod
    def from_toml(cls, text: str, where: str = "<study>") -> Study:
        """A study from the text of its file (ValueError naming ``where`` and the problem)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"study file {where} is not valid TOML: {exc}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"study file {where}: {describe_errors(exc)}") from None

    @classmethod
    def load(cls, path: str | Path) -> Study:
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read study file {file}: {exc}") from None
        return cls.from_toml(text, str(file))

    # --- the experiment -----------------------------------------------------------------------

    def selected(self, arms: Sequence[str] | None) -> tuple[ArmSpec, ...]:
        """The arms to run: all, or those named (in the study's order)."""
        if not arms:
            return self.arms
        for name in arms:
            self.arm(name)
        return tuple(a for a in self.arms if a.name in set(arms))

    def experiment(
        self,
        models: Sequence[PolicySpec],
        *,
        seeds: Sequence[int] | None = None,
        sizes: Sequence[tuple[int, int]] | None = None,
        max_turns: int | None = None,
        arms: Sequence[str] | None = None,
        model_options: dict[str, Any] | None = None,
    ) -> Experiment:
        """The benchmark experiment of this study played by ``models`` (see the module doc).

        ``seeds``, ``sizes`` and ``max_turns`` replace the study's (small mazes for a check of
        the pipeline); ``arms`` runs only the arms named; ``model_options`` go to every model
        (the response cache).
        """
        if not models:
            raise ValueError("a study needs at least one model to run")
        labels = [model_label(m) for m in models]
        if len(set(labels)) != len(labels):
            raise ValueError(f"the models must differ: {', '.join(labels)}")
        setups = []
        for arm in self.selected(arms):
            base = self.setup_of(arm)
            if arm.uses_model:
                entries = [
                    self._model_entry(arm, base, model, label, model_options or {})
                    for model, label in zip(models, labels, strict=True)
                ]
            else:
                assert arm.policy is not None
                entries = [PolicyEntry(policy=PolicySpec.parse(arm.policy), label=arm.policy)]
            setups.append(
                EscapeSetup(
                    label=arm.name,
                    version=base.version,
                    preset=base.preset,
                    sizes=tuple(sizes) if sizes else base.sizes,
                    max_turns=max_turns if max_turns is not None else base.max_turns,
                    set=_nulls({**base.set, **arm.set}),
                    policies=tuple(entries),
                )
            )
        return Experiment(
            name=f"study {self.name}",
            description=self.question,
            seeds=tuple(seeds) if seeds else self.seeds,
            escape=tuple(setups),
        )

    def _model_entry(
        self,
        arm: ArmSpec,
        base: SetupSpec,
        model: PolicySpec,
        label: str,
        extra: dict[str, Any],
    ) -> PolicyEntry:
        study_options = {**base.harness, **arm.harness}
        clash = sorted(set(model.options) & set(study_options))
        if clash:
            raise ValueError(
                f"study {self.name!r} sets {', '.join(clash)} in arm {arm.name!r}; do not give "
                f"it with --model ({model.text})"
            )
        options = {**model.options, **study_options, **extra}
        return PolicyEntry(policy=PolicySpec(spec=model.spec, options=options), label=label)


def _nulls(overrides: dict[str, Any]) -> dict[str, Any]:
    """Config overrides with ``"none"`` read as null (TOML has no null)."""
    return {k: None if v == "none" else v for k, v in overrides.items()}


def model_label(model: PolicySpec) -> str:
    """How a model is named in tables: its spec and the options that change its play.

    >>> model_label(PolicySpec.parse("ollama:qwen3:8b:num_ctx=8192,cache=r.sqlite"))
    'ollama:qwen3:8b:num_ctx=8192'
    """
    kept = {k: v for k, v in model.options.items() if k not in UNLABELLED_OPTIONS}
    return PolicySpec(spec=model.spec, options=kept).text
