"""AGI Maze as a verifiers environment: one labyrinth (or labyrinth set) as a multi-turn episode.

``vf-eval maze_envs_agimaze -m <model> --client.base-url <url>`` (the package
``maze_envs_agimaze`` exports these classes; docs/hubs.md). One task is one whole game
(:class:`AgiMazeTaskset`):

* a labyrinth: every bundle below ``packs`` (bundles, stage directories or groups; default the
  ``TRAINING`` group, never an evaluation labyrinth unless asked);
* or a labyrinth set: each of ``targets`` after the tutorials (the EnvTraverse curriculum), or
  one set given by ``paths``; a set is scored by its target.

One episode plays it (:class:`AgiMazeEnv`): the env's agent ``player`` opens one interaction
(one trace), and the project's AGI Maze LLM policy plays the labyrinth step by step through it:
its system prompt (the labyrinth's description), its history policy (``observations``,
``planning``, ``world_model``, ``window``), its parsing and re-asks (the environment's own
rejection text for an action it would not play); in a set, the conversation goes on from one
labyrinth to the next (``set_memory``). Every game is journaled (``--env.journal``). Rewards
(:mod:`~llm_policies.apps.verifiers.rubric`): ``solved``, ``success`` (within ``max_steps``),
``good`` (within ``soft_good_steps``) and ``rhae70``, from the game's row; the game's numbers
(steps, budgets, late, RHAE60/80...) as metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import verifiers.v1 as vf
from pydantic import Field

from llm_policies.apps.verifiers.episode import DEFAULT_JOURNAL, MazeTask, MazeTaskData, play
from llm_policies.apps.verifiers.games import (
    DEFAULT_AGIMAZE_SEEDS,
    DEFAULT_PACKS,
    agimaze_games,
    agimaze_set_games,
    game_name,
)
from llm_policies.apps.verifiers.rubric import AGIMAZE_REWARDS, Kind
from maze_envs.agimaze.scoring import DEFAULT_BUDGET_FACTOR
from maze_envs.bench.spec import GameTask

#: The name of the package that exports this environment (verifiers' taskset id).
AGIMAZE_ID = "maze_envs_agimaze"
_WEIGHT = {part.name: part.weight for part in AGIMAZE_REWARDS}


class AgiMazeTask(MazeTask):
    """One AGI Maze labyrinth or labyrinth set, scored by the (target) labyrinth."""

    KIND: ClassVar[Kind] = "agimaze"

    @vf.reward(weight=_WEIGHT["solved"])
    async def solved(self, trace: vf.Trace) -> float:
        """1 when the player left with the treasure within the evaluation budget."""
        return self.reward_part(trace, "solved")

    @vf.reward(weight=_WEIGHT["success"])
    async def success(self, trace: vf.Trace) -> float:
        """1 when solved within max_steps (the benchmark's success)."""
        return self.reward_part(trace, "success")

    @vf.reward(weight=_WEIGHT["good"])
    async def good(self, trace: vf.Trace) -> float:
        """1 when solved within soft_good_steps (the benchmark's good)."""
        return self.reward_part(trace, "good")

    @vf.reward(weight=_WEIGHT["rhae70"])
    async def rhae70(self, trace: vf.Trace) -> float:
        """RHAE70 of the (target) labyrinth."""
        return self.reward_part(trace, "rhae70")


class AgiMazeTasksetConfig(vf.TasksetConfig):
    """The games (``--env.taskset.*``): labyrinths (``packs``), or sets (``targets``, ``paths``)."""

    packs: list[str] = Field(default_factory=lambda: list(DEFAULT_PACKS))
    """Bundles, stage directories or groups; every bundle below them is one game."""
    targets: list[str] = Field(default_factory=list)
    """Labyrinth sets instead: each target (bundle, directory or group) after the tutorials."""
    tutorials: list[str] | None = None
    """The labyrinths before each target (default: the seven tutorials; [] plays targets alone)."""
    paths: list[str] = Field(default_factory=list)
    """One labyrinth set instead, in order (its last labyrinth is its target)."""
    budget_factor: float = Field(DEFAULT_BUDGET_FACTOR, gt=0)
    """The evaluation budget: budget_factor x max_steps steps per labyrinth."""
    max_steps: int | None = Field(None, ge=1)
    """Override every labyrinth's reference budget (single labyrinths only)."""
    pack_root: str | None = None
    """A folder of your own packs instead of the shipped ones."""
    pack_version: str | None = None
    """A shipped pack version by name (default: the current one)."""
    seeds: str = DEFAULT_AGIMAZE_SEEDS
    """Seeds (a bundle is a fixed labyrinth: the seed feeds the policy only)."""
    allow_evaluation: bool = False
    """Allow evaluation labyrinths (CLASSIC, EXTENDED, the Inspect default TUTORIAL)."""
    policy: dict[str, Any] = Field(default_factory=dict)
    """The LLM policy's options: history, window, prompt_version, output_mode, check..."""


def _games(config: AgiMazeTasksetConfig) -> list[GameTask]:
    common: dict[str, Any] = {"budget_factor": config.budget_factor}
    for name in ("pack_root", "pack_version"):
        if getattr(config, name) is not None:
            common[name] = getattr(config, name)
    allow = config.allow_evaluation
    if config.targets or config.paths:
        setup = {**common}
        if config.paths:
            setup["paths"] = list(config.paths)
        else:
            setup["targets"] = list(config.targets)
            if config.tutorials is not None:
                setup["tutorials"] = list(config.tutorials)
        return agimaze_set_games(setup, config.seeds, config.policy, allow_evaluation=allow)
    setup = {**common, "packs": list(config.packs)}
    if config.max_steps is not None:
        setup["max_steps"] = config.max_steps
    return agimaze_games(setup, config.seeds, config.policy, allow_evaluation=allow)


class AgiMazeTaskset(vf.Taskset[AgiMazeTask, AgiMazeTasksetConfig]):
    """One task per labyrinth (or set) and seed (checked when loaded, before any model call)."""

    def load(self) -> list[AgiMazeTask]:
        games = _games(self.config)
        return [
            AgiMazeTask(
                MazeTaskData(
                    idx=i,
                    name=game_name(game),
                    description=f"AGI Maze {game_name(game)}",
                    game=game.model_dump(mode="json"),
                ),
                self.config.task,
            )
            for i, game in enumerate(games)
        ]


class AgiMazeEnvConfig(vf.EnvConfig):
    """The env (``--env.*``): the agent that plays the labyrinths, and the journal."""

    player: vf.AgentConfig = vf.AgentConfig.model_validate({"runtime": {"type": "subprocess"}})
    """The verifiers agent that plays the labyrinth: the run's model unless pinned; its harness
    is the package's (one call a turn, in-process: the subprocess runtime is enough)."""
    journal: str = DEFAULT_JOURNAL
    """The SQLite journal every game is written to."""


class AgiMazeEnv(vf.Env[AgiMazeEnvConfig]):
    """One AGI Maze game per episode (see the module docstring)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        if not isinstance(task, AgiMazeTask):
            raise TypeError(f"AgiMazeEnv plays AgiMazeTask games, got {type(task).__name__}")
        await play(task, agents.player, "player", Path(self.config.journal))


def load_environment(**options: Any) -> vf.Env:
    """This environment as verifiers builds it for ``vf-eval maze_envs_agimaze`` (its own loader,
    :func:`verifiers.v1.load_environment`): ``options`` are the taskset's fields
    (``packs=["TRAINING/S0-keys"]``, ``targets=[...]``...) and ``journal``. Needs the package
    ``maze_envs_agimaze`` installed (docs/hubs.md)."""
    env_options = {k: options.pop(k) for k in ("journal",) if k in options}
    config = vf.resolve_env_config({"taskset": {"id": AGIMAZE_ID, **options}, **env_options})
    return vf.load_environment(config)
