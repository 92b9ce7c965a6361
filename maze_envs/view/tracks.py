"""Maze Escape trajectories from journal rows, as the viewer reads them.

They are defined in :mod:`maze_envs.journal.read.tracks`, the reading floor the viewer and the
analysis share; this module names them for the viewer's readers.
"""

from __future__ import annotations

from maze_envs.journal.read.tracks import (
    ESCAPE_ENV_PREFIX,
    EscapeTrack,
    escape_track,
    game_layout,
    is_escape_game,
    read_turns,
    stored_move,
)

__all__ = [
    "ESCAPE_ENV_PREFIX",
    "EscapeTrack",
    "escape_track",
    "game_layout",
    "is_escape_game",
    "read_turns",
    "stored_move",
]
