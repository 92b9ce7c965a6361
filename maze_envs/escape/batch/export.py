"""One game of the batched engine as a board the scalar env plays.

:func:`export_game` gives the game's :class:`~maze_envs.escape.generator.Layout` (maze, exit and
doorway, landmarks, starts) with the configuration: the scalar env with a
:class:`~maze_envs.escape.generator.FixedGenerator` of it starts the same game, and played with the
same moves (and radio symbols) it goes through the same turns, observations, rewards and
endings (``tests/escape/batch/test_differential.py``). A scalar game is journaled as any other,
so this is how a game of the batched engine, which keeps no journal, is replayed into one.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> vec = maze_escape_v1.vector_env(num_games=4, width=6, height=6)
    >>> _ = vec.reset(seed=3)
    >>> game = vec.export(2)
    >>> env = maze_escape_v1.parallel_env(config=game.config, generator=game.generator)
    >>> _ = env.reset(seed=0)
    >>> env.layout.starts == game.layout.starts
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from maze_envs.escape.batch.types import OPEN_BITS, BatchState
from maze_envs.escape.config import Config
from maze_envs.escape.generator import FixedGenerator, Layout
from maze_envs.escape.vocab import LANDMARK_NAMES

__all__ = ["ExportedGame", "export_game"]


@dataclass(frozen=True)
class ExportedGame:
    """A game of the batched engine as the scalar env takes it."""

    config: Config
    layout: Layout
    #: turns the game had played when it was exported (0: just started)
    turn: int

    @property
    def generator(self) -> FixedGenerator:
        """The generator that starts this game in the scalar env (``generator=``)."""
        return FixedGenerator(self.layout)


def export_game(state: BatchState, config: Config, game: int) -> ExportedGame:
    """Game ``game`` of ``state`` (its board; its moves so far are not kept)."""
    if not 0 <= game < state.games:
        raise ValueError(f"game must be 0..{state.games - 1}, got {game}")
    width = config.width
    doorway = OPEN_BITS[int(state.doorway[game])]
    exit_flat = int(state.exit_cell[game])
    maze = (state.board[game] & 0x0F).astype(np.uint8)
    maze[exit_flat] &= ~np.uint8(doorway)  # the doorway is the game's, not the grid's
    codes = state.landmark[game]
    landmarks = tuple(
        (divmod(int(cell), width), LANDMARK_NAMES[int(codes[cell]) - 1])
        for cell in np.flatnonzero(codes)
    )
    layout = Layout(
        maze=maze.reshape(config.height, width),
        exit_cell=divmod(exit_flat, width),
        doorway=doorway,
        landmarks=landmarks,
        starts=tuple(divmod(int(cell), width) for cell in state.starts[game]),
    )
    layout.validate(config)
    return ExportedGame(config, layout, int(state.turn[game]))
