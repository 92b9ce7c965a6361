"""The behaviour measures a study report can show: how each metric is aggregated over an arm.

A measure names no new metric: each reads columns that one function defines, per game, in
:mod:`maze_envs.metrics` (and the analysis of :mod:`maze_envs.bench.analysis` built on it),
named in ``defined_by``; the report prints that function's docstring as the definition. A
measure is either

* a **mean per game** of one column (``denominator`` None), with a bootstrap interval over
  games; or
* a **share**, ``numerator / denominator`` summed over the arm's games (every wall move over
  every move tried), with a bootstrap interval over games (the games resampled whole, since the
  events of one game are not independent).

``source`` says where the columns are: ``"row"`` the game's results row (the runner's),
``"team"`` the team row of ``maze-envs analyze``. Paired differences use each game's own value
(a share per game; a game without events has none and its pair is left out).

    >>> MEASURES["untried_exit_rate"].denominator
    'exit_choices'
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Final, Literal

from maze_envs.metrics import Metric, metrics_for


@dataclass(frozen=True)
class Measure:
    """How one metric is aggregated over an arm (see the module docstring)."""

    key: str
    label: str
    source: Literal["row", "team"]
    numerator: str
    denominator: str | None
    defined_by: str
    percent: bool = False

    def value(self, columns: dict[str, object]) -> float | None:
        """The measure of one game from its columns (None when it has no value there)."""
        top = columns.get(self.numerator)
        if not isinstance(top, int | float):
            return None
        if self.denominator is None:
            return float(top)
        bottom = columns.get(self.denominator)
        if not isinstance(bottom, int | float) or not bottom:
            return None
        return float(top) / float(bottom)

    def definition(self) -> str:
        """The metric's legend in :data:`maze_envs.metrics.METRICS` (its row named by the
        measure's key, else the row whose studies column is the numerator); for a measure of no
        row (token counts), the first paragraph of the docstring of what defines it."""
        row = study_metric(self.key) or study_metric(self.numerator)
        if row is not None:
            return row.legend
        module_name, _, attribute = self.defined_by.partition(":")
        target: object = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            target = getattr(target, part)
        text = inspect.getdoc(target) or ""
        if inspect.ismodule(target):  # a module's list of definitions: the column's entry
            entry = _entry(text, self.numerator)
            if entry:
                return entry
        return " ".join(text.split("\n\n", 1)[0].split())


def study_metric(column: str) -> Metric | None:
    """The row of :data:`maze_envs.metrics.METRICS` the studies show in ``column`` (None)."""
    for row in metrics_for("studies"):
        if column in (row.name, row.column("studies")):
            return row
    return None


def _entry(text: str, column: str) -> str | None:
    """The definition of ``column`` in a docstring's list (a line naming ````column````, then
    the indented lines under it)."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if not line.startswith(" ") and f"``{column}``" in line:
            body = []
            for following in lines[number + 1 :]:
                if following.startswith(" ") and following.strip():
                    body.append(following.strip())
                elif body or not following.startswith("``"):
                    break
            return " ".join(body) or None
    return None


_M = "maze_envs.metrics:"
_P = "maze_envs.bench.analysis.patterns:"
_A = "maze_envs.bench.analysis.escape_metrics"
_B = "maze_envs.bench.metrics:"
_U = "maze_envs.policies.interface:Usage"

