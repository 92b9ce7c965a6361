"""The analysis as text tables (for people) and CSV (for everything else)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from maze_envs.bench.analysis.analyze import Analysis
from maze_envs.metrics import Metric, legend, text_metrics

#: The columns that say which game and whose row, before the metrics: (column, heading).
ESCAPE_KEYS: Final = (
    ("game", "game"),
    ("setup", "setup"),
    ("agent_policy", "policy"),
    ("seed", "seed"),
    ("size", "size"),
    ("agent", "agent"),
    ("status", "status"),
    ("turns", "turns"),
)
AGIMAZE_KEYS: Final = (
    ("game", "game"),
    ("setup", "setup"),
    ("policy", "policy"),
    ("seed", "seed"),
    ("labyrinths", "labyrinth"),
    ("status", "status"),
)
_KEYS_LEGEND: Final = (
    "setup, policy the benchmark arm (the team row: the arm's policy; - outside a benchmark); "
    "status how the game ended (ok, error, outage, stopped)"
)


def _columns(
    keys: Sequence[tuple[str, str]], metrics: Sequence[Metric]
) -> tuple[tuple[str, str, str], ...]:
    """(column, heading, format) of a text table: the key columns, then the metrics'."""
    return (
        *((column, heading, "{}") for column, heading in keys),
        *((m.column("analyze"), m.header, m.fmt) for m in metrics),
    )


#: (column, heading, format) of the Maze Escape table, from :data:`maze_envs.metrics.METRICS`
#: (the CSV holds every field).
ESCAPE_COLUMNS: Final = _columns(ESCAPE_KEYS, text_metrics("escape"))
AGIMAZE_COLUMNS: Final = _columns(AGIMAZE_KEYS, text_metrics("agimaze"))
#: The legends under the tables: each metric's definition, from its function's docstring.
LEGEND: Final = (
    f"{_KEYS_LEGEND}; fallback and outage decisions are in no other column; the CSV has every "
    f"metric.\n{legend(text_metrics('escape'))}"
)
AGIMAZE_LEGEND: Final = f"{_KEYS_LEGEND}.\n{legend(text_metrics('agimaze'))}"
#: Rows as recorded (not behaviour metrics: nothing is replayed or defined here).
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
