"""The environments as the runner drives them: build, reset, observe, step, score, abort.

An :class:`EnvAdapter` wraps one game of an environment behind the few calls the game loops
of :mod:`maze_envs.bench.rollout` need, so those loops are written once for all: typed
observations of the agents to act, a step with their typed actions, the game's metrics at the
end (or, for a game read back from its journal, :meth:`EnvAdapter.rescore`), and the journal's
recorder. Each case names its adapter class (``CaseBase.adapter``). Policies come from the registry
(:func:`maze_envs.policies.registry.make_policy`: built-in names, import paths, plug-ins) and
their episode information from the environments' builders; privileged policies get the ground
truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from maze_envs._registration import find_entry
from maze_envs.bench.agimaze_spec import AgiMazeCase, AgiMazeSetCase, PackCase
from maze_envs.bench.escape_spec import EscapeCase
from maze_envs.bench.metrics import (
    AgiMazeTally,
    EscapeTally,
    Status,
    UsageTally,
    agimaze_scores,
    agimaze_set_scores,
    harness_endpoint,
)
from maze_envs.bench.spec import GameTask, PolicyKind
from maze_envs.policies.interface import is_privileged
from maze_envs.policies.seeds import policy_seeds


@dataclass(frozen=True)
class JournaledGame:
    """A game read back from its journal, as :meth:`EnvAdapter.rescore` scores it again."""

    #: the case it was played on (the adapter's own case class)
    case: Any
    #: its journal turns, the reset first
    turns: Sequence[Any]
    #: the outcome recorded at its end
    outcome: Mapping[str, Any]
    #: per turn (the reset's included), each agent's decision status
    statuses: Sequence[Mapping[str, Status]]


class EnvAdapter(Protocol):
    """One game of an environment, as the runner drives it."""

    policies: dict[str, Any]
    specs: list[Any]
    privileged: set[str]
    recorder: Any
    usage: UsageTally
    started: bool
    game_id: int | None

    @property
    def policy_seeds(self) -> dict[str, int]: ...

    def reset(self) -> None: ...

    def observations(self) -> dict[str, Any]: ...

    def step(self, actions: dict[str, Any], statuses: dict[str, Status] | None = None) -> None:
        """Play one turn; ``statuses`` are the decisions' statuses (``ok`` when not given)."""

    @property
    def running(self) -> bool: ...

    def metrics(self) -> dict[str, Any]: ...

    def abort(self, extra: dict[str, Any]) -> None: ...

    def close(self) -> None: ...

    @classmethod
    def rescore(cls, game: JournaledGame) -> dict[str, Any]:
        """A recorded game's metrics from its journal turns, as :meth:`metrics` gave them
        live."""


def make_policy(spec: str, env_kind: PolicyKind, options: dict[str, Any]) -> Any:
    """A policy from the registry (names, ``package.module:Class`` paths, plug-in prefixes)."""
    from maze_envs.policies.registry import make_policy as registry_make

    return registry_make(spec, env_kind, **options)


def build_policies(task: GameTask) -> list[Any]:
    """One fresh policy per agent of ``task`` (a team shares nothing between members)."""
    kind = task.case.policy_kind
    return [make_policy(s.spec, kind, s.options) for s in task.policy.members(task.agents)]


def _endpoint(policy: Any) -> str | None:
    """The model endpoint a policy reports in its ``harness()`` settings (for outage messages)."""
    report = getattr(policy, "harness", None)
    return harness_endpoint(report()) if callable(report) else None


class AdapterBase:
    """What every adapter shares: the task's policies (built from the registry, their seeds
    and episode information), the usage tally and the recorder; a new environment's adapter
    subclasses it and plays its game (reset, observations, step, metrics, abort, rescore)."""

    def __init__(self, task: GameTask, journal: Any) -> None:
        self.task = task
        self.specs = task.policy.members(task.agents)
        self.policies: dict[str, Any] = {}
        for agent, policy in zip(task.agents, build_policies(task), strict=True):
            self.policies[agent] = policy
        self.privileged = {a for a, p in self.policies.items() if is_privileged(p)}
        self.usage = UsageTally({a: _endpoint(p) for a, p in self.policies.items()})
        self.started = False
        self.game_id: int | None = None
        self.env: Any = None
        self.recorder: Any = None
        self._journal = journal

    def _attach_recorder(self) -> None:
        if self._journal is not None:
            recorder = getattr(self.env, "recorder", None)
            if recorder is None:
                raise RuntimeError(f"{type(self.env).__name__} has no journal recorder")
            self.recorder = recorder

    @property
    def policy_seeds(self) -> dict[str, int]:
        """Each agent's policy seed in this game (:func:`maze_envs.policies.seeds.policy_seeds`)."""
        task = self.task
        return policy_seeds(task.seed, task.agents, task.case.salt, task.policy.policy_seed)

    def _started(self) -> None:
        self.started = True
        if self.recorder is not None:
            self.game_id = self.recorder.game_id

    def close(self) -> None:
        try:
            for policy in self.policies.values():
                policy.close()
        finally:
            if self.env is not None:
                self.env.close()


