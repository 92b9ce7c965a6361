"""Maze Escape with moves only: the action space becomes ``Discrete(5)``.

:class:`MoveOnlyActions` replaces each agent's ``Dict`` action (move + notebook edit + radio)
by a single integer, in the order of :class:`maze_envs.escape.vocab.Move`:

=====  ======  ===========================
code   move    what it does
=====  ======  ===========================
0      N       one step north (y + 1)
1      E       one step east (x + 1)
2      S       one step south (y - 1)
3      W       one step west (x - 1)
4      STAY    stay on the cell
=====  ======  ===========================

The notebook and the radio are not used (no edit, nothing sent). Python ints and numpy integer
scalars (or 0-d integer arrays, as vectorised learners give) are accepted; anything else, or a
code outside ``0..4``, raises ``ValueError`` naming the agent. Observations are unchanged.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.move_only import MoveOnlyActions
    >>> env = MoveOnlyActions(maze_escape_v1.parallel_env(preset="full", width=7, height=7))
    >>> env.action_space("A")
    Discrete(5)
    >>> observations, infos = env.reset(seed=3)
    >>> observations, rewards, terms, truncs, infos = env.step({a: 4 for a in env.agents})
    >>> infos["A"]["events"]["move"]
    'stayed'
    >>> env.step({"A": 7, "B": 4, "C": 4})
    Traceback (most recent call last):
    ...
    ValueError: agent 'A': move-only action 7 is not in Discrete(5); use 0 N, 1 E, 2 S, 3 W, 4 STAY
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.env import ParallelEnv

from maze_envs.escape.vocab import MOVES
from wrappers.escape_base import EscapeWrapper

__all__ = ["MOVE_CODES", "MoveOnlyActions"]

#: Move-only action code -> move name (the order of :class:`maze_envs.escape.vocab.Move`).
MOVE_CODES: Final = dict(enumerate(MOVES))
_ALLOWED: Final = ", ".join(f"{code} {name}" for code, name in MOVE_CODES.items())


class MoveOnlyActions(EscapeWrapper):
    """Each agent's action is one int: 0 N, 1 E, 2 S, 3 W, 4 STAY (notebook and radio unused)."""

    def __init__(self, env: ParallelEnv[str, Any, Any]) -> None:
        super().__init__(env)
        inner = env.action_space(env.possible_agents[0])
        if not (isinstance(inner, spaces.Dict) and "move" in inner.spaces):
            raise ValueError(
                f"MoveOnlyActions needs Maze Escape's Dict action space below it, got {inner}; "
                "apply it directly to the env or over observation wrappers only"
            )
        splice = self.config.notebook_mode == "splice"
        notebook: dict[str, Any] = (
            {"edit": 0, "start": 0, "end": 0, "text": ""} if splice else {"append": ""}
        )
        self._notebook = notebook  # each step hands out a fresh copy
        self._symbol = {"radio_symbol": 0} if self.config.radio_symbols else {}  # none sent
        self._spaces = {a: spaces.Discrete(len(MOVES)) for a in env.possible_agents}

    def action(self, agent: str, action: Any) -> dict[str, Any]:
        code = _code(agent, action)
        return {"move": code, "notebook": self._notebook.copy(), "radio": "", **self._symbol}

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]


def _code(agent: str, action: Any) -> int:
    """The move code of a move-only action (``ValueError`` when it is not one)."""
    if type(action) is int:
        code = action
    elif isinstance(action, np.integer) or (
        isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu"
    ):
        code = int(action.item() if isinstance(action, np.ndarray) else action)
    else:
        raise ValueError(
            f"agent {agent!r}: a move-only action is an int in 0..4 ({_ALLOWED}), got "
            f"{type(action).__name__} {action!r}"
        )
    if not 0 <= code < len(MOVES):
        raise ValueError(
            f"agent {agent!r}: move-only action {code} is not in Discrete(5); use {_ALLOWED}"
        )
    return code
