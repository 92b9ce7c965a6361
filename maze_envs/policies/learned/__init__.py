"""Trained policies in the common interface: shipped weights and any Stable-Baselines3 file.

Two policy-spec prefixes (entry points of the group ``maze_envs.policies``, like the language
models' prefixes) play a trained network as a Maze Escape policy
(:class:`~maze_envs.policies.learned.policy.LearnedEscapePolicy`):

* ``learned:<name>`` -- weights shipped with the package (:data:`SHIPPED`: ``escape-ppo``, the
  shared-parameter PPO team of ``examples/train_escape_ppo.py``), or ``learned:<path>.npz`` a
  weight file of your own (:mod:`~maze_envs.policies.learned.network`). Plays in numpy: no torch.
* ``sb3:<path>.zip`` -- a model file saved by Stable-Baselines3 (PPO, A2C, RecurrentPPO, DQN...;
  :mod:`~maze_envs.policies.learned.sb3`). Needs the ``rl`` extra.

Option: ``deterministic`` (default true: the likeliest action; false: sampled with the seeded
generator), e.g. ``--policy learned:escape-ppo:deterministic=false``.

Example:
    >>> from maze_envs.policies.registry import make_policy
    >>> policy = make_policy("learned:escape-ppo")
    >>> policy.settings.training["preset"], policy.settings.config["num_agents"]
    ('full', 3)
    >>> sorted(SHIPPED)
    ['escape-ppo']
"""

from __future__ import annotations

import difflib
import hashlib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

from maze_envs.policies.learned.network import (
    MlpNetwork,
    TrainedSettings,
    WeightFile,
    WeightFileError,
    network_from_sb3,
    read_weights,
    save_weights,
)
from maze_envs.policies.learned.policy import LearnedEscapePolicy, UnsupportedSetup
from maze_envs.policies.learned.sb3 import MissingExtra, load_sb3, read_sb3_settings
from maze_envs.policies.providers import TRAINED_PREFIXES

__all__ = [
    "PREFIXES",
    "SHIPPED",
    "LearnedEscapePolicy",
    "LearnedPolicyError",
    "MissingExtra",
    "MlpNetwork",
    "TrainedSettings",
    "UnsupportedSetup",
    "WeightFileError",
    "make_learned_policy",
    "network_from_sb3",
    "read_weights",
    "save_weights",
    "shipped_weights",
]

#: The shipped weight files (package data in ``maze_envs/policies/learned/data/``), by name.
SHIPPED: Final[dict[str, str]] = {
    "escape-ppo": "escape-ppo.npz",
}
#: The spec prefixes of trained policies (:data:`maze_envs.policies.providers.TRAINED_PREFIXES`).
PREFIXES: Final = tuple(p.prefix for p in TRAINED_PREFIXES)


class LearnedPolicyError(ValueError):
    """A ``learned:``/``sb3:`` spec that names no usable network."""


def shipped_weights(name: str) -> bytes:
    """The bytes of the shipped weight file ``name`` (a key of :data:`SHIPPED`)."""
    return resources.files(__package__).joinpath("data", SHIPPED[name]).read_bytes()


@lru_cache(maxsize=16)
def _weights(key: str, data: bytes) -> WeightFile:
    return read_weights(data, key)


@lru_cache(maxsize=8)
def _sb3(path: str, stamp: tuple[int, int]) -> Any:
    return load_sb3(Path(path))


def _file_key(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def _learned(rest: str, spec: str) -> tuple[WeightFile, str, str]:
    if rest in SHIPPED:
        data = shipped_weights(rest)
        return _weights(spec, data), spec, hashlib.sha256(data).hexdigest()
    path = Path(rest).expanduser()
    if path.suffix == ".npz":
        if not path.is_file():
            raise LearnedPolicyError(f"{spec!r}: no weight file at {path}")
        data = path.read_bytes()
        return _weights(str(path.resolve()), data), str(path), hashlib.sha256(data).hexdigest()
    close = difflib.get_close_matches(rest, SHIPPED, n=1)
    maybe = f"; did you mean {close[0]!r}?" if close else ""
    raise LearnedPolicyError(
        f"{spec!r} names no shipped policy{maybe} Shipped: {sorted(SHIPPED)}; or give a weight "
        "file, learned:path/to/weights.npz (an SB3 model file: sb3:path/to/model.zip)"
    )


def make_learned_policy(
    spec: str, env_kind: str = "escape", *, deterministic: bool = True
) -> LearnedEscapePolicy:
    """The policy of a ``learned:`` or ``sb3:`` spec (the entry point of both prefixes)."""
    prefix, _, rest = spec.partition(":")
    if prefix not in PREFIXES:
        raise LearnedPolicyError(f"{spec!r}: trained-policy specs start with {PREFIXES}")
    if env_kind != "escape":
        raise LearnedPolicyError(
            f"{spec!r}: trained policies play Maze Escape only, not {env_kind!r}"
        )
    if not rest:
        example = "learned:escape-ppo" if prefix == "learned" else "sb3:path/to/model.zip"
        raise LearnedPolicyError(f"{spec!r} names nothing after the prefix, e.g. {example}")
    try:
        if prefix == "learned":
            weights, source, digest = _learned(rest, spec)
            return LearnedEscapePolicy(
                weights.network,
                weights.settings,
                source=source,
                digest=digest,
                deterministic=deterministic,
            )
        path = Path(rest).expanduser()
        if not path.is_file():
            raise LearnedPolicyError(f"{spec!r}: no Stable-Baselines3 model file at {path}")
        network = _sb3(str(path.resolve()), _file_key(path))
        return LearnedEscapePolicy(
            network,
            read_sb3_settings(path),
            source=str(path),
            digest=hashlib.sha256(path.read_bytes()).hexdigest(),
            deterministic=deterministic,
        )
    except WeightFileError as exc:
        raise LearnedPolicyError(str(exc)) from None
