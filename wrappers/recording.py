"""The game journal for any Gymnasium or PettingZoo environment.

* :class:`RecordJournal` (``gymnasium.Wrapper``) and :class:`RecordJournalParallel` (PettingZoo
  ``BaseParallelWrapper``) write every episode to a :class:`~maze_envs.journal.Journal`.
* Our environments (``AgiMaze-v0``, ``AgiMazeSet-v0``, Maze Escape v0/v1) are recorded by their
  own ``journal=`` recording, so their games stay replayable and ``maze-envs verify`` checks
  them turn by turn: an environment built with ``journal=`` is passed through; one built without
  gets its recorder attached from its own configuration (Maze Escape: its ``config`` and
  generator; AGI Maze: the ``gym.make`` arguments in ``env.spec``).
* Any other environment (FrozenLake, CartPole, a PettingZoo env) is recorded through the
  generic :class:`~maze_envs.journal.Recorder` under its own id (``env.spec.id``, or the
  PettingZoo ``metadata["name"]``): observations, actions, rewards, flags and infos made plain
  JSON (:func:`plain`: numpy arrays become lists, other values a JSON form, never an error),
  and a state digest of what is observable (the SHA-256 of the turn's stored observation,
  reward and flags). ``maze-envs verify`` checks only their stored rows (it has no replayer for
  them and says so); the journal opens them like any game (``Journal(path).turns(game)``).

Both wrappers take per-decision records (:meth:`RecordJournal.note`) and the next game's meta
(:meth:`RecordJournal.set_game_meta`), which go to whichever recorder is used.

Example:
    >>> import tempfile, pathlib
    >>> import gymnasium as gym
    >>> from maze_envs.journal import Journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = RecordJournal(gym.make("FrozenLake-v1", is_slippery=False), path)
    >>> _ = env.reset(seed=0)
    >>> for action in [2, 2, 1, 1, 1, 2]:
    ...     _, reward, terminated, truncated, _ = env.step(action)
    >>> env.close()
    >>> with Journal(path, readonly=True) as journal:
    ...     (game,) = journal.games()
    ...     turns = list(journal.turns(game.id))
    >>> game.env_id, game.outcome["return"], turns[1].actions, turns[-1].observations
    ('FrozenLake-v1', 1.0, {'agent': 2}, {'agent': 15})
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections.abc import Mapping
from typing import Any, Final

import gymnasium as gym
import numpy as np
from pettingzoo.utils.env import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers.base_parallel import BaseParallelWrapper

from maze_envs.journal import Journal, Recorder
from maze_envs.journal.format import encode_json_bytes

__all__ = ["RecordJournal", "RecordJournalParallel", "plain"]

JournalLike = str | os.PathLike[str] | Journal
#: The agent name of a single-agent Gymnasium environment in the journal.
AGENT: Final = "agent"
_INT64: Final = 2**63


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (never raises).

    Numpy arrays become (nested) lists and numpy scalars numbers; mappings become objects with
    string keys; tuples, lists and sets become lists; bytes a hex string; NaN and infinities the
    strings ``"nan"``, ``"inf"``, ``"-inf"``; integers beyond 64 bits their decimal string;
    pydantic models their JSON form, dataclasses their fields; anything else its ``repr``.

    Example:
        >>> plain({"pos": np.array([1, 2]), 3: (np.float32(0.5), float("nan")), "b": b"\\x01"})
        {'pos': [1, 2], '3': [0.5, 'nan'], 'b': '01'}
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()] if value.ndim else plain(value.item())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return plain(dump(mode="json"))
        except Exception:  # a foreign model_dump: fall back to repr
            return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    return repr(value)


def _digest(observations: Any, rest: Any) -> bytes:
    return hashlib.sha256(encode_json_bytes({"observations": observations, "step": rest})).digest()


def _native_recorder(base: Any, journal: JournalLike | None, spec: Any) -> Recorder | None:
    """The recorder of one of our environments (attached when it has none); None: foreign."""
    from maze_envs.agimaze.env import AgiMazeEnv
    from maze_envs.agimaze.set_env import AgiMazeSetEnv
    from maze_envs.escape.env import MazeEscapeEnv

    if not isinstance(base, AgiMazeEnv | AgiMazeSetEnv | MazeEscapeEnv):
        return None
    own: Recorder | None = base.recorder
    if own is not None:
        if journal is not None:
            raise ValueError(
                f"this {type(base).__name__} already records to its own journal (built with "
                "journal=); wrap it without a journal, or build it without journal="
            )
        return own
    if journal is None:
        raise ValueError(
            "give journal= (a path or a Journal) to record this environment, or build it with "
            "its own journal= argument"
        )
    recorder = _attach(base, journal, spec)
    base.recorder = recorder
    return recorder


def _attach(base: Any, journal: JournalLike, spec: Any) -> Recorder:
    from maze_envs.agimaze import recording
    from maze_envs.agimaze.backends import LocalBackend
    from maze_envs.agimaze.env import AgiMazeEnv
    from maze_envs.agimaze.set_env import DEFAULT_TARGET
    from maze_envs.escape.env import MazeEscapeEnv
    from maze_envs.escape.generator import describe_generator

    if isinstance(base, MazeEscapeEnv):
        generator = describe_generator(base.generator, base.config)  # ValueError: not replayable
        config = base.config.model_dump(mode="json")
        return Recorder(journal, env_id=base.env_id, config=config, generator=generator)
    kwargs = dict(getattr(spec, "kwargs", None) or {}) if spec is not None else None
    if kwargs is None:
        raise ValueError(
            f"a {type(base).__name__} built directly records only through its own journal= "
            "argument (its construction arguments are not known); build it with journal=, or "
            "with gym.make(...)"
        )
    if not isinstance(kwargs.get("backend") or LocalBackend(), LocalBackend):
        raise ValueError("journal recording needs the local backend (games on a server cannot be "
                         "replayed offline)")  # fmt: skip
    if isinstance(base, AgiMazeEnv):
        config = recording.env_config(
            path=kwargs.get("path"),
            labyrinth=kwargs.get("labyrinth"),
            budget_factor=base.budget_factor,
            max_steps=kwargs.get("max_steps"),
            pack_root=kwargs.get("pack_root"),
        )
        return Recorder(journal, env_id=recording.ENV_ID, config=config)
    config = recording.set_config(
        paths=kwargs.get("paths"),
        target=kwargs.get("target", DEFAULT_TARGET),
        labyrinths=kwargs.get("labyrinths"),
        budget_factor=base.budget_factor,
        pack_root=kwargs.get("pack_root"),
    )
    return Recorder(journal, env_id=recording.SET_ENV_ID, config=config)


class _Recording:
    """What both wrappers share: the recorder, native or generic, and the running totals."""

    recorder: Recorder
    native: bool

    def _setup(self, base: Any, journal: JournalLike | None, spec: Any, config: Any) -> None:
        native = _native_recorder(base, journal, spec)
        self.native = native is not None
        if native is not None:
            self.recorder = native
            return
        if journal is None:
            raise ValueError("give journal= (a path or a Journal) to record this environment")
        self.recorder = Recorder(journal, env_id=self.env_id, config=plain(config))
        self._returns: dict[str, float] = {}
        self._steps = 0

    env_id: str

    def set_game_meta(self, meta: Mapping[str, Any] | None) -> None:
        """Attach ``meta`` (run key, policy specs...) to the next game recorded."""
        self.recorder.set_game_meta(meta)

    def note(self, agent: str, record: Any) -> None:
        """A per-decision record of ``agent``, stored with the next recorded turn."""
        self.recorder.note(agent, plain(record))

    def _start(self, seed: int | None, observations: dict[str, Any], infos: Any) -> None:
        if self.recorder.game_id is not None:
            self.recorder.abort(self._outcome({}))
        self._returns = dict.fromkeys(observations, 0.0)
        self._steps = 0
        events = {agent: {"info": plain(infos.get(agent, {}))} for agent in observations}
        plain_obs = {agent: plain(o) for agent, o in observations.items()}
        self.recorder.start(seed, plain_obs, _digest(plain_obs, None), events)

    def _turn(
        self,
        observations: dict[str, Any],
        actions: dict[str, Any],
        rewards: dict[str, Any],
        terminations: dict[str, Any],
        truncations: dict[str, Any],
        infos: dict[str, Any],
        over: bool,
    ) -> None:
        self._steps += 1
        events = {}
        for agent in set(rewards) | set(terminations) | set(truncations):
            reward = plain(rewards.get(agent, 0.0))
            if isinstance(reward, int | float):
                self._returns[agent] = self._returns.get(agent, 0.0) + float(reward)
            events[agent] = {
                "reward": reward,
                "terminated": bool(terminations.get(agent, False)),
                "truncated": bool(truncations.get(agent, False)),
                "info": plain(infos.get(agent, {})),
            }
        plain_obs = {agent: plain(o) for agent, o in observations.items()}
        digest = _digest(plain_obs, {a: [e["reward"], e["terminated"], e["truncated"]]
                                     for a, e in sorted(events.items())})  # fmt: skip
        self.recorder.turn(
            self._steps, plain_obs, {a: plain(x) for a, x in actions.items()}, events, digest
        )
        if over:
            ended = {
                "terminated": any(terminations.values()),
                "truncated": any(truncations.values()),
            }
            self.recorder.finish(self._outcome(ended))

    def _outcome(self, extra: dict[str, Any]) -> dict[str, Any]:
        return {"returns": dict(self._returns), "steps": self._steps, **extra}


def _gym_env_id(env: gym.Env[Any, Any]) -> str:
    spec = env.spec
    if spec is not None and spec.id:
        return str(spec.id)
    base = env.unwrapped
    return f"{type(base).__module__}.{type(base).__qualname__}"


class RecordJournal(gym.Wrapper[Any, Any, Any, Any], _Recording):
    """Records every episode of a Gymnasium environment to a journal (see the module docstring).

    ``journal`` is a path or an open :class:`~maze_envs.journal.Journal`. For a foreign
    environment the agent is named ``"agent"``, the env id is ``env.spec.id`` (or the class
    path), and the game's config is ``config`` or the ``gym.make`` arguments; the outcome holds
    ``return``, ``steps``, ``terminated`` and ``truncated``. Observations, rewards and infos
    pass through unchanged.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        journal: JournalLike | None = None,
        *,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        gym.Wrapper.__init__(self, env)
        self.env_id = _gym_env_id(env)
        spec = env.spec
        default = {
            "env_id": self.env_id,
            "kwargs": dict(spec.kwargs) if spec is not None else {},
            "observation_space": repr(env.observation_space),
            "action_space": repr(env.action_space),
        }
        self._setup(env.unwrapped, journal, spec, config if config is not None else default)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        if not self.native:
            self._start(seed, {AGENT: obs}, {AGENT: info})
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if not self.native:
            self.recorder.check()
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not self.native and self.recorder.game_id is not None:
            over = bool(terminated or truncated)
            self._turn({AGENT: obs}, {AGENT: action}, {AGENT: reward}, {AGENT: terminated},
                       {AGENT: truncated}, {AGENT: info}, over)  # fmt: skip
        return obs, reward, terminated, truncated, info

    def _outcome(self, extra: dict[str, Any]) -> dict[str, Any]:
        return {"return": self._returns.get(AGENT, 0.0), "steps": self._steps, **extra}

    def close(self) -> None:
        try:
            if not self.native:
                self.recorder.close()  # aborts an unfinished game with its totals
        finally:
            super().close()


