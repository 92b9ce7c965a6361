"""The policy interface: one protocol for classical solvers and language-model policies.

A policy controls one agent for one game at a time. The runner (``maze_envs.bench``) calls

1. ``reset(agent, seed, episode)`` once per game: the agent's name, a seed (the policy's only
   source of randomness) and the episode's static information (:class:`EscapeEpisode` or
   :class:`AgiMazeEpisode`);
2. ``act(observation)`` (or ``await aact(observation)``) once per turn with the agent's *typed*
   observation (:class:`maze_envs.escape.types.Observation`, or
   :class:`maze_envs.agimaze.observation.AgiMazeObservation`), which returns the typed action
   (:class:`maze_envs.escape.types.Action`, or an AGI Maze action name such as ``"up"``),
   optionally wrapped in a :class:`Decision` that carries a per-decision record for the journal,
   usage (tokens, cost) and a request to stop the game;
3. ``close()`` when the policy is no longer needed.

Sync or async:
    A simple policy is a few lines of synchronous code (subclass :class:`PolicyBase` and write
    ``act``). I/O-bound policies (model calls) subclass :class:`AsyncPolicyBase` and write
    ``aact``; the runner then awaits the agents of a turn concurrently, and many games at once.
    Every policy has both methods: :class:`PolicyBase` gives ``aact`` by calling ``act``, and
    :class:`AsyncPolicyBase` gives ``act`` by running ``aact`` to completion (outside a running
    event loop). :func:`as_async` adapts any object that has only ``act``.

Setups a policy cannot play:
    A policy that reads only some games (a trained network reads the observations it was trained
    on) may have ``check_config(config)``, raising ``ValueError`` that says what it needs for a
    Maze Escape :class:`~maze_envs.escape.types.Config` it cannot play; the runner asks it about
    every setup before the first game, so a wrong setup is one clear error, not a run of failed
    games.

Privileged policies:
    A policy plays only from its observations unless its class sets ``privileged = True``
    (oracles). Only then does the runner fill ``episode.ground_truth`` (the full maze or
    labyrinth), and it marks every result of such a policy as privileged.

Example: a policy in ten lines.
    >>> from maze_envs.escape.types import Action, Observation
    >>> from maze_envs.policies.interface import EscapeEpisode, PolicyBase
    >>> class GoNorthWhenOpen(PolicyBase[EscapeEpisode, Observation, Action]):
    ...     '''Moves north whenever that edge is open, otherwise stays.'''
    ...
    ...     def act(self, observation: Observation) -> Action:
    ...         return Action(move="N" if observation.edges["N"] == "open" else "STAY")
    >>> policy = GoNorthWhenOpen()
    >>> policy.privileged
    False
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    TypeVar,
    runtime_checkable,
)

if TYPE_CHECKING:
    from maze_envs.escape.types import Config

EpisodeT = TypeVar("EpisodeT", contravariant=True)
ObsT = TypeVar("ObsT", contravariant=True)
ActT = TypeVar("ActT")
ActT_co = TypeVar("ActT_co", covariant=True)

CostStatus = Literal["priced", "local", "unknown", "none"]


@dataclass(frozen=True, slots=True)
class Usage:
    """What one decision cost: model tokens, requests, latency and money.

    ``cost_usd`` is ``None`` when it is not known; ``cost_status`` says why: ``"priced"`` (from a
    price table), ``"local"`` (a local model: cost 0 by definition), ``"unknown"`` (a hosted model
    whose price is not known: never counted as 0) or ``"none"`` (no model was called).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    cost_status: CostStatus = "none"

    def __add__(self, other: Usage) -> Usage:
        statuses = {self.cost_status, other.cost_status}
        status: CostStatus = next(
            (s for s in ("unknown", "priced", "local") if s in statuses), "none"
        )
        cost = None if status == "unknown" else (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.requests + other.requests,
            self.latency_s + other.latency_s,
            None if status in {"unknown", "none"} else cost,
            status,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain data for the journal and the results."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "requests": self.requests,
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "cost_status": self.cost_status,
        }


@dataclass(frozen=True, slots=True)
class Decision(Generic[ActT]):
    """An action with what the runner should know about how it was chosen.

    Attributes:
        action: the typed action, exactly what ``act`` would return on its own.
        record: plain JSON-able data stored in the journal beside this turn's action (an LLM
            policy stores its prompt reference, raw reply, quirks applied, retries...).
        usage: tokens, requests and cost of this decision, summed by the runner per agent/game.
        stop: a reason to end the game cleanly after this turn (e.g. ``"cost cap reached"``);
            the runner records it as the game's stop reason.
        status: ``"ok"``; ``"fallback"`` when the policy could not decide and fell back to a
            default action (e.g. an unparsable reply became STAY); ``"outage"`` when the model
            could not be reached, so the action is not the model's play.
    """

    action: ActT
    record: Mapping[str, Any] | None = None
    usage: Usage | None = None
    stop: str | None = None
    status: Literal["ok", "fallback", "outage"] = "ok"


def as_decision(result: ActT | Decision[ActT]) -> Decision[ActT]:
    """``result`` as a :class:`Decision` (a bare action gets an empty one)."""
    return result if isinstance(result, Decision) else Decision(result)


# --- what a policy knows before its first turn ------------------------------------------------


