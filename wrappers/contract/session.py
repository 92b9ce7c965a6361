r"""Contract sessions: one game of our environments, driven by JSON actions, answered by files.

A :class:`SessionSpec` says what is played (``agimaze``: one labyrinth; ``agimaze-set``: a
labyrinth set; ``escape``: Maze Escape v1 as one agent with teammates from a policy, or as every
agent) and with which seed. The environments are deterministic, so a session is its spec plus
the actions accepted so far: :func:`replay` rebuilds the game from them (policies included,
seeded from the game's seed), which is how the state survives between command-line calls.

Each accepted action yields a :class:`Response`: the observation files (``state.txt``,
``map.txt``, ``message.md``, ``labyrinth_description.md``) and the status (``terminal``,
``steps``, ``budget``, ``solved``...). A request that is not an action of the environment
(bad JSON shape, unknown id, a move after the end) raises :class:`ContractError` and changes
nothing.

Example:
    >>> game = open_game(SessionSpec(env="agimaze", path="TUTORIAL/STAGE-01/0000.json"))
    >>> sorted(game.response.files)
    ['map.txt', 'message.md', 'state.txt']
    >>> response = game.apply(game.parse({"id": "left"}))
    >>> response.files["message.md"]
    'You went left and stepped on an empty tile.\n'
    >>> response.status["steps"], response.status["terminal"]
    (1, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.scoring import DEFAULT_BUDGET_FACTOR, step_budget
from maze_envs.agimaze.set_env import SET_DESCRIPTION, START_ACTION
from maze_envs.bench.spec import ENV_KINDS
from maze_envs.escape.types import Action
from maze_envs.policies.episodes import AGIMAZE_ENV_ID, AGIMAZE_SET_ENV_ID
from maze_envs.text import render_agimaze, render_escape
from wrappers.contract.description import (
    escape_description,
    labyrinth_description,
    set_description,
    single_labyrinth_description,
)

#: What a session can play: the runner's environment setups (``agimaze``, ``agimaze-set``,
#: ``escape``), by the words of the table of environments.
EnvKind = str
#: Every observation file a response may hold.
OBSERVATION_FILES = ("state.txt", "map.txt", "message.md", "labyrinth_description.md")


class ContractError(ValueError):
    """A request the session does not accept; nothing was changed."""


class SessionSpec(BaseModel):
    """What a session plays (stored in the workspace; see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    env: EnvKind = Field(description=f"one of {', '.join(ENV_KINDS)}")
    seed: int = 0
    path: str | None = None  # agimaze: the pack path
    paths: list[str] | None = None  # agimaze-set: the labyrinths (default: tutorials + target)
    target: str | None = None  # agimaze-set: the final labyrinth of the default set
    budget_factor: float = Field(DEFAULT_BUDGET_FACTOR, gt=0)
    preset: str = "full"  # escape
    width: int = 9
    height: int = 9
    max_turns: int = 200
    overrides: dict[str, Any] = Field(default_factory=dict)  # escape: further Config fields
    agent: str | None = "A"  # escape: the agent played; None: every agent
    teammates: str = "explorer"  # escape: the teammates' policy spec

    @field_validator("env")
    @classmethod
    def _known_env(cls, env: str) -> str:
        if env not in ENV_KINDS:
            raise ValueError(f"unknown env {env!r}; a session plays one of {', '.join(ENV_KINDS)}")
        return env


#: The ``start`` options that set a Maze Escape ``Config`` field directly (the others are
#: ``--set FIELD=VALUE``).
_OPTIONS = {"width": "--width", "height": "--height", "max_turns": "--max-turns"}


def describe_config_error(exc: ValidationError) -> str:
    """A pydantic error of a Maze Escape config in one line, each problem naming the option
    that set the field and the value given.

    >>> from maze_envs.escape.config import Config
    >>> try:
    ...     Config(width=2, bogus=1)
    ... except ValidationError as exc:
    ...     print(describe_config_error(exc).replace("; ", "\\n"))
    --width 2: input should be greater than or equal to 5
    --set bogus=1: not a Maze Escape config field
    """
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "config"
        given = error.get("input")
        shown = f"{_OPTIONS[field]} {given}" if field in _OPTIONS else f"--set {field}={given}"
        message = str(error["msg"])
        if error["type"] == "extra_forbidden":
            message = "not a Maze Escape config field"
        problems.append(f"{shown}: {message[:1].lower()}{message[1:]}")
    return "; ".join(problems)


@dataclass
class Response:
    """The files and status of the environment's latest response."""

    files: dict[str, str]
    status: dict[str, Any]
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _action_id(request: Any, allowed: Sequence[str], extra_keys: frozenset[str]) -> str:
    if not isinstance(request, Mapping):
        raise ContractError(
            f'an action is a JSON object such as {{"id": "{allowed[0]}"}}, got '
            f"{type(request).__name__}"
        )
    key = "id" if "id" in request else "action" if "action" in request else None
    if key is None:
        raise ContractError(f'an action needs "id", e.g. {{"id": "{allowed[0]}"}}; got {request}')
    unknown = set(request) - {key} - extra_keys
    if unknown:
        raise ContractError(
            f"unknown key(s) {sorted(unknown)} in the action; allowed: id"
            + (f", {', '.join(sorted(extra_keys))}" if extra_keys else "")
        )
    name = request[key]
    if name not in allowed:
        raise ContractError(f"unknown action {name!r}; available: {', '.join(allowed)}")
    return str(name)


class _NamedActions:
    """What both AGI Maze sessions share: actions by name, terminal once the env says so."""

    env: Any
    names: list[str]
    over: bool

    def parse(self, request: Any) -> str:
        if self.over:
            raise ContractError("the session is terminal: no further actions are accepted")
        return _action_id(request, self.names, frozenset())

    def _step(self, action: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, _, terminated, truncated, info = self.env.step_name(str(action))
        self.over = bool(terminated or truncated)
        return obs, info


class _AgiMazeGame(_NamedActions):
    """``AgiMaze-v0`` on one labyrinth (or a pack directory, drawn from the seed)."""

    def __init__(self, spec: SessionSpec) -> None:
        from maze_envs.agimaze.env import AgiMazeEnv

        if not spec.path:
            raise ContractError("an agimaze session needs --path (a pack path)")
        try:
            self.env = AgiMazeEnv(path=spec.path, budget_factor=spec.budget_factor)
        except (ValueError, KeyError, FileNotFoundError) as exc:
            raise ContractError(f"cannot open the labyrinth {spec.path!r}: {exc}") from exc
        self.names = self.env.action_names
        obs, info = self.env.reset(seed=spec.seed)
        self.description = single_labyrinth_description(self.env, info)
        self.over = False
        self.response = self._respond(obs, info, None)

    def apply(self, action: Any) -> Response:
        obs, info = self._step(action)
        self.response = self._respond(obs, info, str(action))
        return self.response

    def _respond(self, obs: dict[str, Any], info: dict[str, Any], last: str | None) -> Response:
        typed = AgiMazeObservation.from_env(obs, info, last_action=last, env=self.env)
        files = {"state.txt": render_agimaze(typed.model_copy(update={"map": None})) + "\n"}
        if typed.map:
            files["map.txt"] = typed.map + "\n"
        files["message.md"] = typed.text + "\n"
        max_steps = int(info["max_steps"])
        status = {
            "env": "agimaze",
            "env_id": AGIMAZE_ENV_ID,
            "name": info["name"],
            "terminal": self.over,
            "solved": bool(info["solved"]),
            "steps": int(info["steps"]),
            "max_steps": max_steps,
            "budget": step_budget(self.env.budget_factor, max_steps),
            "available_actions": [] if self.over else list(self.names),
        }
        if "rhae" in info:
            status["rhae"] = info["rhae"]
        return Response(files, status, self.description)


class _AgiMazeSetGame(_NamedActions):
    """``AgiMazeSet-v0``: an ordered set of labyrinths, each begun with ``start``."""

    def __init__(self, spec: SessionSpec) -> None:
        from maze_envs.agimaze.set_env import DEFAULT_TARGET, AgiMazeSetEnv

        try:
            self.env = AgiMazeSetEnv(
                paths=spec.paths, target=spec.target or DEFAULT_TARGET,
                budget_factor=spec.budget_factor,
            )  # fmt: skip
        except (ValueError, KeyError, FileNotFoundError) as exc:
            raise ContractError(f"cannot open the labyrinth set: {exc}") from exc
        self.names = self.env.action_names
        obs, info = self.env.reset(seed=spec.seed)
        self.description = set_description(SET_DESCRIPTION, int(info["count"]))
        self.over = False
        self.labyrinth_text = ""
        self.response = self._respond(obs, info, None)

    def apply(self, action: Any) -> Response:
        obs, info = self._step(action)
        if str(action) == START_ACTION and not obs["waiting"] and "steps" in info:
            self.labyrinth_text = labyrinth_description(self.env, info)
        self.response = self._respond(obs, info, str(action))
        return self.response

    def _respond(self, obs: dict[str, Any], info: dict[str, Any], last: str | None) -> Response:
        typed = AgiMazeObservation.from_env(obs, info, last_action=last, env=self.env)
        index, count = int(info["index"]), int(info["count"])
        files: dict[str, str] = {}
        if typed.waiting:
            files["message.md"] = (typed.message or "") + "\n"
            self.labyrinth_text = ""
        else:
            plain = typed.model_copy(update={"map": None, "message": None})
            text = render_agimaze(plain)
            files["state.txt"] = f"Labyrinth {index + 1} of {count}.\n{text}\n"
            if typed.map:
                files["map.txt"] = typed.map + "\n"
            files["message.md"] = (typed.message or typed.text) + "\n"
            files["labyrinth_description.md"] = self.labyrinth_text
        results = info["results"]
        status = {
            "env": "agimaze-set",
            "env_id": AGIMAZE_SET_ENV_ID,
            "terminal": self.over,
            "index": index,
            "count": count,
            "waiting": bool(typed.waiting),
            "steps": typed.step,
            "budget": typed.budget,
            "solved": bool(results) and all(r["solved"] for r in results) and self.over,
            "solved_count": sum(bool(r["solved"]) for r in results),
            "results": results,
            "available_actions": (
                [] if self.over else [START_ACTION] if typed.waiting else self.names[1:]
            ),
        }
        return Response(files, status, self.description)


class _EscapeGame:
    """Maze Escape v1: one agent with teammates from a policy, or every agent."""

    def __init__(self, spec: SessionSpec) -> None:
        from maze_envs import maze_escape_v1
        from maze_envs.policies import escape_episode, make_policy
        from maze_envs.policies.seeds import agent_seed

        try:
            self.env = maze_escape_v1.parallel_env(
                preset=spec.preset, width=spec.width, height=spec.height,
                max_turns=spec.max_turns, **spec.overrides,
            )  # fmt: skip
        except ValidationError as exc:
            raise ContractError(
                f"cannot build the Maze Escape game: {describe_config_error(exc)}"
            ) from None
        except (ValueError, TypeError) as exc:
            raise ContractError(f"cannot build the Maze Escape game: {exc}") from exc
        self.config = self.env.config
        agents = list(self.env.possible_agents)
        if spec.agent is not None and spec.agent not in agents:
            raise ContractError(f"unknown agent {spec.agent!r}; this game's agents are {agents}")
        self.agent = spec.agent
        self.raw, _ = self.env.reset(seed=spec.seed)
        self.policies: dict[str, Any] = {}
        for index, name in enumerate(agents):
            if spec.agent is not None and name != spec.agent:
                try:
                    policy = make_policy(spec.teammates, "escape")
                except ValueError as exc:
                    raise ContractError(f"teammate policy: {exc}") from exc
                policy.reset(name, agent_seed(spec.seed, index), escape_episode(self.env, name))
                self.policies[name] = policy
        self.description = escape_description(self.config, spec.agent, spec.teammates)
        self.over = False
        self.response = self._respond()

    def _one(self, request: Any, who: str) -> dict[str, Any]:
        moves = ["N", "E", "S", "W", "STAY"]
        move = _action_id(request, moves, frozenset({"notebook", "radio"}))
        try:
            action = Action.model_validate(
                {"move": move, "notebook": request.get("notebook"), "radio": request.get("radio")}
            )
        except ValidationError as exc:
            detail = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3]
            )
            raise ContractError(f"invalid action for {who}: {detail}") from None
        if action.notebook is not None:
            needs = "SpliceEdit" if self.config.notebook_mode == "splice" else "AppendEdit"
            if type(action.notebook).__name__ != needs:
                form = (
                    '{"start": S, "end": E, "text": "..."}'
                    if needs == "SpliceEdit"
                    else '{"text": "..."}'
                )
                raise ContractError(f"this game's notebook edits look like {form}")
        return action.model_dump(mode="json")

    def parse(self, request: Any) -> dict[str, Any]:
        if self.over:
            raise ContractError("the session is terminal: no further actions are accepted")
        if self.agent is not None:
            return {self.agent: self._one(request, self.agent)}
        live = list(self.env.agents)
        if not isinstance(request, Mapping) or set(request) != set(live):
            got = sorted(request) if isinstance(request, Mapping) else type(request).__name__
            raise ContractError(f"give one action for each agent still playing {live}; got {got}")
        return {name: self._one(request[name], name) for name in live}

    def apply(self, action: Any) -> Response:
        from maze_envs.escape.convert import observation_to_model
        from maze_envs.policies.interface import as_decision

        actions = {name: Action.model_validate(a) for name, a in dict(action).items()}
        for name, policy in self.policies.items():
            if name in self.env.agents:
                typed = observation_to_model(self.raw[name], self.config, name)
                actions[name] = as_decision(policy.act(typed)).action
        self.raw, *_ = self.env.step(actions)
        self.over = not self.env.agents
        self.response = self._respond()
        return self.response

    def _respond(self) -> Response:
        from maze_envs.escape.convert import observation_to_model

        shown = [self.agent] if self.agent is not None else list(self.env.possible_agents)
        texts = []
        for name in shown:
            typed = observation_to_model(self.raw[name], self.config, name)
            text = render_escape(typed, self.config)
            texts.append(text if self.agent is not None else f"## Agent {name}\n\n{text}")
        files = {"state.txt": "\n\n".join(texts) + "\n"}
        outcome = self.env.outcome()
        if self.over:
            end = "escaped: every agent reached the exit" if outcome["success"] else "out of turns"
            files["message.md"] = f"The game is over ({end}) after {outcome['turns']} turns.\n"
        status = {
            "env": "escape",
            "env_id": self.env.env_id,
            "terminal": self.over,
            "solved": bool(outcome["success"]),
            "steps": int(outcome["turns"]),
            "budget": self.config.max_turns,
            "agents": list(self.env.possible_agents),
            "controlled": shown,
            "available_actions": [] if self.over else ["N", "E", "S", "W", "STAY"],
        }
        if self.over:  # during the game the agents' observations are all they know
            status["first_visit_turn"] = outcome["first_visit_turn"]
        return Response(files, status, self.description)


Game = _AgiMazeGame | _AgiMazeSetGame | _EscapeGame


def open_game(spec: SessionSpec) -> Game:
    """A new game of ``spec`` after its reset (``game.response`` is the first response)."""
    if spec.env == "agimaze":
        return _AgiMazeGame(spec)
    if spec.env == "agimaze-set":
        return _AgiMazeSetGame(spec)
    return _EscapeGame(spec)


def replay(spec: SessionSpec, actions: Sequence[Any]) -> Game:
    """The game of ``spec`` after ``actions`` (accepted actions, as :meth:`parse` returned)."""
    game = open_game(spec)
    for action in actions:
        game.apply(action)
    return game


def jsonable(value: Any) -> Any:
    """``value`` with numpy values as plain numbers and lists (for ``status.json``)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
