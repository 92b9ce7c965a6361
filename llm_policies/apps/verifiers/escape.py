"""Maze Escape as a verifiers environment: the team's agents as the episode's players.

``vf-eval maze_envs_escape -m <model> --client.base-url <url>`` (the package
``maze_envs_escape`` exports these classes; docs/hubs.md). One task is one whole game, a maze
size and a seed (:class:`EscapeTaskset`: 100 seeds from 1,000,000 on unless asked, none a seed
the project evaluates on). One episode plays it (:class:`EscapeEnv`):

* **players**: verifiers' own multi-agent support. The env's agent ``team`` (the run's model
  unless pinned: ``--env.team.model``, ``--env.team.sampling.*``) opens one interaction per Maze
  Escape agent, each with its own trace. Moves are simultaneous: each turn every agent is asked
  at once (``asyncio.gather`` over the interactions, as verifiers' env docs ask independent
  agents to be written; ``--env.max-concurrent-agents`` says how many calls really run at once,
  one by default), then the game steps once with all their actions. The answer to "does
  verifiers' multi-agent support fit simultaneous moves" is yes: the env owns the turn loop;
* **prompts, parsing, fallbacks, records**: the project's LLM policy, one per agent
  (:mod:`~llm_policies.apps.verifiers.policy`), with the taskset's ``policy`` options
  (``prompt_version``, ``output_mode``, ``check``, ``order``...);
* **journal**: every game into ``--env.journal`` (default ``outputs/maze_envs.sqlite``);
* **rewards** (every agent's trace gets the team's): ``team_success`` and ``finish_speed``
  (fastest possible finish / finish turn), from the game's row
  (:mod:`~llm_policies.apps.verifiers.rubric`); the game's numbers as metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import verifiers.v1 as vf
from pydantic import Field

from llm_policies.apps.verifiers.episode import DEFAULT_JOURNAL, MazeTask, MazeTaskData, play
from llm_policies.apps.verifiers.games import DEFAULT_ESCAPE_SEEDS, escape_games, game_name
from llm_policies.apps.verifiers.rubric import ESCAPE_REWARDS, Kind

#: The name of the package that exports this environment (verifiers' taskset id).
ESCAPE_ID = "maze_envs_escape"
_WEIGHT = {part.name: part.weight for part in ESCAPE_REWARDS}


class EscapeTask(MazeTask):
    """One Maze Escape game; the team's rewards on every agent's trace."""

    KIND: ClassVar[Kind] = "escape"

    @vf.reward(weight=_WEIGHT["team_success"])
    async def team_success(self, trace: vf.Trace) -> float:
        """1 when every agent visited the exit within the turn limit."""
        return self.reward_part(trace, "team_success")

    @vf.reward(weight=_WEIGHT["finish_speed"])
    async def finish_speed(self, trace: vf.Trace) -> float:
        """Fastest possible finish / the team's finish turn; 0 without team success."""
        return self.reward_part(trace, "finish_speed")


class EscapeTasksetConfig(vf.TasksetConfig):
    """The games (``--env.taskset.*``)."""

    preset: str | None = None
    """Observation preset: sparse, navigator, shared_frame or full (default: the game's own)."""
    sizes: list[str] = Field(default_factory=lambda: ["9"])
    """Maze sizes: ``9`` (9x9) or ``13x9``; one game per size and seed."""
    max_turns: int | None = Field(None, ge=1)
    """Turn limit (default: the game's own)."""
    version: int = 1
    """Maze Escape version (0 or 1)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Any switch of the game's Config by name: ``{radio = false, num_agents = 2}``."""
    seeds: str = DEFAULT_ESCAPE_SEEDS
    """Seeds (``1000000-1000099``, ``1000005,1000009``); one game per seed and size."""
    allow_evaluation: bool = False
    """Allow seeds the project evaluates on (shipped studies, bench and Inspect defaults)."""
    policy: dict[str, Any] = Field(default_factory=dict)
    """The LLM policy's options: prompt_version, output_mode, check, order, parse_retries..."""


class EscapeTaskset(vf.Taskset[EscapeTask, EscapeTasksetConfig]):
    """One task per maze size and seed (checked when loaded, before any model is called)."""

    def load(self) -> list[EscapeTask]:
        config = self.config
        setup: dict[str, Any] = {
            "version": config.version,
            "sizes": list(config.sizes),
            "set": dict(config.config),
        }
        if config.preset is not None:
            setup["preset"] = config.preset
        if config.max_turns is not None:
            setup["max_turns"] = config.max_turns
        games = escape_games(
            setup, config.seeds, config.policy, allow_evaluation=config.allow_evaluation
        )
        return [
            EscapeTask(
                MazeTaskData(
                    idx=i,
                    name=game_name(game),
                    description=f"Maze Escape {game.case.setup}, {game_name(game)}",
                    game=game.model_dump(mode="json"),
                ),
                config.task,
            )
            for i, game in enumerate(games)
        ]


class EscapeEnvConfig(vf.EnvConfig):
    """The env (``--env.*``): the agent that plays every Maze Escape agent, and the journal."""

    team: vf.AgentConfig = vf.AgentConfig.model_validate({"runtime": {"type": "subprocess"}})
    """The verifiers agent that plays every Maze Escape agent: the run's model unless pinned; its
    harness is the package's (one call a turn, in-process: the subprocess runtime is enough)."""
    journal: str = DEFAULT_JOURNAL
    """The SQLite journal every game is written to."""


class EscapeEnv(vf.Env[EscapeEnvConfig]):
    """One Maze Escape game per episode (see the module docstring)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        if not isinstance(task, EscapeTask):
            raise TypeError(f"EscapeEnv plays EscapeTask games, got {type(task).__name__}")
        await play(task, agents.team, "team", Path(self.config.journal))


def load_environment(**options: Any) -> vf.Env:
    """This environment as verifiers builds it for ``vf-eval maze_envs_escape`` (its own loader,
    :func:`verifiers.v1.load_environment`): ``options`` are the taskset's fields
    (``seeds="1000000-1000009"``, ``sizes=["7"]``...) and ``journal``. Needs the package
    ``maze_envs_escape`` installed (docs/hubs.md)."""
    env_options = {k: options.pop(k) for k in ("journal",) if k in options}
    config = vf.resolve_env_config({"taskset": {"id": ESCAPE_ID, **options}, **env_options})
    return vf.load_environment(config)
