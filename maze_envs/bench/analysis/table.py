"""The analysis as text tables (for people) and CSV (for everything else)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from maze_envs.bench.analysis.analyze import Analysis

#: (column, heading, format) of the Maze Escape table; the CSV holds every field.
ESCAPE_COLUMNS: Final = (
    ("game", "game", "{}"),
    ("setup", "setup", "{}"),
    ("agent_policy", "policy", "{}"),
    ("seed", "seed", "{}"),
    ("size", "size", "{}"),
    ("agent", "agent", "{}"),
    ("status", "status", "{}"),
    ("turns", "turns", "{}"),
    ("team_success", "team", "{}"),
    ("fallbacks", "fb", "{}"),
    ("outages", "out", "{}"),
    ("wall_move_rate", "wall%", "{:.1%}"),
    ("reversals", "rev", "{}"),
    ("reversals_after_rise", "rev^", "{}"),
    ("stays", "stay", "{}"),
    ("exit_turns_after_reaching", "on-exit", "{}"),
    ("copied_passages", "copied", "{}"),
    ("radio_sent", "radio", "{}"),
    ("radio_with_coordinates", "xy", "{}"),
    ("radio_frame_named", "framed", "{}"),
    ("coverage", "cover", "{:.0%}"),
    ("revisits", "revisit", "{}"),
    ("first_exit_turn", "1st-exit", "{}"),
    ("turns_to_team_success", "to-team", "{}"),
    ("stays_while_searching", "wait", "{}"),
    ("self_positions", "pos", "{}"),
    ("self_positions_right", "pos-ok", "{}"),
    ("exit_choices", "choice", "{}"),
    ("untried_exit_moves", "untried", "{}"),
    ("notebook_compactions", "compact", "{}"),
)
AGIMAZE_COLUMNS: Final = (
    ("game", "game", "{}"),
    ("setup", "setup", "{}"),
    ("policy", "policy", "{}"),
    ("seed", "seed", "{}"),
    ("labyrinths", "labyrinth", "{}"),
    ("status", "status", "{}"),
    ("decisions", "actions", "{}"),
    ("fallbacks", "fb", "{}"),
    ("outages", "out", "{}"),
    ("steps", "steps", "{}"),
    ("solved", "solved", "{}"),
    ("bad_actions", "bad", "{}"),
    ("wall_move_rate", "wall%", "{:.1%}"),
    ("reversals", "rev", "{}"),
    ("coverage", "cover", "{:.0%}"),
    ("revisits", "revisit", "{}"),
    ("lost_at", "lost at", "step {}"),
)
AGIMAZE_LEGEND: Final = (
    "lost at: the step at which the player entered a state from which no action sequence wins "
    "(the rest of the episode could not be won; - never)"
)
GENERIC_COLUMNS: Final = (
    ("game", "game", "{}"),
    ("env_id", "env", "{}"),
    ("seed", "seed", "{}"),
    ("agent", "agent", "{}"),
    ("turns", "turns", "{}"),
    ("steps", "steps", "{}"),
    ("total_reward", "reward", "{:g}"),
    ("terminated", "term", "{}"),
    ("truncated", "trunc", "{}"),
    ("distinct_observations", "obs", "{}"),
    ("outcome", "outcome", "{}"),
)
GENERIC_LEGEND: Final = (
    "rows as recorded, not replayed; steps turns the agent acted in; reward total recorded "
    "reward; term/trunc whether a step ended it so; obs distinct observations it was given"
)
LEGEND: Final = (
    "setup, policy the benchmark arm (the team row: the arm's policy; - outside a benchmark); "
    "status how the game ended (ok, error, outage, stopped); fb, out fallback and outage "
    "decisions (not the policy's play: in no other column); wall% moves into walls / moves "
    "tried (STAY excluded); rev reversals, rev^ of them right after a move that "
    "raised the distance reading (- without sensor); stay STAY moves; on-exit turns on the exit "
    "after reaching it; copied 40+ character passages copied from a colocated teammate's "
    "notebook; radio messages sent, xy with coordinates, framed of those naming whose frame; "
    "cover share of cells visited; revisit moves into a cell visited before; 1st-exit turn of "
    "the first exit visit; to-team turns from it to team success; wait STAYs before reaching the "
    "exit; pos coordinates it wrote for itself in its notebook, pos-ok of those its true "
    "position; choice moves from a cell with untried and used exits, untried of those through "
    "an untried exit; compact notebook rewrites into less text (the CSV has every metric)"
)


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return fmt.format(value)


def text_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    """Rows as an aligned plain-text table."""
    head = [h for _, h, _ in columns]
    body = [[_cell(row[c], f) for c, _, f in columns] for row in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=False)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(x.rjust(w) for x, w in zip(line, widths, strict=True)) for line in body]
    return "\n".join(lines)


def render(analysis: Analysis) -> str:
    """The whole analysis for a terminal."""
    parts = []
    if analysis.escape:
        rows = [m.row() for m in analysis.escape]
        parts += [
            "Maze Escape: behaviour per agent and game (team = the game's team row)",
            text_table(rows, ESCAPE_COLUMNS),
            LEGEND,
        ]
        notes = {m.game: m.note for m in analysis.escape if m.note}
        parts += [f"game {g}: analysed up to {note}" for g, note in sorted(notes.items())]
    if analysis.agimaze:
        rows = [m.row() for m in analysis.agimaze]
        parts += ["AGI Maze: behaviour per game", text_table(rows, AGIMAZE_COLUMNS)]
        parts.append(AGIMAZE_LEGEND)
        parts += [f"game {m.game}: analysed up to {m.note}" for m in analysis.agimaze if m.note]
    if analysis.generic:
        rows = [m.row() for m in analysis.generic]
        parts += [
            "Other environments: steps and rewards per agent and game",
            text_table(rows, GENERIC_COLUMNS),
            GENERIC_LEGEND,
        ]
        notes = {m.game: m.note for m in analysis.generic if m.note}
        parts += [f"game {g}: analysed up to {note}" for g, note in sorted(notes.items())]
    parts += [f"game {g}: skipped ({why})" for g, why in analysis.skipped]
    return "\n\n".join(parts) if parts else "no games"


def write_csv(analysis: Analysis, path: str | Path) -> int:
    """Every row (every environment, every field) into one CSV file; returns the row count.

    Columns are the union of the environments' fields plus ``kind`` (``escape``, ``agimaze``,
    or ``generic`` for games of other environments); a field an environment
    does not have is empty, as is a metric that does not apply (None).
    """
    rows = [{"kind": "escape", **m.row()} for m in analysis.escape]
    rows += [{"kind": "agimaze", **m.row()} for m in analysis.agimaze]
    rows += [{"kind": "generic", **m.row()} for m in analysis.generic]
    fields: list[str] = ["kind"]
    for row in rows:
        fields += [k for k in row if k not in fields]
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return len(rows)
