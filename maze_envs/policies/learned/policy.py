"""A trained network as a Maze Escape policy in the common interface.

:class:`LearnedEscapePolicy` plays one agent from its typed observation, as every other policy
does: each turn it writes the observation as the numeric vector the network was trained on
(the flattened numeric observation of ``maze_escape_v1.vector_env``, the same numbers
``wrappers.EscapeNumericObservation(flatten=True)`` gives) and builds the frame the network was
trained on (:mod:`maze_envs.policies.learned.inputs`: the entries it reads, its own previous
move, what its trail says about the neighbouring cells), stacks the last ``frame_stack`` frames
when the network reads several, asks the network for its action probabilities and takes
the likeliest move (``deterministic=True``, the default) or draws one with the generator seeded
by ``reset``. Each decision's journal record holds the probability of the move taken.

A network reads only the observations it was trained on: the trained settings name the config
fields a game must share with training (the agent count and the observation features; not the
maze size, the turn limit or the seeds). :meth:`LearnedEscapePolicy.check_config` raises
:class:`UnsupportedSetup` for any other game, saying which settings it needs and how to give
them; the runner calls it before the first game, and ``reset`` calls it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.numeric_encoder import NumericEncoder
from maze_envs.escape.types import MOVES, Action, Config, Observation
from maze_envs.policies.interface import Decision, EscapeEpisode, PolicyBase
from maze_envs.policies.learned.inputs import InputPlan, InputsError
from maze_envs.policies.learned.network import MOVE_COUNT, Network, TrainedSettings

#: The config fields every network needs alike: its observation layout depends on them.
OBSERVATION_FIELDS: Final = (
    "num_agents",
    "distance_sensor",
    "coordinates",
    "trail_length",
    "meeting_alert",
    "used_exits",
    "radio",
    "radio_cooldown",
    "radio_symbols",
)


class UnsupportedSetup(ValueError):
    """A game whose observations a learned policy cannot read (other settings than its
    training's)."""


def _trained_config(settings: TrainedSettings) -> Config:
    try:
        return Config.model_validate(settings.config)
    except ValueError as exc:
        raise UnsupportedSetup(f"the trained settings hold no valid game config: {exc}") from None


def _assignment(name: str, value: Any) -> str:
    text = "null" if value is None else str(value).lower() if isinstance(value, bool) else value
    return f"--set {name}={text}"


@lru_cache(maxsize=32)
def _encoder(config: Config) -> NumericEncoder:
    """The flattened numeric encoder of ``config`` (one per config: encoders keep no game state)."""
    return NumericEncoder(config, flatten=True)


class LearnedEscapePolicy(PolicyBase[EscapeEpisode, Observation, Action]):
    """A trained network playing one Maze Escape agent (see the module docstring).

    Arguments:
        network: the network (:class:`~maze_envs.policies.learned.network.MlpNetwork` of a
            weight file, or an SB3 model's :class:`~maze_envs.policies.learned.sb3.Sb3Network`).
        settings: what it was trained on; ``None`` (an SB3 file without them): any game whose
            numeric observation is as wide as the network's input.
        source: where it came from (``learned:escape-ppo``, a path), for messages and the record.
        digest: the SHA-256 of its file, recorded with every game (``harness()``).
        deterministic: take the likeliest action (default) or sample one.
    """

    def __init__(
        self,
        network: Network,
        settings: TrainedSettings | None,
        *,
        source: str,
        digest: str,
        deterministic: bool = True,
    ) -> None:
        self.network, self.settings = network, settings
        self.source, self.digest, self.deterministic = source, digest, deterministic
        self.rng = np.random.default_rng(0)
        self.config: Config | None = None
        self._encoder: NumericEncoder | None = None
        self._frames: NDArray[np.float32] | None = None
        self._plan: InputPlan | None = None
        self._previous = np.array([-1], np.intp)
        self._state: Any = None
        self._first = True

    # --- what it can play ---------------------------------------------------------------------
    def check_config(self, config: Config) -> InputPlan:
        """How to build this game's frames, or :class:`UnsupportedSetup` saying which settings
        the network needs."""
        settings = self.settings
        if settings is not None:
            trained = _trained_config(settings)
            differ = [
                (name, getattr(trained, name, None), getattr(config, name, None))
                for name in settings.required
                if getattr(trained, name, None) != getattr(config, name, None)
            ]
            if differ:
                needs = ", ".join(
                    f"{name}={want!r} (this game: {have!r})" for name, want, have in differ
                )
                how = " ".join(_assignment(name, want) for name, want, _ in differ)
                preset = settings.training.get("preset")
                hint = f" (it was trained with --preset {preset})" if preset else ""
                raise UnsupportedSetup(
                    f"{self.source} was trained on other observation settings{hint}: it needs "
                    f"{needs}; give them with {how}"
                )
        layout = _encoder(config).layout
        try:
            plan = (
                InputPlan(layout, settings.feature_names, settings.additions)
                if settings is not None
                else InputPlan(layout)
            )
        except InputsError as exc:
            raise UnsupportedSetup(f"{self.source}: {exc}") from None
        width = plan.width * (settings.frame_stack if settings else 1)
        network_width = getattr(self.network, "width", width)
        if network_width != width:
            raise UnsupportedSetup(
                f"{self.source} reads observations of {network_width} numbers; this game's "
                f"numeric observation has {layout.width} ({config.num_agents} agents, its "
                "features): play it with the settings it was trained on"
            )
        symbols = settings.radio_symbols if settings else max(0, self.network.heads[-1] - 1)
        heads = (MOVE_COUNT, symbols + 1) if len(self.network.heads) > 1 else (MOVE_COUNT,)
        if self.network.heads != heads or (len(heads) > 1 and config.radio_symbols != symbols):
            raise UnsupportedSetup(
                f"{self.source} chooses actions {list(self.network.heads)} (moves, radio symbols); "
                f"this game has radio_symbols={config.radio_symbols}: give it "
                f"{_assignment('radio_symbols', symbols)}"
            )
        return plan

    def harness(self) -> dict[str, Any]:
        """What decides how it plays, recorded with every game: the weights and the choice rule."""
        info: dict[str, Any] = {
            "weights": self.source,
            "sha256": self.digest,
            "deterministic": self.deterministic,
        }
        if self.settings is not None:
            info["frame_stack"] = self.settings.frame_stack
            info["trained"] = {
                k: self.settings.training[k]
                for k in ("algorithm", "agent_steps", "seed", "preset")
                if k in self.settings.training
            }
        return info

    # --- playing ------------------------------------------------------------------------------
    def reset(self, agent: str, seed: int | None, episode: EscapeEpisode) -> None:
        super().reset(agent, seed, episode)
        self.config = episode.config
        self._plan = self.check_config(episode.config)
        self._encoder = _encoder(episode.config)
        self.rng = np.random.default_rng(seed)
        frames = self.settings.frame_stack if self.settings else 1
        self._frames = np.zeros((frames, self._plan.width), np.float32)
        self._previous = np.array([-1], np.intp)
        self._state, self._first = None, True

    def act(self, observation: Observation) -> Decision[Action]:
        if self._encoder is None or self._plan is None or self._frames is None:
            raise RuntimeError("reset(agent, seed, episode) must come before act()")
        vector = self._encoder.encode_model(observation, self.agent)
        frames = self._frames
        frames[:-1] = frames[1:]
        frames[-1] = self._plan.frames(vector[None, :], self._previous)[0]
        probabilities, self._state = self.network.probabilities(
            frames.reshape(1, -1), self._state, self._first
        )
        self._first = False
        choices = [self._choose(p[0]) for p in probabilities]
        move = choices[0]
        self._previous[0] = move
        symbol = choices[1] if len(choices) > 1 and choices[1] > 0 else None
        record: Mapping[str, Any] = {"p_move": round(float(probabilities[0][0][move]), 4)}
        return Decision(Action(move=MOVES[move], radio_symbol=symbol), record=record)

    def _choose(self, probabilities: NDArray[np.float64]) -> int:
        if self.deterministic:
            return int(np.argmax(probabilities))
        return int(self.rng.choice(probabilities.size, p=probabilities / probabilities.sum()))
