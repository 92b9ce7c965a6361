"""Self-contained HTML pages of journaled games, for both environments (no server, no network).

``maze-envs view JOURNAL [--game ID] [--out FILE]`` writes one page per game: Maze Escape pages
show the whole maze, every agent's trail up to the chosen turn and, per agent, what it saw (a
readable panel: the edges drawn around its cell, distances, coordinates, trail), its notebook with
the change since last turn marked, its reply, the events, the prompt and raw model reply when
they were recorded, the radio log, rewards and the path distance to the exit. AGI Maze pages show
the labyrinth (hidden cells unknown until visited), the position, the narration, the inventory
and the steps against the budget. Games of any other environment (CartPole, a PettingZoo env,
recorded by ``wrappers.recording``) get a generic page: per turn and agent the observation,
action, reward, flags, info and decision record as recorded, marked "recorded, not replayable:
not verified by replay". A slider, buttons, the keyboard and ``#turn=N&agent=X`` links
move through the game.

The games are read through :mod:`maze_envs.reading` (Maze Escape trajectories, AGI Maze
steps replayed, text changes), the floor the analysis shares; :mod:`.tracks` names its Maze Escape
part for the viewer's readers. Modules: :mod:`.escape_data`, :mod:`.agimaze_data` and
:mod:`.generic_data` (page data), :mod:`.page` (templates and payload), :mod:`.cli` (the
command), :mod:`.browser` (headless Chromium for tests and benchmarks).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "agimaze_game_data",
    "agimaze_game_html",
    "escape_game_data",
    "escape_game_html",
    "game_data",
    "game_html",
    "generic_game_data",
    "main",
]

# Loaded on first use, so that importing one part stays cheap.
_HOMES = {
    "agimaze_game_data": "maze_envs.view.agimaze_data",
    "escape_game_data": "maze_envs.view.escape_data",
    "generic_game_data": "maze_envs.view.generic_data",
    "agimaze_game_html": "maze_envs.view.cli",
    "escape_game_html": "maze_envs.view.cli",
    "game_data": "maze_envs.view.cli",
    "game_html": "maze_envs.view.cli",
    "main": "maze_envs.view.cli",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'maze_envs.view' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(home), name)
