"""The state of N Maze Escape games as arrays with a leading game axis (pure data).

``G`` games of ``n`` agents on ``W x H`` boards of ``C = W * H`` cells. Cells are flat indices
``row * W + column`` (row 0 north), as in the scalar engine. Every array has the game axis first;
per-agent arrays are ``(G, n, ...)``, which flattened are the *rows*, one agent of one game,
``row = game * n + agent``: the layout of the vector env's rows.

Each cell of a board is one byte, :data:`OPEN_BITS` the edges that are open (the bits of
:mod:`maze_envs.grid`: N 1, E 2, S 4, W 8) and the high nibble the edges in the outer frame
(N 16 ... W 128). The exit's doorway is the one edge that is both open and in the frame: a move
through it keeps the agent on the exit, and its edge reads ``open``, as in the scalar rules.

Example:
    >>> state = BatchState.empty(games=2, agents=3, cells=49, trail_length=0, used_exits=False)
    >>> state.positions.shape, state.board.shape, state.trail.shape
    ((2, 3), (2, 49), (2, 3, 0))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.grid import EAST, NORTH, SOUTH, WEST

__all__ = ["FRAME_BITS", "OPEN_BITS", "BatchState"]

#: The open-edge bits of a board byte, in the order N, E, S, W (the move codes).
OPEN_BITS: Final = (NORTH, EAST, SOUTH, WEST)
#: The outer-frame bits of a board byte, in the order N, E, S, W.
FRAME_BITS: Final = tuple(bit << 4 for bit in OPEN_BITS)


@dataclass(eq=False)  # identity: holds arrays
class BatchState:
    """Everything about N games: their boards (fixed for a game) and what changes each turn."""

    # --- the boards (set when a game starts) ------------------------------------------------
    board: NDArray[np.uint8]  # (G, C) open edges | frame edges << 4 (see the module docstring)
    landmark: NDArray[np.uint8]  # (G, C) 0 none, else 1 + index into LANDMARK_NAMES
    exit_cell: NDArray[np.intp]  # (G,) the exit's cell
    exit_row: NDArray[np.intp]  # (G * n,) the exit's cell, per row (what the rules compare)
    doorway: NDArray[np.uint8]  # (G,) the doorway's direction (move code 0..3)
    starts: NDArray[np.intp]  # (G, n) each agent's start cell
    origin: NDArray[np.intp]  # (G, n) what each agent's frame subtracts from a frame code
    # --- what changes every turn ------------------------------------------------------------
    turn: NDArray[np.int64]  # (G,) turns played
    positions: NDArray[np.intp]  # (G, n) each agent's cell
    visited: NDArray[np.bool_]  # (G, n) has stood on the exit
    ready_turn: NDArray[np.int64]  # (G, n) first turn whose action may radio again
    symbols: NDArray[np.int64]  # (G, n) the radio symbol sent last turn (0: none)
    move_result: NDArray[np.intp]  # (G, n) MoveResult of the last move
    radio_result: NDArray[np.intp]  # (G, n) RadioResult of the last radio symbol
    used: NDArray[np.uint8]  # (G, n, C) edges each agent crossed, per cell ((G, n, 0) when off)
    # (G, n, 2K) frame codes of the cells each agent ended the last K turns on, a ring stored
    # twice over (so the last K entries, oldest first, are always trail[..., head : head + K])
    trail: NDArray[np.int16]
    trail_head: int = 0

    @property
    def games(self) -> int:
        return int(self.board.shape[0])

    @property
    def agents(self) -> int:
        return int(self.positions.shape[1])

    @classmethod
    def empty(
        cls, games: int, agents: int, cells: int, trail_length: int, used_exits: bool
    ) -> BatchState:
        """Zeroed arrays for ``games`` games (every game still has to be started)."""
        g, n = games, agents
        return cls(
            board=np.zeros((g, cells), np.uint8),
            landmark=np.zeros((g, cells), np.uint8),
            exit_cell=np.zeros(g, np.intp),
            exit_row=np.zeros(g * n, np.intp),
            doorway=np.zeros(g, np.uint8),
            starts=np.zeros((g, n), np.intp),
            origin=np.zeros((g, n), np.intp),
            turn=np.zeros(g, np.int64),
            positions=np.zeros((g, n), np.intp),
            visited=np.zeros((g, n), np.bool_),
            ready_turn=np.ones((g, n), np.int64),
            symbols=np.zeros((g, n), np.int64),
            move_result=np.zeros((g, n), np.intp),
            radio_result=np.zeros((g, n), np.intp),
            used=np.zeros((g, n, cells if used_exits else 0), np.uint8),
            trail=np.zeros((g, n, 2 * trail_length), np.int16),
        )

    def nbytes(self) -> int:
        """Bytes held by the state's arrays."""
        return sum(value.nbytes for value in vars(self).values() if isinstance(value, np.ndarray))