#: Every measure a study file may name in ``metrics``, by key.
# fmt: off
MEASURES: Final[dict[str, Measure]] = {
    m.key: m
    for m in (
        Measure(
            "wall_move_rate", "wall-move rate", "team", "wall_moves", "moves_tried",
            _M + "wall_move_rate", percent=True,
        ),
        Measure("stays", "STAYs per game", "team", "stays", None, _M + "stays"),
        Measure(
            "stays_while_searching", "STAYs while searching (waiting) per game", "team",
            "stays_while_searching", None, _M + "stays_while_searching",
        ),
        Measure(
            "radio_messages", "radio messages per game", "team", "radio_sent", None,
            _M + "radio_messages",
        ),
        Measure(
            "radio_with_coordinates", "radio messages with coordinates per game", "team",
            "radio_with_coordinates", None, _P + "has_coordinates",
        ),
        Measure(
            "radio_frame_named", "radio messages with coordinates that name whose frame",
            "team", "radio_frame_named", "radio_with_coordinates", _P + "names_frame",
            percent=True,
        ),
        Measure(
            "radio_landmark", "radio messages naming a landmark per game", "team",
            "radio_landmark", None, _P + "names_landmark",
        ),
        Measure(
            "reversals_after_rise", "reversals right after a rise in the distance reading",
            "team", "reversals_after_rise", "reversals", _A, percent=True,
        ),
        Measure(
            "self_position_accuracy", "self-tracked positions that are right", "team",
            "self_positions_right", "self_positions", _M + "position_right", percent=True,
        ),
        Measure(
            "self_positions", "self-tracked positions written per game", "team",
            "self_positions", None, _P + "self_positions",
        ),
        Measure(
            "untried_exit_rate", "moves through an untried exit, where there was a choice",
            "team", "untried_exit_moves", "exit_choices", _M + "exit_choice", percent=True,
        ),
        Measure(
            "exhausted_share", "decisions on used-up cells", "team", "exhausted_turns",
            "plays", _M + "is_exhausted", percent=True,
        ),
        Measure(
            "copied_passages", "passages copied from a teammate's notebook per game", "team",
            "copied_passages", None, _P + "copied_passages",
        ),
        Measure(
            "colocated_turns", "turns shown a teammate's notebook per game", "team",
            "colocated_turns", None, _A,
        ),
        Measure(
            "offset_notes", "notes stating a frame offset per game", "team", "offset_notes",
            None, _P + "states_offset",
        ),
        Measure(
            "notebook_compactions", "notebook compactions per game", "team",
            "notebook_compactions", None, _M + "is_compaction",
        ),
        Measure(
            "notebook_bytes", "notebook bytes at the end per game", "row", "notebook_bytes",
            None, _M + "notebook_bytes",
        ),
        Measure(
            "exit_turns_after_reaching", "turns on the exit after reaching it per game", "team",
            "exit_turns_after_reaching", None, _A,
        ),
        Measure("coverage", "share of the maze visited", "team", "coverage", None, _A),
        Measure(
            "trail_doubts", "notes doubting the trail per game", "team", "trail_doubts", None,
            _P + "doubts_trail",
        ),
        Measure(
            "fallback_share", "decisions that fell back (no usable reply)", "row", "fallbacks",
            "decisions", _M + "fallbacks", percent=True,
        ),
        Measure(
            "output_tokens", "output tokens per decision", "row", "output_tokens", "decisions",
            _U,
        ),
        Measure(
            "input_tokens", "input tokens per decision", "row", "input_tokens", "decisions",
            _U,
        ),
        Measure(
            "cache_read_share", "cache-read share of input tokens", "row", "cache_read_tokens",
            "input_tokens", _B + "cache_read_share", percent=True,
        ),
    )
}
# fmt: on


def _derived_measures() -> dict[str, Measure]:
    """A mean per game for every row of METRICS the studies show that no measure above reads:
    a new metric is measurable in a study file by its row alone."""
    read = {c for m in MEASURES.values() for c in (m.key, m.numerator, m.denominator)}
    out = {}
    for row in metrics_for("studies"):
        column = row.column("studies")
        if column in read or row.name in read:
            continue
        source: Literal["row", "team"] = "team" if "analyze" in row.readers else "row"
        label = row.label if row.unit == "share" else f"{row.label} per game"
        out[row.name] = Measure(
            row.name, label, source, column, None, row.function, percent=row.unit == "share"
        )
    return out


MEASURES.update(_derived_measures())
