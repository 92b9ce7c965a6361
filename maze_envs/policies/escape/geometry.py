"""Directions and positions as a Maze Escape agent reasons about them.

Positions are ``(x, y)`` with x growing east and y growing north, the convention of the
observation's coordinates (:mod:`maze_envs.escape.types`). When the game gives no coordinates,
the agent's own origin is its start cell (dead reckoning); when it does, the game's frame is used
as it is. Either way only differences of positions matter, so both are the same to a policy.

Example:
    >>> step((0, 0), "N"), BACK["E"], turn_left("N"), turn_right("W")
    ((0, 1), 'W', 'W', 'N')
"""

from __future__ import annotations

from typing import Final

from maze_envs.escape.types import Direction
from maze_envs.escape.vocab import OPPOSITE_DIRECTION

#: The four moves in the order of the observation's edges.
DIRECTIONS: Final[tuple[Direction, ...]] = ("N", "E", "S", "W")
#: ``(dx, dy)`` of each move.
DELTA: Final[dict[Direction, tuple[int, int]]] = {
    "N": (0, 1),
    "E": (1, 0),
    "S": (0, -1),
    "W": (-1, 0),
}
#: The direction back (the game's vocabulary).
BACK: Final = OPPOSITE_DIRECTION

Position = tuple[int, int]


def step(position: Position, direction: Direction) -> Position:
    """The neighbour of ``position`` in ``direction``."""
    dx, dy = DELTA[direction]
    return (position[0] + dx, position[1] + dy)


def turn_left(heading: Direction) -> Direction:
    """The direction 90 degrees anticlockwise of ``heading``."""
    return DIRECTIONS[(DIRECTIONS.index(heading) - 1) % 4]


def turn_right(heading: Direction) -> Direction:
    """The direction 90 degrees clockwise of ``heading``."""
    return DIRECTIONS[(DIRECTIONS.index(heading) + 1) % 4]


def agent_index(agent: str, agents: tuple[str, ...] = ()) -> int:
    """The agent's number (A = 0): its place in ``agents``, else from its letter."""
    if agent in agents:
        return agents.index(agent)
    return max(0, ord(agent[:1] or "A") - ord("A"))