class EscapeAdapter(AdapterBase):
    """A Maze Escape game (version 0 or 1) with one policy per agent."""

    def __init__(self, task: GameTask, journal: Any) -> None:
        super().__init__(task, journal)
        case = task.case
        assert isinstance(case, EscapeCase)
        self.config = case.game_config
        self.env = find_entry(case.env_id).make(config=self.config, journal=journal)
        self._attach_recorder()
        self.tally = EscapeTally(self.config.agents)
        self._raw: dict[str, Any] = {}
        from maze_envs.escape.types import Observation

        # the env's own observations are members of its spaces: the typed model is built from
        # their values without validating them again (the same model as observation_to_model
        # gives; tests/escape/test_spaces.py checks that), a tenth of its cost
        self._convert = Observation.from_space

    def reset(self) -> None:
        from maze_envs.policies.episodes import escape_episode

        self._raw, _ = self.env.reset(seed=self.task.seed)
        self._started()
        seeds = self.policy_seeds
        for agent, policy in self.policies.items():
            episode = escape_episode(self.env, agent, privileged=agent in self.privileged)
            policy.reset(agent, seeds[agent], episode)

    def observations(self) -> dict[str, Any]:
        raw, config, convert = self._raw, self.config, self._convert
        return {agent: convert(raw[agent], config, agent) for agent in self.env.agents}

    def step(self, actions: dict[str, Any], statuses: dict[str, Status] | None = None) -> None:
        self._raw, _, _, _, infos = self.env.step(actions)
        self.tally.add_turn({agent: info["events"] for agent, info in infos.items()}, statuses)

    @property
    def running(self) -> bool:
        return bool(self.env.agents)

    def metrics(self) -> dict[str, Any]:
        if not self.started:
            return {}
        notebooks = {agent: str(obs["notebook"]) for agent, obs in self._raw.items()}
        return self.tally.finish(self.env.outcome(), notebooks, self.config.max_turns)

    def abort(self, extra: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.abort({**self.env.outcome(), **extra})

    @classmethod
    def rescore(cls, game: JournaledGame) -> dict[str, Any]:
        case, turns = game.case, game.turns
        assert isinstance(case, EscapeCase)
        tally = EscapeTally(case.game_config.agents)
        for index, turn in enumerate(turns[1:], start=1):
            tally.add_turn(turn.events, game.statuses[index])
        notebooks = {a: str(o.get("notebook", "")) for a, o in turns[-1].observations.items()}
        return tally.finish(game.outcome, notebooks, case.game_config.max_turns)


class AgiMazeAdapter(AdapterBase):
    """An AGI Maze episode on one bundle, played by one policy as ``"player"``."""

    def __init__(self, task: GameTask, journal: Any) -> None:
        super().__init__(task, journal)
        case = task.case
        assert isinstance(case, PackCase)
        kwargs: dict[str, Any] = {
            "budget_factor": case.budget_factor,
            "pack_root": case.pack_root,
            "pack_version": case.shipped_version(),
            **self._env_kwargs(case),
        }
        if journal is not None:
            kwargs["journal"] = journal
        self.env = find_entry(case.env_id).make(**kwargs)
        self._attach_recorder()
        self._typed: Any = None
        self._info: dict[str, Any] = {}
        self._over = False
        self.tally = AgiMazeTally()
        from maze_envs.agimaze.observation import AgiMazeObservation

        self._observe = AgiMazeObservation.from_env

    def _env_kwargs(self, case: Any) -> dict[str, Any]:
        """The env's own arguments beside the pack ones: the bundle and its step limit."""
        return {"path": case.pack, "max_steps": case.max_steps}

    def _reset_policy(self, info: Mapping[str, Any], privileged: bool) -> None:
        from maze_envs.policies.episodes import agimaze_episode

        episode = agimaze_episode(self.env, info, privileged=privileged)
        self.policies["player"].reset("player", self.policy_seeds["player"], episode)

    def reset(self) -> None:
        obs, info = self.env.reset(seed=self.task.seed)
        self._started()
        self._info = info
        self._typed = self._observe(obs, info, env=self.env)
        self._reset_policy(info, self._privileged_at_reset())

    def _privileged_at_reset(self) -> bool:
        return "player" in self.privileged

    def observations(self) -> dict[str, Any]:
        return {"player": self._typed}

    def step(self, actions: dict[str, Any], statuses: dict[str, Status] | None = None) -> None:
        action = str(actions["player"])
        obs, _, terminated, truncated, info = self.env.step_name(action)
        status = (statuses or {}).get("player", "ok")
        self.tally.add_step(action, info["events"], info.get("error") is None, status)
        self._info = info
        self._over = bool(terminated or truncated)
        if not self._over:  # nobody reads the observation after the last step
            self._typed = self._observe(obs, info, env=self.env, last_action=action)

    @property
    def running(self) -> bool:
        return self.started and not self._over

    def metrics(self) -> dict[str, Any]:
        if not self.started:
            return {}
        info, case = self._info, self.task.case
        assert isinstance(case, AgiMazeCase)
        max_steps = int(info["max_steps"])
        soft = case.soft_good_steps if case.max_steps is None else None
        budget = int(info.get("budget") or case.budget(max_steps))
        scores = agimaze_scores(
            steps=int(info["steps"]),
            solved=bool(info["solved"]),
            max_steps=max_steps,
            soft_good_steps=soft,
            budget=budget,
        )
        return {**scores, **self.tally.metrics()}

    def abort(self, extra: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.abort({**self._info_outcome(), **extra})

    def _info_outcome(self) -> dict[str, Any]:
        info = self._info
        return {"solved": bool(info.get("solved")), "steps": int(info.get("steps", 0))}

    @classmethod
    def rescore(cls, game: JournaledGame) -> dict[str, Any]:
        case, turns = game.case, game.turns
        assert isinstance(case, AgiMazeCase)
        moves = AgiMazeTally()
        for index, turn in enumerate(turns[1:], start=1):
            event = turn.events.get("player", {})
            formal = event.get("formal") if isinstance(event.get("formal"), dict) else {}
            played = event.get("error") is None
            status = game.statuses[index].get("player", "ok")
            moves.add_step(str(event.get("action")), formal.get("events") or [], played, status)
        last = turns[-1].events.get("player", {}) if len(turns) > 1 else {}
        max_steps = case.max_steps or case.hard_max_steps or 200
        metrics = agimaze_scores(
            steps=int(last.get("steps", 0)),
            solved=bool(last.get("solved", False)),
            max_steps=max_steps,
            soft_good_steps=case.soft_good_steps if case.max_steps is None else None,
            budget=case.budget(max_steps),
        )
        return {**metrics, **moves.metrics()}


class AgiMazeSetAdapter(AgiMazeAdapter):
    """A labyrinth set (``AgiMazeSet-v0``), played by one policy as ``"player"``.

    The policy is reset with each labyrinth's episode right after ``start`` (the baselines answer
    ``start`` themselves while the set waits), so what it carries from one labyrinth to the next
    is whatever it keeps across resets, as an agent in the EnvTraverse curriculum keeps its
    conversation. Scores: :func:`~maze_envs.bench.metrics.agimaze_set_scores` (the target's),
    the wall moves over every labyrinth's moves.
    """

    def _set_case(self) -> AgiMazeSetCase:
        assert isinstance(self.task.case, AgiMazeSetCase)
        return self.task.case

    def _env_kwargs(self, case: Any) -> dict[str, Any]:
        return {"paths": list(case.paths)}

    def _privileged_at_reset(self) -> bool:
        return False  # while the set waits nothing of a labyrinth is known, privileged or not

    def step(self, actions: dict[str, Any], statuses: dict[str, Status] | None = None) -> None:
        action = str(actions["player"])
        was_waiting = bool(self._info.get("waiting", True))
        obs, _, terminated, truncated, info = self.env.step_name(action)
        status = (statuses or {}).get("player", "ok")
        # an action the set ignored (a move while it waits, one the labyrinth lacks) has no steps
        self.tally.add_step(action, info.get("events") or [], "steps" in info, status)
        self._info = info
        self._over = bool(terminated or truncated)
        typed = self._observe(obs, info, env=self.env, last_action=action)
        if was_waiting and not info["waiting"] and not self._over:  # a labyrinth began
            self._reset_policy(info, "player" in self.privileged)
            typed = typed.model_copy(update={"last_action": None})
        self._typed = typed

    def metrics(self) -> dict[str, Any]:
        if not self.started:
            return {}
        case = self._set_case()
        results = self._info.get("results") or []
        scores = agimaze_set_scores(results, len(case.paths), case.soft_good_steps)
        return {**scores, **self.tally.metrics()}

    def _info_outcome(self) -> dict[str, Any]:
        from maze_envs.agimaze.recording import set_outcome

        return set_outcome(self._info.get("results") or [], len(self._set_case().paths))

    @classmethod
    def rescore(cls, game: JournaledGame) -> dict[str, Any]:
        case = game.case
        assert isinstance(case, AgiMazeSetCase)
        results = game.outcome.get("results") or []
        metrics = agimaze_set_scores(results, len(case.paths), case.soft_good_steps)
        moves = AgiMazeTally()
        for index, turn in enumerate(game.turns[1:], start=1):
            event = turn.events.get("player", {})
            played = "steps" in event  # the set ignored actions without a labyrinth step
            status = game.statuses[index].get("player", "ok")
            moves.add_step(str(event.get("action")), event.get("events") or [], played, status)
        return {**metrics, **moves.metrics()}


def make_adapter(task: GameTask, journal: Any) -> EnvAdapter:
    """The adapter of ``task``'s environment (the one its case names)."""
    adapter: EnvAdapter = task.case.adapter_class()(task, journal)
    return adapter
