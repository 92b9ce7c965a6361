"""A trained network as a Maze Escape policy in the common interface.

:class:`LearnedEscapePolicy` plays one agent from its typed observation, as every other policy
does: each turn it writes the observation as the numeric vector the network was trained on
(the flattened numeric observation of ``maze_escape_v1.vector_env``, the same numbers
``wrappers.EscapeNumericObservation(flatten=True)`` gives), stacks the last ``frame_stack`` of
them when the network reads several, asks the network for its action probabilities and takes
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


def _json_value(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


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
        self._state: Any = None
        self._first = True
        self._observed = 0
        self._previous = np.zeros(0, np.float32)

    # --- what it can play ---------------------------------------------------------------------
    def check_config(self, config: Config) -> NumericEncoder:
        """The encoder of ``config``'s observations, or :class:`UnsupportedSetup` saying which
        settings the network needs."""
        settings = self.settings
        if settings is not None:
            differ = [
                (name, settings.config.get(name), _json_value(getattr(config, name, None)))
                for name in settings.required
                if settings.config.get(name) != _json_value(getattr(config, name, None))
            ]
            if differ:
                needs = ", ".join(f"{name}={want!r} (this game: {have!r})" for name, want, have in differ)
                how = " ".join(_assignment(name, want) for name, want, _ in differ)
                preset = settings.training.get("preset")
                hint = f" (it was trained with --preset {preset})" if preset else ""
                raise UnsupportedSetup(
                    f"{self.source} was trained on other observation settings{hint}: it needs "
                    f"{needs}; give them with {how}"
                )
        encoder = _encoder(config)
        names = encoder.layout.names
        if settings is not None and tuple(names) != settings.feature_names:
            raise UnsupportedSetup(
                f"{self.source}: this game's numeric observation has another layout than the "
                f"one it was trained on ({len(names)} entries against "
                f"{len(settings.feature_names)})"
            )
        width = settings.width if settings else encoder.layout.width
        network_width = getattr(self.network, "width", width)
        if network_width != width:
            raise UnsupportedSetup(
                f"{self.source} reads observations of {network_width} numbers; this game's "
                f"numeric observation has {encoder.layout.width} ({config.num_agents} agents, "
                "its features): play it with the settings it was trained on"
            )
        symbols = settings.radio_symbols if settings else max(0, self.network.heads[-1] - 1)
        heads = (5, symbols + 1) if len(self.network.heads) > 1 else (5,)
        if self.network.heads != heads or (len(heads) > 1 and config.radio_symbols != symbols):
            raise UnsupportedSetup(
                f"{self.source} chooses actions {list(self.network.heads)} (moves, radio symbols); "
                f"this game has radio_symbols={config.radio_symbols}: give it "
                f"{_assignment('radio_symbols', symbols)}"
            )
        return encoder

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
        self._encoder = self.check_config(episode.config)
        self.rng = np.random.default_rng(seed)
        settings = self.settings
        frames = settings.frame_stack if settings else 1
        self._observed = self._encoder.layout.width
        width = settings.frame_width if settings else self._observed
        self._frames = np.zeros((frames, width), np.float32)
        self._previous = np.zeros(width - self._observed, np.float32)
        self._state, self._first = None, True

    def act(self, observation: Observation) -> Decision[Action]:
        if self._encoder is None or self._frames is None or self.config is None:
            raise RuntimeError("reset(agent, seed, episode) must come before act()")
        vector = self._encoder.encode_model(observation, self.agent)
        frames = self._frames
        frames[:-1] = frames[1:]
        frames[-1, : self._observed] = vector
        frames[-1, self._observed :] = self._previous  # empty unless the network reads it
        probabilities, self._state = self.network.probabilities(
            frames.reshape(1, -1), self._state, self._first
        )
        self._first = False
        choices = [self._choose(p[0]) for p in probabilities]
        move = choices[0]
        if self._previous.size:  # remembered for the next frame
            self._previous[:] = 0.0
            self._previous[move] = 1.0
        radio = str(choices[1]) if len(choices) > 1 and choices[1] > 0 else None
        record: Mapping[str, Any] = {"p_move": round(float(probabilities[0][0][move]), 4)}
        return Decision(Action(move=MOVES[move], radio=radio), record=record)

    def _choose(self, probabilities: NDArray[np.float64]) -> int:
        if self.deterministic:
            return int(np.argmax(probabilities))
        return int(self.rng.choice(probabilities.size, p=probabilities / probabilities.sum()))
