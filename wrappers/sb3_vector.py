"""Stable-Baselines3 on the batched engine: :class:`EscapeSB3VecEnv`, an SB3 ``VecEnv`` over
``maze_escape_v1.vector_env`` (needs the ``rl`` extra: ``pip install 'maze-envs[rl]'``).

Each row of the vector env (one agent of one game) is one of SB3's environments, so SB3's PPO
trains one policy shared by every agent (parameter sharing) straight on the batched engine, with
no SuperSuit and no per-game Python objects. Observations, rewards and dones are handed to SB3
as copies (SB3 keeps them across steps; the vector env writes its buffers in place). A game that
ends puts its last observation in each of its rows' ``infos[row]["terminal_observation"]`` and,
when it ran out of turns, ``"TimeLimit.truncated": True`` (what SB3's bootstrapping reads). The
vector env must reset in the same step (its default, ``autoreset_mode="SameStep"``).

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.sb3_vector import EscapeSB3VecEnv
    >>> venv = EscapeSB3VecEnv(maze_escape_v1.vector_env(num_games=64, width=7, height=7))
    >>> venv.num_envs, venv.observation_space.shape
    (192, (64,))
    >>> venv.seed(0)
    [0]
    >>> venv.reset().shape
    (192, 64)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

from maze_envs.escape.batch.vector import AutoresetMode, MazeEscapeVectorEnv

try:
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn
except ImportError as error:  # pragma: no cover - the rl extra is installed in the test setup
    raise ImportError(
        "wrappers.sb3_vector needs Stable-Baselines3: pip install 'maze-envs[rl]'"
    ) from error

__all__ = ["EscapeSB3VecEnv"]


class EscapeSB3VecEnv(VecEnv):
    """SB3's ``VecEnv`` over a :class:`~maze_envs.escape.batch.vector.MazeEscapeVectorEnv`, or
    over a Gymnasium vector wrapper of one (training shaping, the previous move...)."""

    def __init__(self, vec: VectorEnv[Any, Any, Any]) -> None:
        base = vec.unwrapped
        if not isinstance(base, MazeEscapeVectorEnv):
            raise ValueError(
                "EscapeSB3VecEnv takes maze_escape_v1.vector_env(...) (or a Gymnasium vector "
                f"wrapper of it), got {type(vec).__name__}"
            )
        if base.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ValueError(
                "EscapeSB3VecEnv needs a vector env that resets in the same step "
                "(autoreset_mode='SameStep', the default): SB3 expects the next game's first "
                "observation in the step that ends one"
            )
        self.vec = vec  # before SB3's init, which reads the vector env's render_mode
        self._actions: Any = None
        super().__init__(vec.num_envs, vec.single_observation_space, vec.single_action_space)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # SB3's seed(s) gives env i the seed s + i: the vector env takes s
        observations, _ = self.vec.reset(seed=seed)
        self._reset_seeds()
        return np.array(observations, order="C")

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """The seed of the next reset (one seed for the whole vector env)."""
        self._seeds = [seed] * self.num_envs
        return [seed]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, terminations, truncations, infos = self.vec.step(self._actions)
        dones = terminations | truncations
        rows: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if "final_obs" in infos:
            final = infos["final_obs"]
            for row in np.flatnonzero(infos["_final_obs"]).tolist():
                rows[row]["terminal_observation"] = np.array(final[row])
                rows[row]["TimeLimit.truncated"] = bool(truncations[row] and not terminations[row])
        return np.array(observations, order="C"), np.array(rewards), dones, rows

    def close(self) -> None:
        self.vec.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self.vec, attr_name)] * self._count(indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.vec, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        result = getattr(self.vec, method_name)(*method_args, **method_kwargs)
        return [result] * self._count(indices)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False] * self._count(indices)

    def _count(self, indices: VecEnvIndices) -> int:
        return len(list(self._get_indices(indices)))
