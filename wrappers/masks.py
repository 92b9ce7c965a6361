"""Action masks for Maze Escape: the moves known to be open from the agent's cell.

:class:`EscapeActionMasks` adds to every observation an ``action_mask``: ``MultiBinary(5)``
over the moves N, E, S, W, STAY (:class:`maze_envs.escape.vocab.Move` order, the codes of
:class:`~wrappers.move_only.MoveOnlyActions`), 1 where the edge of the current cell is ``open``
(the exit's doorway reads open: a move through it is allowed and keeps the agent on the exit),
0 for an interior wall or the outer brick; STAY is always 1. The mask comes from the env's
own ``edges`` field, so it is right under any observation encoding.

Where it goes:

* a ``Dict`` observation (the env's, or :class:`~wrappers.escape_numeric.EscapeNumericObservation`
  without ``flatten``) gets one more key, ``action_mask``;
* any other observation (a flattened ``Box``) becomes ``{"observation": obs, "action_mask":
  mask}``, PettingZoo's convention for masked actions.

``action_mask(agent)`` returns a fresh copy of the agent's current mask as a bool array (what
sb3-contrib's ``MaskablePPO`` reads through
:meth:`~wrappers.single_agent.SingleAgentEscape.action_masks`). The action space is unchanged:
a mask of length 5 fits both ``MoveOnlyActions`` and the ``move`` of the ``Dict`` action.
Apply this wrapper last (outside the numeric encoding).

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.masks import EscapeActionMasks
    >>> from wrappers.move_only import MoveOnlyActions
    >>> env = EscapeActionMasks(MoveOnlyActions(maze_escape_v1.parallel_env(width=7, height=7)))
    >>> observations, infos = env.reset(seed=4)
    >>> observations["A"]["edges"].tolist(), observations["A"]["action_mask"].tolist()
    ([0, 0, 0, 1], [1, 1, 1, 0, 1])
    >>> env.action_mask("A").tolist()
    [True, True, True, False, True]
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo.utils.env import ParallelEnv

from maze_envs.escape.vocab import DIRECTIONS, MOVES, EdgeKind
from wrappers.escape_base import EscapeWrapper

__all__ = ["EscapeActionMasks", "open_moves"]

#: Edge codes (N, E, S, W; 0 open) as an int -> the mask, for every one of the 3**4 edge sets.
_MASKS: Final = {
    code: np.array(
        [(code // 3**k) % 3 == EdgeKind.OPEN for k in range(len(DIRECTIONS))] + [True],
        dtype=np.int8,
    )
    for code in range(3 ** len(DIRECTIONS))
}


def open_moves(edges: Any) -> NDArray[np.int8]:
    """The 5-move mask (N, E, S, W, STAY) of a cell's ``edges`` codes (a new array).

    Example:
        >>> open_moves([0, 1, 2, 0]).tolist()
        [1, 0, 0, 1, 1]
    """
    n, e, s, w = (int(v) for v in edges)
    if not all(0 <= v < 3 for v in (n, e, s, w)):
        raise ValueError(
            f"edges are 4 codes in 0..2 (open, interior_wall, outer_brick), got {edges}"
        )
    return _MASKS[n + 3 * e + 9 * s + 27 * w].copy()


class EscapeActionMasks(EscapeWrapper):
    """Adds ``action_mask`` (moves N, E, S, W, STAY known to be open) to each observation."""

    def __init__(self, env: ParallelEnv[str, Any, Any]) -> None:
        super().__init__(env)
        self._mask_space = spaces.MultiBinary(len(MOVES))
        self._spaces: dict[str, spaces.Space[Any]] = {}
        for agent in env.possible_agents:
            inner = env.observation_space(agent)
            if isinstance(inner, spaces.Dict):
                if "action_mask" in inner.spaces:
                    raise ValueError("the observation already has an action_mask key")
                self._spaces[agent] = spaces.Dict({**inner.spaces, "action_mask": self._mask_space})
            else:
                self._spaces[agent] = spaces.Dict(
                    {"observation": inner, "action_mask": self._mask_space}
                )
        self._dict_obs = {
            a: isinstance(env.observation_space(a), spaces.Dict) for a in self._spaces
        }
        self._masks: dict[str, NDArray[np.int8]] = {}

    def observation(self, agent: str, obs: Any, raw: Any) -> dict[str, Any]:
        n, e, s, w = raw["edges"].tolist()
        mask = _MASKS[n + 3 * e + 9 * s + 27 * w]
        self._masks[agent] = mask
        if self._dict_obs[agent]:
            return {**obs, "action_mask": mask.copy()}
        return {"observation": obs, "action_mask": mask.copy()}

    def action_mask(self, agent: str) -> NDArray[np.bool_]:
        """``agent``'s current mask over N, E, S, W, STAY as bools (after ``reset``)."""
        try:
            mask = self._masks[agent]
        except KeyError:
            raise ValueError(
                f"no mask for agent {agent!r}: call reset() first (agents: {self.possible_agents})"
            ) from None
        return mask.astype(bool)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]
