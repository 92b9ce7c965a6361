"""Trained networks as numpy: the weight file format of the shipped policies, and its forward pass.

A *weight file* is a numpy ``.npz`` archive (no pickles: ``numpy.load(allow_pickle=False)``
reads it) holding

* ``meta``: a 0-d string array, the JSON of the file's :class:`TrainedSettings` (what the
  network was trained on, so that a policy can refuse a game it cannot read) and ``format``
  (:data:`WEIGHT_FORMAT`);
* ``layer<i>.weight`` ``(out, in)`` and ``layer<i>.bias`` ``(out,)``, ``i = 0, 1, ...``: the
  policy branch of an actor-critic MLP, applied in order with ``activation`` between layers
  (not after the last one, whose outputs are the action logits, one block per action head).

That is exactly the policy half of Stable-Baselines3's ``ActorCriticPolicy`` with a flatten
feature extractor (``MlpPolicy``): :func:`network_from_sb3` copies it out, and
:class:`MlpNetwork` computes the same logits in numpy (tests compare the two), so playing a
shipped policy needs neither torch nor SB3. The value branch is not stored: playing does not
need it.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> layers = [(rng.normal(size=(4, 3)), np.zeros(4)), (rng.normal(size=(5, 4)), np.zeros(5))]
    >>> network = MlpNetwork(layers, "tanh", heads=(5,))
    >>> probabilities, _ = network.probabilities(np.ones((1, 3), np.float32), None, True)
    >>> probabilities[0].shape, round(float(probabilities[0].sum()), 6)
    ((1, 5), 1.0)
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.vocab import MOVES
from maze_envs.policies.learned.inputs import ADDITIONS

#: Moves of Maze Escape (N, E, S, W, STAY): the first action head, and the previous-move one-hot.
MOVE_COUNT: Final = len(MOVES)
#: The format tag of a weight file (a reader refuses other tags).
WEIGHT_FORMAT: Final = "maze-envs-learned-policy/1"

#: Activations a weight file may name, as numpy functions.
ACTIVATIONS: Final[dict[str, Callable[[NDArray[np.float64]], NDArray[np.float64]]]] = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}


class WeightFileError(ValueError):
    """A weight file that cannot be read as one (not an archive, another format, bad shapes)."""


@dataclass(frozen=True)
class TrainedSettings:
    """What a network was trained on: the observation it reads and the actions it writes.

    Attributes:
        config: the Maze Escape :class:`~maze_envs.escape.config.Config` of the training games
            (as JSON data), for the record and for the required fields below.
        required: the config fields a game must share with ``config`` for the network to read
            its observations as in training (the agent count and the observation features; the
            maze size, turn limit and seeds may differ).
        feature_names: the entries of the flattened numeric observation (of
            ``maze_escape_v1.vector_env``) the network reads, by name, in order.
        additions: what each frame adds after them, in order (names of
            :data:`maze_envs.policies.learned.inputs.ADDITIONS`: ``previous_move``,
            ``trail_neighbours``); :mod:`maze_envs.policies.learned.inputs` defines the frame.
        frame_stack: how many consecutive frames the network reads at once (oldest first;
            before the game's first turn the missing ones are zeros).
        radio_symbols: the radio symbols of the network's second action head (0: moves only).
        training: free notes of how it was trained (algorithm, seeds, agent-steps, command).
    """

    config: Mapping[str, Any]
    required: tuple[str, ...]
    feature_names: tuple[str, ...]
    additions: tuple[str, ...] = ()
    frame_stack: int = 1
    radio_symbols: int = 0
    training: Mapping[str, Any] = field(default_factory=dict)

    @property
    def heads(self) -> tuple[int, ...]:
        """The sizes of the action heads: moves (5), then the radio symbol (0 = silent) if any."""
        moves = MOVE_COUNT
        return (moves, self.radio_symbols + 1) if self.radio_symbols else (moves,)

    @property
    def frame_width(self) -> int:
        """The numbers of one frame: the observation entries read, then the additions."""
        return len(self.feature_names) + sum(len(ADDITIONS[a]) for a in self.additions)

    @property
    def width(self) -> int:
        """The network's input width: one frame per stacked frame."""
        return self.frame_width * self.frame_stack

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["config"], data["training"] = dict(self.config), dict(self.training)
        data["required"], data["feature_names"] = list(self.required), list(self.feature_names)
        data["additions"] = list(self.additions)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrainedSettings:
        try:
            settings = cls(
                config=dict(data["config"]),
                required=tuple(data["required"]),
                feature_names=tuple(data["feature_names"]),
                additions=tuple(data.get("additions", ())),
                frame_stack=int(data.get("frame_stack", 1)),
                radio_symbols=int(data.get("radio_symbols", 0)),
                training=dict(data.get("training", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise WeightFileError(
                f"the trained settings are incomplete or malformed: {exc}"
            ) from None
        unknown = [a for a in settings.additions if a not in ADDITIONS]
        if unknown:
            raise WeightFileError(
                f"unknown inputs {unknown}; this version reads {sorted(ADDITIONS)}"
            )
        return settings


Probabilities = list[NDArray[np.float64]]


class Network(Protocol):
    """What a learned policy needs of a network: action probabilities per head, and a state
    carried from turn to turn (``None`` for a feed-forward network)."""

    heads: tuple[int, ...]

    def probabilities(
        self, observations: NDArray[np.float32], state: Any, first: bool
    ) -> tuple[Probabilities, Any]:
        """Per action head, ``(rows, head size)`` probabilities of ``observations`` ``(rows,
        width)``; ``state`` is what the previous call returned (``first``: a game's first turn)."""
        ...


def _softmax(logits: NDArray[np.float64]) -> NDArray[np.float64]:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    result: NDArray[np.float64] = shifted / shifted.sum(axis=1, keepdims=True)
    return result


class MlpNetwork:
    """A multi-layer perceptron in numpy (float64 arithmetic): the policy branch of an SB3
    ``MlpPolicy``, its last layer's outputs split into the logits of each action head."""

    def __init__(
        self,
        layers: Sequence[tuple[NDArray[Any], NDArray[Any]]],
        activation: str,
        heads: Sequence[int],
    ) -> None:
        if activation not in ACTIVATIONS:
            raise WeightFileError(
                f"unknown activation {activation!r}; a weight file may use {sorted(ACTIVATIONS)}"
            )
        if not layers:
            raise WeightFileError("a network needs at least one layer")
        self.layers = [
            (np.asarray(w, np.float64), np.asarray(b, np.float64).reshape(-1)) for w, b in layers
        ]
        for i, (weight, bias) in enumerate(self.layers):
            if weight.ndim != 2 or weight.shape[0] != bias.shape[0]:
                raise WeightFileError(
                    f"layer {i}: weight {weight.shape} and bias {bias.shape} do not fit"
                )
            if i and weight.shape[1] != self.layers[i - 1][0].shape[0]:
                raise WeightFileError(
                    f"layer {i} takes {weight.shape[1]} inputs, layer {i - 1} gives "
                    f"{self.layers[i - 1][0].shape[0]}"
                )
        self.activation = activation
        self.heads = tuple(int(h) for h in heads)
        if sum(self.heads) != self.layers[-1][0].shape[0]:
            raise WeightFileError(
                f"the last layer gives {self.layers[-1][0].shape[0]} logits, the action heads "
                f"{list(self.heads)} need {sum(self.heads)}"
            )

    @property
    def width(self) -> int:
        """The input width."""
        return int(self.layers[0][0].shape[1])

    def logits(self, observations: NDArray[Any]) -> NDArray[np.float64]:
        """The last layer's outputs of ``observations`` ``(rows, width)``."""
        act = ACTIVATIONS[self.activation]
        x = np.asarray(observations, np.float64)
        for weight, bias in self.layers[:-1]:
            x = act(x @ weight.T + bias)
        weight, bias = self.layers[-1]
        result: NDArray[np.float64] = x @ weight.T + bias
        return result

    def probabilities(
        self, observations: NDArray[np.float32], state: Any, first: bool
    ) -> tuple[Probabilities, Any]:
        logits = self.logits(observations)
        bounds = np.cumsum(self.heads)[:-1]
        return [_softmax(part) for part in np.split(logits, bounds, axis=1)], None


@dataclass(frozen=True)
class WeightFile:
    """A weight file's contents: the network and what it was trained on."""

    network: MlpNetwork
    settings: TrainedSettings


def save_weights(path: str | Path, network: MlpNetwork, settings: TrainedSettings) -> Path:
    """Write ``network`` and ``settings`` as a weight file (float32 weights) and return its path."""
    if network.heads != settings.heads:
        raise ValueError(
            f"the network's action heads {list(network.heads)} differ from the settings' "
            f"{list(settings.heads)}"
        )
    if network.width != settings.width:
        raise ValueError(
            f"the network reads {network.width} inputs, the settings give {settings.width} "
            f"({settings.frame_width} per frame x {settings.frame_stack} frames)"
        )
    meta = {"format": WEIGHT_FORMAT, "activation": network.activation, **settings.to_json()}
    arrays: dict[str, NDArray[Any]] = {"meta": np.array(json.dumps(meta, sort_keys=True))}
    for i, (weight, bias) in enumerate(network.layers):
        arrays[f"layer{i}.weight"] = weight.astype(np.float32)
        arrays[f"layer{i}.bias"] = bias.astype(np.float32)
    target = Path(path)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    target.write_bytes(buffer.getvalue())
    return target


def read_weights(data: bytes, source: str) -> WeightFile:
    """The weight file in ``data`` (``source`` names it in errors)."""
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        arrays = {name: archive[name] for name in archive.files}
    except Exception as exc:  # a zip/npy error of any kind: not a weight file
        raise WeightFileError(f"{source} is not a weight file (.npz): {exc}") from None
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except (KeyError, ValueError) as exc:
        raise WeightFileError(f"{source} has no readable 'meta' entry: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != WEIGHT_FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise WeightFileError(
            f"{source} has format {found!r}; this version reads {WEIGHT_FORMAT!r}"
        )
    settings = TrainedSettings.from_json(meta)
    layers: list[tuple[NDArray[Any], NDArray[Any]]] = []
    while f"layer{len(layers)}.weight" in arrays:
        i = len(layers)
        if f"layer{i}.bias" not in arrays:
            raise WeightFileError(f"{source}: layer {i} has a weight but no bias")
        layers.append((arrays.pop(f"layer{i}.weight"), arrays.pop(f"layer{i}.bias")))
    if arrays:
        raise WeightFileError(f"{source}: unexpected entries {sorted(arrays)}")
    network = MlpNetwork(layers, str(meta.get("activation")), settings.heads)
    if network.width != settings.width:
        raise WeightFileError(
            f"{source}: the network reads {network.width} inputs but was trained on "
            f"{settings.width} ({settings.frame_width} per frame x {settings.frame_stack} frames)"
        )
    return WeightFile(network, settings)


def network_from_sb3(policy: Any) -> MlpNetwork:
    """The policy branch of a Stable-Baselines3 ``ActorCriticPolicy`` (``MlpPolicy``: flatten
    features, ``net_arch`` of linear layers with one activation) as an :class:`MlpNetwork`.

    Raises ``ValueError`` naming what does not fit (another feature extractor, a recurrent or
    custom network, mixed activations).
    """
    import torch  # the rl extra: the caller (training) has it

    extractor = type(getattr(policy, "pi_features_extractor", None)).__name__
    if extractor != "FlattenExtractor":
        raise ValueError(f"only a flatten feature extractor is supported, got {extractor}")
    if getattr(policy, "normalize_images", False) and len(policy.observation_space.shape) == 3:
        raise ValueError("image observations are not supported")
    modules = [*policy.mlp_extractor.policy_net, policy.action_net]
    layers: list[tuple[NDArray[Any], NDArray[Any]]] = []
    activations: set[str] = set()
    names = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}
    for module in modules:
        if isinstance(module, torch.nn.Linear):
            weight = module.weight.detach().cpu().numpy()
            bias = (
                module.bias.detach().cpu().numpy()
                if module.bias is not None
                else np.zeros(weight.shape[0], np.float32)
            )
            layers.append((weight, bias))
        elif type(module) in names:
            activations.add(names[type(module)])
        else:
            raise ValueError(f"unsupported layer {type(module).__name__} in the policy network")
    if len(activations) > 1:
        raise ValueError(f"mixed activations {sorted(activations)} are not supported")
    space = policy.action_space
    heads = [int(space.n)] if hasattr(space, "n") else [int(n) for n in space.nvec]
    return MlpNetwork(layers, activations.pop() if activations else "tanh", heads)