class RecordJournalParallel(BaseParallelWrapper[Any, Any, Any], _Recording):
    """Records every game of a PettingZoo ``ParallelEnv`` to a journal (see the module docstring).

    For a foreign environment the env id is ``metadata["name"]`` (or the class path) and the
    outcome holds each agent's ``returns``, the ``steps`` and whether any agent terminated or
    was truncated; a game ends when no agent is left.
    """

    def __init__(
        self,
        env: ParallelEnv[Any, Any, Any],
        journal: JournalLike | None = None,
        *,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(env, AECEnv):
            raise ValueError(
                f"RecordJournalParallel records a PettingZoo ParallelEnv, got "
                f"{type(env).__name__}; for an AEC env record its parallel form "
                "(maze_escape_v1.parallel_env(...), or pettingzoo.utils.aec_to_parallel(env))"
            )
        BaseParallelWrapper.__init__(self, env)
        base = env.unwrapped
        name = getattr(base, "metadata", {}).get("name")
        self.env_id = str(name) if name else f"{type(base).__module__}.{type(base).__qualname__}"
        default = {
            "env_id": self.env_id,
            "agents": list(env.possible_agents),
            "observation_spaces": {a: repr(env.observation_space(a)) for a in env.possible_agents},
            "action_spaces": {a: repr(env.action_space(a)) for a in env.possible_agents},
        }
        self._setup(base, journal, None, config if config is not None else default)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        if not self.native:
            self._start(seed, dict(observations), dict(infos))
        return observations, infos

    def step(
        self, actions: dict[Any, Any]
    ) -> tuple[
        dict[Any, Any],
        dict[Any, float],
        dict[Any, bool],
        dict[Any, bool],
        dict[Any, dict[str, Any]],
    ]:
        if not self.native:
            self.recorder.check()
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        if not self.native and self.recorder.game_id is not None:
            over = not self.env.agents
            self._turn(dict(observations), dict(actions), dict(rewards), dict(terminations),
                       dict(truncations), dict(infos), over)  # fmt: skip
        return observations, rewards, terminations, truncations, infos

    def close(self) -> None:
        try:
            if not self.native:
                self.recorder.close()
        finally:
            self.env.close()
