"""The table of metrics: one :class:`~maze_envs.metrics.declaration.Metric` row per metric.

Every reader takes its columns, headings, legends and formats from here: the runner's tallies
(:mod:`maze_envs.bench.metrics`), the results' aggregates (:mod:`maze_envs.bench.results`), the
Markdown and HTML reports (:mod:`maze_envs.bench.report`), ``maze-envs analyze``
(:mod:`maze_envs.bench.analysis.table`), the studies' reports (:mod:`maze_envs.studies`), the
viewer (:mod:`maze_envs.view.decisions`) and the decision replay report
(``llm_policies.replay_report``). ``tests/test_metric_conformance.py`` fails naming a row a
reader it declares does not show, and a metric function without a row.

The rows are in the order of ``maze-envs analyze``'s rows (its CSV columns).

    >>> [m.name for m in metrics_for("report", "escape")][:3]
    ['finish_turn', 'finish_ratio', 'finish_ratio_censored']
    >>> METRIC["wall_move_rate"].header, METRIC["wall_move_rate"].format(0.25)
    ('wall%', '25.0%')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from maze_envs.metrics.declaration import Metric, Reader, RowKind

_D = "maze_envs.metrics.decisions:"
_E = "maze_envs.bench.analysis.escape_behaviour:"
_G = "maze_envs.bench.analysis.agimaze_behaviour:"
_BOTH: Final[tuple[RowKind, ...]] = ("escape", "agimaze")
_ALL_DECISION_READERS: Final[tuple[Reader, ...]] = ("tally", "analyze", "viewer", "replay")
_COUNTED: Final[tuple[Reader, ...]] = ("analyze", "viewer", "studies")

#: Every metric, in the order of ``maze-envs analyze``'s rows.
# fmt: off
METRICS: Final[tuple[Metric, ...]] = (
    # --- the outcome of a game (the runner's row) ---
    Metric("team_success", _E + "team_success", "team", "team success",
           readers=("tally", "analyze"), columns={"tally": "success"}, team="own"),
    Metric("finish_turn", _D + "finish_turn", "finish", "finish turn", "{:.1f}", "turn",
           readers=("tally", "results", "report"), interval="bootstrap", over="successes"),
    Metric("finish_ratio", _D + "finish_ratio", "finish/fastest", "finish / fastest (95% CI)",
           "{:.2f}", "ratio", readers=("tally", "results", "report"), interval="bootstrap",
           over="successes"),
    Metric("finish_ratio_censored", _D + "finish_ratio_censored", "censored",
           "censored ratio", "{:.2f}", "ratio", readers=("tally", "results", "report"),
           interval="bootstrap"),
    Metric("first_out", _D + "first_out", "first out", "first out (turn)", "{:.1f}", "turn",
           readers=("tally", "results", "report"), interval="bootstrap",
           over="games with an agent out"),
    Metric("agents_out", _D + "agents_out", "out", "agents out", readers=("tally",)),
    Metric("fastest", _D + "fastest_finish", "fastest", "fastest possible finish", "{:.1f}",
           "turn", readers=("tally", "results"), interval="bootstrap"),
    # --- decisions (both games) ---
    Metric("decisions", _D + "decisions", "actions", "decisions", kinds=_BOTH,
           readers=_ALL_DECISION_READERS, team="recount", text=("agimaze",)),
    Metric("fallbacks", _D + "fallbacks", "fb", "fallbacks", kinds=_BOTH,
           readers=(*_ALL_DECISION_READERS, "results", "report", "studies"), team="recount"),
    Metric("outages", _D + "outages", "out", "outages", kinds=_BOTH,
           readers=(*_ALL_DECISION_READERS, "results", "report"), team="recount"),
    Metric("moves_tried", _D + "moves_tried", "tried", "moves tried", kinds=_BOTH,
           readers=_COUNTED, team="recount", text=()),
    Metric("wall_moves", _D + "wall_moves", "walls", "wall moves", kinds=_BOTH,
           readers=("tally", "analyze", "studies"), team="recount", text=()),
    Metric("wall_move_rate", _D + "wall_move_rate", "wall%", "wall-move rate", "{:.1%}",
           "share",
           readers=("tally", "results", "report", "analyze", "studies", "viewer", "replay"),
           interval="bootstrap", over="games with a move tried", team="recount"),
    Metric("wall_move_rate", _D + "wall_move_rate", "wall%", "wall-move rate", "{:.1%}",
           "share", kinds=("agimaze",), readers=("tally", "analyze", "viewer")),
    # --- behaviour (maze-envs analyze) ---
    Metric("reversals", _E + "reversals", "rev", "reversals"),
    Metric("reversals_after_rise", _E + "reversals_after_rise", "rev^",
           "reversals right after a rise in the distance reading",
           readers=("analyze", "studies"), team="own"),
    Metric("stays", _D + "stays", "stay", "STAYs / game", "{:.1f}",
           readers=("tally", "results", "report", "analyze", "studies"),
           interval="bootstrap", team="recount"),
    Metric("exit_turns_after_reaching", _E + "exit_turns_after_reaching", "on-exit",
           "turns on the exit after reaching it", readers=("analyze", "studies")),
    Metric("colocated_turns", _E + "colocated_turns", "coloc",
           "turns shown a teammate's notebook", readers=("analyze", "studies"), text=()),
    Metric("copied_passages", _E + "copied_passages_count", "copied",
           "passages copied from a teammate's notebook", readers=("analyze", "studies")),
    Metric("copied_chars", _E + "copied_chars", "chars", "characters copied", unit="chars",
           text=()),
    Metric("radio_messages", _D + "radio_messages", "radio", "radio msgs / game", "{:.1f}",
           readers=("tally", "results", "report", "analyze", "studies"), interval="bootstrap",
           columns={"analyze": "radio_sent", "studies": "radio_sent"}, team="recount"),
    Metric("radio_with_coordinates", _E + "radio_with_coordinates", "xy",
           "radio messages with coordinates", readers=("analyze", "studies")),
    Metric("radio_frame_named", _E + "radio_frame_named", "framed",
           "radio messages with coordinates that name whose frame",
           readers=("analyze", "studies")),
    Metric("cells_visited", _E + "cells_visited", "cells", "cells visited", team="own",
           text=()),
    Metric("coverage", _E + "coverage", "cover", "share of the maze visited", "{:.0%}",
           "share", readers=("analyze", "studies"), team="own"),
    Metric("revisits", _E + "revisits", "revisit", "revisits"),
    Metric("first_exit_turn", _E + "first_exit_turn", "1st-exit", "first exit visit (turn)",
           unit="turn", team="own"),
    Metric("turns_to_team_success", _E + "turns_to_team_success", "to-team",
           "turns from the first exit visit to team success", unit="turns", team="own"),
    # --- the study's later questions ---
    Metric("plays", _E + "plays", "plays", "decisions of the policy's play",
           readers=("analyze", "studies"), text=()),
    Metric("stays_while_searching", _E + "stays_while_searching", "wait",
           "STAYs while searching (waiting)", readers=("analyze", "studies")),
    Metric("self_positions", _E + "self_positions_written", "pos",
           "self-tracked positions written", readers=("analyze", "studies")),
    Metric("self_positions_right", _E + "self_positions_right", "pos-ok",
           "self-tracked positions that are right", readers=("analyze", "studies")),
    Metric("notebook_compactions", _E + "notebook_compactions", "compact",
           "notebook compactions", readers=("analyze", "studies")),
    Metric("exit_choices", _E + "exit_choices", "choice", "moves where an exit was untried",
           readers=("analyze", "studies")),
    Metric("untried_exit_moves", _E + "untried_exit_moves", "untried",
           "moves through an untried exit", readers=("analyze", "studies")),
    Metric("exhausted_turns", _E + "exhausted_turns", "used-up", "decisions on used-up cells",
           readers=("analyze", "studies"), text=()),
    Metric("radio_landmark", _E + "radio_landmark", "landmark",
           "radio messages naming a landmark", readers=("analyze", "studies"), text=()),
    Metric("offset_notes", _E + "offset_notes", "offset", "notes stating a frame offset",
           readers=("analyze", "studies"), text=()),
    Metric("trail_doubts", _E + "trail_doubts", "doubt", "notes doubting the trail",
           readers=("analyze", "studies"), text=()),
    # --- AGI Maze (maze-envs analyze) ---
    Metric("steps", _G + "played_steps", "steps", "steps played", kinds=("agimaze",)),
    Metric("solved", _G + "solved", "solved", "labyrinths solved", kinds=("agimaze",)),
    Metric("bad_actions", _G + "bad_actions", "bad", "actions not played",
           kinds=("agimaze",)),
    Metric("reversals", _G + "reversals", "rev", "reversals", kinds=("agimaze",)),
    Metric("cells_visited", _G + "cells_visited", "cells", "cells visited",
           kinds=("agimaze",), text=()),
    Metric("coverage", _G + "coverage", "cover", "share of the labyrinths visited", "{:.0%}",
           "share", kinds=("agimaze",)),
    Metric("revisits", _G + "revisits", "revisit", "revisits", kinds=("agimaze",)),
    Metric("lost_at", _G + "lost_at", "lost at", "step of an unwinnable state", "step {}",
           "step", kinds=("agimaze",)),
    # --- what a game's end and its model usage were (the runner's row) ---
    Metric("notebook_bytes", _D + "notebook_bytes", "nb bytes", "notebook bytes (end)",
           "{:.0f}", "bytes", readers=("tally", "results", "report", "studies"),
           interval="bootstrap"),
    Metric("history_trims", _D + "history_trims", "trims", "history trims", kinds=_BOTH,
           readers=("tally", "results", "report")),
    Metric("cap_breaches", _D + "cap_breaches", "breaches", "cap breaches", kinds=_BOTH,
           readers=("tally", "results", "report")),
    Metric("truncations", _D + "truncations", "truncated", "truncations", kinds=_BOTH,
           readers=("tally", "results")),
    Metric("success_rate_with_excluded", _D + "success_rate_counting_excluded", "w/ excl",
           "success, excluded as failures (95% CI)", "{:.0%}", "share", kinds=_BOTH,
           readers=("results", "report"), interval="wilson"),
)
# fmt: on

#: The rows by name (a name whose definition differs between games has a row per game: the
#: first, Maze Escape's, is this one's; :func:`metric` finds a game's).
METRIC: Final[Mapping[str, Metric]] = MappingProxyType({m.name: m for m in reversed(METRICS)})


def metric(name: str, kind: RowKind) -> Metric:
    """The row of metric ``name`` for rows of ``kind``."""
    for row in METRICS:
        if row.name == name and kind in row.kinds:
            return row
    raise KeyError(f"no metric {name!r} for {kind} rows")


def metrics_for(reader: Reader, kind: RowKind | None = None) -> tuple[Metric, ...]:
    """The rows ``reader`` shows (for rows of ``kind``, when given), in table order."""
    return tuple(m for m in METRICS if m.shown_by(reader, kind))


def text_metrics(kind: RowKind) -> tuple[Metric, ...]:
    """The rows ``maze-envs analyze``'s text table shows for rows of ``kind``."""
    return tuple(m for m in metrics_for("analyze", kind) if kind in m.in_text)


def legend(metrics: tuple[Metric, ...]) -> str:
    """The legend of a text table: a line per row, its header and its definition."""
    width = max((len(m.header) for m in metrics), default=0)
    return "\n".join(f"  {m.header.ljust(width)}  {m.plain_legend}" for m in metrics)
