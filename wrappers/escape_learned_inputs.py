"""The frames a learned Maze Escape policy reads, as the batched engine's observations.

:class:`EscapeLearnedInputs` turns each row's observation of ``maze_escape_v1.vector_env`` (the
flattened numeric vector) into the frame a learned policy's network reads
(:mod:`maze_envs.policies.learned.inputs`: the observation entries it reads, then its additions,
such as the row's own previous move and what its trail says about the neighbouring cells). It is
the training side of :class:`maze_envs.policies.learned.LearnedEscapePolicy`, which builds the
same frames from a scalar game with the same code; a test checks that the two agree move for
move on exported games.

With same-step automatic resets, the rows of a game that ended start the next game with no
previous move, and ``infos["final_obs"]`` holds the final frames of the ended rows.

Example:
    >>> import numpy as np
    >>> from maze_envs import maze_escape_v1
    >>> vec = EscapeLearnedInputs(maze_escape_v1.vector_env(num_games=2, width=6, height=6),
    ...                           additions=("previous_move",))
    >>> observations, _ = vec.reset(seed=0)
    >>> observations.shape, float(observations[:, -5:].sum())
    ((6, 69), 0.0)
    >>> observations, *_ = vec.step(np.array([0, 1, 2, 3, 4, 4]))
    >>> observations[1, -5:].tolist()
    [0.0, 1.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.vector.utils import batch_space

from maze_envs.escape.batch.vector import AutoresetMode, MazeEscapeVectorEnv
from maze_envs.escape.numeric import NumericLayout
from maze_envs.policies.learned.inputs import InputPlan

__all__ = ["EscapeLearnedInputs"]


class EscapeLearnedInputs(VectorWrapper):
    """The batched env's rows as learned-policy frames (see the module docstring).

    Arguments:
        env: ``maze_escape_v1.vector_env`` (same-step resets), or a wrapper of it that keeps its
            observations (such as :class:`wrappers.escape_vector_shaping.EscapeVectorShaping`).
        feature_names: the observation entries to keep, in order (None: all).
        additions: names of :data:`maze_envs.policies.learned.inputs.ADDITIONS`, in order.
    """

    def __init__(
        self,
        env: VectorEnv[Any, Any, Any],
        feature_names: Sequence[str] | None = None,
        additions: Sequence[str] = (),
    ) -> None:
        super().__init__(env)
        base = env.unwrapped
        if (
            not isinstance(base, MazeEscapeVectorEnv)
            or base.autoreset_mode is not AutoresetMode.SAME_STEP
        ):
            raise ValueError(
                "EscapeLearnedInputs needs maze_escape_v1.vector_env with "
                "autoreset_mode=SAME_STEP (the default) below it"
            )
        layout = NumericLayout(base.config)
        if env.single_observation_space.shape != (layout.width,):
            raise ValueError(
                "EscapeLearnedInputs reads the vector env's own numeric observations: apply it "
                "to maze_escape_v1.vector_env or to wrappers that keep them"
            )
        self.plan = InputPlan(layout, feature_names, additions)
        low, high = layout.bounds()
        columns = self.plan.columns
        extra = self.plan.width - len(columns)
        self.single_observation_space = spaces.Box(
            np.concatenate([low[columns], np.zeros(extra, np.float32)]),
            np.concatenate([high[columns], np.ones(extra, np.float32)]),
            dtype=np.float32,
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._previous = np.full(self.num_envs, -1, np.intp)

    def reset(self, **kwargs: Any) -> Any:
        observations, infos = self.env.reset(**kwargs)
        self._previous[:] = -1
        return self.plan.frames(observations, self._previous), infos

    def step(self, actions: Any) -> Any:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        array = np.asarray(actions)
        self._previous[:] = array[:, 0] if array.ndim == 2 else array  # (move, symbol): move
        if "final_obs" in infos:  # Gymnasium's object array: the ended rows' observations
            final = np.array(infos["final_obs"], dtype=object)
            ended = np.flatnonzero(infos["_final_obs"])
            if ended.size:
                stacked = np.stack([final[row] for row in ended])
                frames = self.plan.frames(stacked, self._previous[ended])
                for row, frame in zip(ended, frames, strict=True):
                    final[row] = frame
            infos = {**infos, "final_obs": final}
        self._previous[terminations | truncations] = -1
        return (
            self.plan.frames(observations, self._previous),
            rewards,
            terminations,
            truncations,
            infos,
        )
