"""The environments as the runner drives them: build, reset, observe, step, score, abort.

An :class:`EnvAdapter` wraps one game of either environment behind the few calls the game loops
of :mod:`maze_envs.bench.rollout` need, so those loops are written once for both: typed
observations of the agents to act, a step with their typed actions, the game's metrics at the
end, and the journal's recorder. Policies come from the registry
(:func:`maze_envs.policies.registry.make_policy`: built-in names, import paths, plug-ins) and
their episode information from the environments' builders; privileged policies get the ground
truth.
"""

from __future__ import annotations

from typing import Any, Protocol

from maze_envs._registration import find_entry
from maze_envs.bench.metrics import (
    AgiMazeTally,
    EscapeTally,
    Status,
    UsageTally,
    agimaze_scores,
    harness_endpoint,
)
from maze_envs.bench.spec import AgiMazeCase, EscapeCase, GameTask, PolicyKind
from maze_envs.policies.interface import is_privileged
from maze_envs.policies.seeds import policy_seeds


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


class _Base:
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


class EscapeAdapter(_Base):
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
        from maze_envs.escape.convert import observation_to_model

        self._convert = observation_to_model

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


class AgiMazeAdapter(_Base):
    """An AGI Maze episode on one bundle, played by one policy as ``"player"``."""

    def __init__(self, task: GameTask, journal: Any) -> None:
        super().__init__(task, journal)
        case = task.case
        assert isinstance(case, AgiMazeCase)
        self.case = case
        from maze_envs.agimaze.packs import PACK_VERSIONS

        shipped = case.pack_root is None and case.pack_version in PACK_VERSIONS
        kwargs: dict[str, Any] = {
            "path": case.pack,
            "budget_factor": case.budget_factor,
            "max_steps": case.max_steps,
            "pack_root": case.pack_root,
            "pack_version": case.pack_version if shipped else None,
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

    def reset(self) -> None:
        from maze_envs.policies.episodes import agimaze_episode

        obs, info = self.env.reset(seed=self.task.seed)
        self._started()
        self._info = info
        self._typed = self._observe(obs, info, env=self.env)
        policy = self.policies["player"]
        episode = agimaze_episode(self.env, info, privileged="player" in self.privileged)
        policy.reset("player", self.policy_seeds["player"], episode)

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
        info, case = self._info, self.case
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


def make_adapter(task: GameTask, journal: Any) -> EnvAdapter:
    """The adapter of ``task``'s environment."""
    if isinstance(task.case, EscapeCase):
        return EscapeAdapter(task, journal)
    if isinstance(task.case, AgiMazeCase):
        return AgiMazeAdapter(task, journal)
    from maze_envs.bench.setgames import AgiMazeSetAdapter

    return AgiMazeSetAdapter(task, journal)
