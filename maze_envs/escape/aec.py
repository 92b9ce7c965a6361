"""The AEC form of Maze Escape: agents hand in their actions one by one; the turn resolves after
the last.

PettingZoo's ``parallel_to_aec_wrapper`` stores each action as it arrives and only the parallel
step after the last agent checks them, so a bad action would raise at a *later* agent's step and
stay stored, making every following step raise too. :class:`MazeEscapeAEC` checks each action
against the action space at the step that receives it (the same check the parallel step makes):
a bad action raises ``ValueError`` right there, nothing is stored, the same agent is still to
act, and the game goes on with its next (valid) action. Accepted actions are stored as plain
data, the normal form the parallel step records.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> env = maze_escape_v1.env(width=6, height=6, max_turns=5)
    >>> env.reset(seed=0)
    >>> env.step({"move": 9, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""},
    ...           "radio": ""})
    Traceback (most recent call last):
    ...
    ValueError: agent A: move must be an integer 0..4 (0=N, 1=E, 2=S, 3=W, 4=STAY), got 9
    >>> env.agent_selection  # still A's turn; nothing was stored
    'A'
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.env import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from maze_envs.escape.env import MazeEscapeEnv


class MazeEscapeAEC(parallel_to_aec_wrapper):
    """AEC conversion of a :class:`~maze_envs.escape.env.MazeEscapeEnv` that validates each
    agent's action when it arrives (see the module docstring)."""

    def __init__(self, parallel_env: MazeEscapeEnv) -> None:
        super().__init__(parallel_env)
        self._maze_env = parallel_env

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            action = self._maze_env.accept(agent, action)  # raises before anything is stored
        super().step(action)


def aec_env(parallel_env: MazeEscapeEnv) -> AECEnv[str, Any, Any]:
    """The AEC environment of ``parallel_env``, with PettingZoo's order-enforcing wrapper."""
    return OrderEnforcingWrapper(MazeEscapeAEC(parallel_env))
