"""Stable-Baselines3 model files as networks of a learned policy (``sb3:path/to/model.zip``).

:func:`load_sb3` reads the policy of a model file written by ``model.save(path)`` of any SB3
(or sb3-contrib) algorithm, without the algorithm: the file's policy class is rebuilt from its
spaces and keyword arguments and given the saved weights, on the CPU. :class:`Sb3Network`
then answers a learned policy's questions: for actor-critic policies (PPO, A2C, and
RecurrentPPO's LSTM policies, whose state it carries from turn to turn) the action
probabilities of the policy's distribution, so the learned policy picks or samples with its own
seeded generator; for other policies (DQN's Q-networks) the greedy action, as a probability of 1.

What the network was trained on travels inside the same zip, as the member
:data:`SETTINGS_MEMBER` (:func:`save_sb3_settings` adds it; SB3's loader ignores it). A file
without it is read against the game's own settings: its observation space must be as wide as
the game's numeric observation.

Needs the ``rl`` extra (torch, Stable-Baselines3); without it, one line says so.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.policies.learned.network import Probabilities, TrainedSettings, WeightFileError

#: The zip member holding a model file's :class:`TrainedSettings` (JSON).
SETTINGS_MEMBER: Final = "maze_envs_settings.json"
#: What to install for ``sb3:`` policies.
RL_EXTRA_HINT: Final = "pip install 'maze-envs[rl]'"


class MissingExtra(ImportError):
    """An optional dependency is not installed (the message names the extra)."""


def require_sb3() -> Any:
    """The ``stable_baselines3`` module, or :class:`MissingExtra` naming the ``rl`` extra."""
    try:
        import stable_baselines3
        import torch  # noqa: F401
    except ImportError as exc:
        raise MissingExtra(
            f"sb3: policies need torch and Stable-Baselines3 (missing {exc.name!r}): "
            f"{RL_EXTRA_HINT}"
        ) from None
    return stable_baselines3


def save_sb3_settings(path: str | Path, settings: TrainedSettings) -> None:
    """Add (or replace) the trained settings inside the SB3 model file ``path``."""
    target = Path(path)
    with zipfile.ZipFile(target) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[SETTINGS_MEMBER] = json.dumps(settings.to_json(), sort_keys=True).encode()
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def read_sb3_settings(path: Path) -> TrainedSettings | None:
    """The trained settings stored in a model file, or None when it has none."""
    try:
        with zipfile.ZipFile(path) as archive:
            if SETTINGS_MEMBER not in archive.namelist():
                return None
            data = json.loads(archive.read(SETTINGS_MEMBER))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise WeightFileError(f"{path} is not a Stable-Baselines3 model file: {exc}") from None
    return TrainedSettings.from_json(data)


class Sb3Network:
    """An SB3 policy answering the questions of a learned policy (see the module docstring)."""

    def __init__(self, policy: Any, source: str) -> None:
        import torch

        self.policy, self.source, self._torch = policy, source, torch
        space = policy.action_space
        if hasattr(space, "n"):
            self.heads: tuple[int, ...] = (int(space.n),)
        elif hasattr(space, "nvec"):
            self.heads = tuple(int(n) for n in np.asarray(space.nvec).ravel())
        else:
            raise WeightFileError(f"{source}: the action space {space} is not discrete")
        shape = policy.observation_space.shape
        if shape is None or len(shape) != 1:
            raise WeightFileError(
                f"{source}: the observation space {policy.observation_space} is not a flat Box"
            )
        self.width = int(shape[0])
        self.recurrent = hasattr(policy, "lstm_actor")
        self.has_distribution = hasattr(policy, "get_distribution")

    def probabilities(
        self, observations: NDArray[np.float32], state: Any, first: bool
    ) -> tuple[Probabilities, Any]:
        torch = self._torch
        policy = self.policy
        with torch.no_grad():
            obs, _ = policy.obs_to_tensor(observations)
            if self.recurrent:
                rows = observations.shape[0]
                if state is None:
                    shape = (policy.lstm_actor.num_layers, rows, policy.lstm_actor.hidden_size)
                    state = (torch.zeros(shape), torch.zeros(shape))
                starts = torch.full((rows,), float(first))
                distribution, state = policy.get_distribution(obs, state, starts)
            elif self.has_distribution:
                distribution = policy.get_distribution(obs)
            else:  # e.g. DQN: the greedy action as a sure one
                actions = np.asarray(policy._predict(obs, deterministic=True).cpu().numpy())
                actions = actions.reshape(observations.shape[0], -1)
                return [np.eye(size)[actions[:, i]] for i, size in enumerate(self.heads)], state
        parts = getattr(distribution.distribution, "__iter__", None)
        categoricals = list(distribution.distribution) if parts else [distribution.distribution]
        return [c.probs.cpu().numpy().astype(np.float64) for c in categoricals], state


def load_sb3(path: Path) -> Sb3Network:
    """The policy of the SB3 model file ``path`` (see the module docstring)."""
    require_sb3()
    from stable_baselines3.common.save_util import load_from_zip_file

    if not path.is_file():
        raise WeightFileError(f"no Stable-Baselines3 model file at {path}")
    try:
        data, params, _ = load_from_zip_file(path, device="cpu")
    except Exception as exc:  # a damaged or foreign zip
        raise WeightFileError(f"{path} is not a Stable-Baselines3 model file: {exc}") from None
    if not data or "policy_class" not in data or "policy" not in params:
        raise WeightFileError(f"{path} holds no SB3 policy (no policy class or weights)")
    try:
        policy = data["policy_class"](
            observation_space=data["observation_space"],
            action_space=data["action_space"],
            lr_schedule=lambda _: 0.0,
            **data.get("policy_kwargs", {}),
        )
        policy.load_state_dict(params["policy"])
    except Exception as exc:
        raise WeightFileError(f"{path}: the saved policy cannot be rebuilt: {exc}") from None
    policy.set_training_mode(False)
    return Sb3Network(policy, str(path))