@dataclass(frozen=True, slots=True)
class EscapeGroundTruth:
    """The full Maze Escape board, for privileged policies only.

    ``walls[cell]`` is the N/E/S/W wall bit mask of the flat cell ``row * width + col`` (bit
    ``k`` set: a wall in direction ``k`` of N, E, S, W), as in :mod:`maze_envs.grid`.
    """

    width: int
    height: int
    walls: tuple[int, ...]
    exit_cell: int
    starts: tuple[int, ...]  # per agent, in agent order
    landmarks: Mapping[int, str]  # cell -> landmark name
    shortest_path_to_exit: Mapping[str, int]
    fastest_possible_finish: int


@dataclass(frozen=True, slots=True)
class EscapeEpisode:
    """What a Maze Escape agent may know before its first turn.

    ``config`` holds the rules of the game (size, turn limit, notebook and radio limits, which
    observation features are on); agents are told all of it. ``ground_truth`` is filled only for
    privileged policies.
    """

    env_id: str
    agent: str
    agents: tuple[str, ...]
    config: Config
    ground_truth: EscapeGroundTruth | None = None


@dataclass(frozen=True, slots=True)
class AgiMazeEpisode:
    """What an AGI Maze player may know before its first step.

    ``description`` is the rule text of the environment (what an agent reads before playing),
    ``task`` the task information (board size, start, budget, item counts; see
    :mod:`maze_envs.agimaze.observation`), ``public_map`` the map as the player may see it (the
    whole map for open-map labyrinths, the closed frame with the player otherwise).
    ``ground_truth`` (the :class:`~maze_envs.agimaze.types.Labyrinth`) only for privileged
    policies. In the labyrinth-set environment a policy is reset once per labyrinth.
    """

    env_id: str
    agent: str
    name: str
    description: str
    task: Mapping[str, Any]
    action_names: tuple[str, ...]
    public_map: str | None
    open_map: bool
    max_steps: int
    budget: int
    ground_truth: Any = None
    extra: Mapping[str, Any] = field(default_factory=dict)


# --- the protocols ----------------------------------------------------------------------------


@runtime_checkable
class Policy(Protocol[EpisodeT, ObsT, ActT_co]):
    """Chooses one agent's actions, turn by turn (synchronously)."""

    privileged: ClassVar[bool]

    def reset(self, agent: str, seed: int | None, episode: EpisodeT) -> None:
        """Start a new game as ``agent``; all randomness must come from ``seed``."""
        ...

    def act(self, observation: ObsT) -> ActT_co | Decision[ActT_co]:
        """The action for this turn."""
        ...

    def close(self) -> None:
        """Release what the policy holds (connections, files); called once at the end."""
        ...


@runtime_checkable
class AsyncPolicy(Protocol[EpisodeT, ObsT, ActT_co]):
    """A policy whose decisions are awaited (model calls); the runner awaits agents together."""

    privileged: ClassVar[bool]

    def reset(self, agent: str, seed: int | None, episode: EpisodeT) -> None: ...

    async def aact(self, observation: ObsT) -> ActT_co | Decision[ActT_co]: ...

    def close(self) -> None: ...


class PolicyBase(Generic[EpisodeT, ObsT, ActT]):
    """Base class of synchronous policies: write ``act`` (and ``reset`` when state is kept).

    ``reset`` stores ``agent``, ``seed`` and ``episode`` on the instance; ``aact`` calls ``act``;
    ``close`` does nothing.
    """

    privileged: ClassVar[bool] = False
    agent: str = ""
    seed: int | None = None
    episode: Any = None

    def reset(self, agent: str, seed: int | None, episode: EpisodeT) -> None:
        self.agent, self.seed, self.episode = agent, seed, episode

    def act(self, observation: ObsT) -> ActT | Decision[ActT]:
        raise NotImplementedError(f"{type(self).__name__} must implement act(observation)")

    async def aact(self, observation: ObsT) -> ActT | Decision[ActT]:
        return self.act(observation)

    def close(self) -> None:
        return None


class AsyncPolicyBase(PolicyBase[EpisodeT, ObsT, ActT]):
    """Base class of asynchronous policies: write ``aact``; ``act`` runs it to completion."""

    async def aact(self, observation: ObsT) -> ActT | Decision[ActT]:
        raise NotImplementedError(f"{type(self).__name__} must implement aact(observation)")

    def act(self, observation: ObsT) -> ActT | Decision[ActT]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aact(observation))
        raise RuntimeError(
            f"{type(self).__name__}.act() was called inside a running event loop; "
            "await policy.aact(observation) instead"
        )


def is_async(policy: object) -> bool:
    """True when ``policy``'s own decision method is a coroutine function (worth awaiting)."""
    aact = getattr(policy, "aact", None)
    if aact is None or not inspect.iscoroutinefunction(aact):
        return False
    # PolicyBase.aact merely wraps act: calling act directly is the same and cheaper
    return getattr(type(policy), "aact", None) is not PolicyBase.aact


class _AsyncAdapter:
    """Gives an object with only ``act`` the async interface."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.privileged = bool(getattr(policy, "privileged", False))

    def reset(self, agent: str, seed: int | None, episode: Any) -> None:
        self.policy.reset(agent, seed, episode)

    def act(self, observation: Any) -> Any:
        return self.policy.act(observation)

    async def aact(self, observation: Any) -> Any:
        return self.policy.act(observation)

    def close(self) -> None:
        close = getattr(self.policy, "close", None)
        if callable(close):
            close()


def as_async(policy: Any) -> Any:
    """``policy`` with an ``aact`` (itself when it has one already)."""
    return policy if hasattr(policy, "aact") else _AsyncAdapter(policy)


def is_privileged(policy: object) -> bool:
    """Whether ``policy`` declared itself privileged (gets the ground truth)."""
    return bool(getattr(policy, "privileged", False))
