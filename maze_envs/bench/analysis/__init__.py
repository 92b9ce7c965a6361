"""Behavioural analysis of journaled games: journals in, tables out (``maze-envs analyze``).

The metrics the Maze Escape study computed by hand, per agent and per game, exactly defined in
:mod:`.escape_metrics` (wall-move rate, defined once in :mod:`maze_envs.metrics` like every
metric the benchmark results also report; reversals, and reversals right after a move that raised
the distance reading; STAY count and turns on the exit after reaching it; passages of 40+
characters copied from a colocated teammate's notebook; radio messages with coordinates and
whether they name whose frame; coverage and revisits; first exit visit and turns from it to team
success), their AGI Maze counterparts (:mod:`.agimaze_metrics`), generic rows for games of any
other environment recorded by ``wrappers.recording`` (:mod:`.generic_metrics`: steps, total
reward), the text patterns behind them (:mod:`.patterns`), the reading of a journal
(:mod:`.analyze`), and the output (:mod:`.table`).

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs import maze_escape_v0
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=5, journal=path)
    >>> _ = env.reset(seed=3)
    >>> while env.agents:
    ...     _ = env.step({a: {**env.action_space(a).sample(), "move": 4} for a in env.agents})
    >>> env.close()
    >>> rows = analyze_journal(path).escape
    >>> [(m.agent, m.stays, m.moves_tried, m.wall_move_rate, m.cells_visited) for m in rows]
    [('A', 5, 0, None, 1), ('B', 5, 0, None, 1), ('C', 5, 0, None, 1), ('team', 15, 0, None, 3)]
"""

from __future__ import annotations

from maze_envs.bench.analysis.agimaze_metrics import AgiMazeMetrics, agimaze_metrics
from maze_envs.bench.analysis.analyze import Analysis, analyze_games, analyze_journal
from maze_envs.bench.analysis.escape_metrics import AgentMetrics, game_metrics
from maze_envs.bench.analysis.generic_metrics import GenericMetrics, generic_metrics
from maze_envs.bench.analysis.table import render, write_csv

__all__ = [
    "AgentMetrics",
    "AgiMazeMetrics",
    "Analysis",
    "GenericMetrics",
    "agimaze_metrics",
    "analyze_games",
    "analyze_journal",
    "game_metrics",
    "generic_metrics",
    "render",
    "write_csv",
]
