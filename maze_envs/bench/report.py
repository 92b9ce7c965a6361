"""Writing a run's results: CSV and JSON of every game, a Markdown summary of the aggregates.

``results.csv``
    One line per game, flat: nested values become columns (``exit_turn_A``, ...) or JSON text
    (``quirks``, ``policy_specs``).
``results.json``
    ``{"experiment": ..., "games": [rows], "summary": {...}}`` with the aggregates of
    :func:`maze_envs.bench.results.summarize` (every interval included).
``summary.md``
    The tables: Maze Escape per setup, size and policy; AGI Maze per stage laid out like the
    AGI Maze benchmark's calibration table (Family, Stage, Size, soft/hard, success, good, late
    in %), then per pack family and per pack group; labyrinth sets per arm (the target's
    score) and per labyrinth of the set (:mod:`maze_envs.bench.setresults`), each section
    the one of its setup class (``SetupBase.report``).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from maze_envs.bench.results import AGIMAZE_LEVELS
from maze_envs.bench.stats import describe_estimate
from maze_envs.metrics import METRIC, Metric, metrics_for, stop_kind

Row = dict[str, Any]

#: Row columns that hold nested data written as JSON text in the CSV.
_JSON_COLUMNS = ("policy_specs", "quirks", "outage", "labyrinths")
#: Row columns left out of the CSV (in the JSON only).
_JSON_ONLY = ("usage_by_agent", "exit_turns")


def _flat(row: Row) -> Row:
    flat = {k: v for k, v in row.items() if k not in _JSON_ONLY}
    for agent, turn in (row.get("exit_turns") or {}).items():
        flat[f"exit_turn_{agent}"] = turn
    for column in _JSON_COLUMNS:
        if column in flat:
            flat[column] = orjson.dumps(flat[column]).decode()
    return flat


def csv_text(rows: Sequence[Row]) -> str:
    """Every row as CSV; columns in first-seen order across all rows."""
    flats = [_flat(row) for row in rows]
    columns: dict[str, None] = {}
    for flat in flats:
        columns.update(dict.fromkeys(flat))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for flat in flats:
        writer.writerow({k: ("" if v is None else v) for k, v in flat.items()})
    return out.getvalue()


def write_results(
    out: Path, experiment: dict[str, Any], rows: Sequence[Row], summary: dict[str, Any]
) -> dict[str, Path]:
    """Write results.csv, results.json and summary.md into ``out``; return their paths."""
    paths = {
        "csv": out / "results.csv",
        "json": out / "results.json",
        "markdown": out / "summary.md",
    }
    paths["csv"].write_text(csv_text(rows), encoding="utf-8")
    data = {"experiment": experiment, "games": list(rows), "summary": summary}
    paths["json"].write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    paths["markdown"].write_text(markdown(experiment, summary), encoding="utf-8")
    return paths


# --- Markdown ---------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _interval(estimate: dict[str, Any] | None, digits: int = 2) -> str:
    return describe_estimate(estimate, digits)


def _excluded(group: dict[str, Any]) -> str:
    """The games counted apart: ``0``, or ``2 (1 outage, 1 stopped)``."""
    total = int(group.get("excluded") or 0)
    if not total:
        return "0"
    parts = [
        f"{group[key]} {name}"
        for key, name in (("outage_games", "outage"), ("stopped_games", "stopped"))
        if group.get(key)
    ]
    return f"{total} ({', '.join(parts)})"


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _rate(successes: int, trials: int, low: float | None, high: float | None) -> str:
    if not trials:
        return "–"
    return f"{successes}/{trials} = {100 * successes / trials:.0f}% [{_pct(low)}, {_pct(high)}]"


def _money(value: float | None, status: str | None) -> str:
    if value is None:
        return "unknown" if status == "unknown" else "–"
    if status == "local" and value == 0:
        return "$0 (local)"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


class Table(str):
    """A Markdown table: the text, keeping its header and cells (``header``, ``lines``) for
    the HTML front page (:mod:`maze_envs.bench.frontpage`).

    >>> t = table(["a", "b"], [["1", "2"]])
    >>> print(t)
    | a | b |
    |---|---|
    | 1 | 2 |
    >>> t.header, t.lines
    (('a', 'b'), (('1', '2'),))
    """

    header: tuple[str, ...]
    lines: tuple[tuple[str, ...], ...]

    def __new__(cls, header: Sequence[str], lines: Iterable[Sequence[str]]) -> Table:
        cells = tuple(tuple(line) for line in lines)
        rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        rows += ["| " + " | ".join(line) + " |" for line in cells]
        made = super().__new__(cls, "\n".join(rows))
        made.header, made.lines = tuple(header), cells
        return made


def table(header: Sequence[str], lines: Iterable[Sequence[str]]) -> Table:
    """A Markdown table (a :class:`Table`: a ``str`` that keeps its cells)."""
    return Table(header, lines)


def _policy(summary: dict[str, Any]) -> str:
    return summary["policy"] + (" (privileged)" if summary.get("privileged") else "")


#: The columns of model usage, the same in every table (when a policy reports usage): what
#: it cost, how the decisions went, and what the model saw and wrote (histories trimmed to fit
#: the context window, replies over the output cap).
USAGE_METRICS: Final = tuple(
    METRIC[name] for name in ("fallbacks", "outages", "history_trims", "cap_breaches")
)
USAGE_HEADER = (
    "tokens in/out",
    "cost",
    "cost / success",
    USAGE_METRICS[0].label,
    USAGE_METRICS[1].label,
    "quirks",
    *(m.label for m in USAGE_METRICS[2:]),
)
#: The success rate beside the rate over the games played: excluded games counted as failures.
WITH_EXCLUDED = METRIC["success_rate_with_excluded"].label


def _with_usage(groups: Sequence[dict[str, Any]]) -> bool:
    return any(g.get("input_tokens") is not None for g in groups)


def _usage_cells(g: dict[str, Any]) -> list[str]:
    """A group's usage: tokens, cost, cost per success (per solved episode in AGI Maze),
    fallbacks, outages, quirks."""
    tokens = (
        "–" if g.get("input_tokens") is None else f"{g['input_tokens']:,}/{g['output_tokens']:,}"
    )
    quirks = ", ".join(f"{k} {v}" for k, v in (g.get("quirks") or {}).items()) or "–"
    return [
        tokens,
        _money(g.get("cost_usd"), g.get("cost_status")),
        _money(g.get("cost_per_success"), g.get("cost_status")),
        str(g.get("fallbacks") or 0),
        str(g.get("outages") or 0),
        quirks,
        str(g.get("history_trims") or 0),
        str(g.get("cap_breaches") or 0),
    ]


def _with_excluded(g: dict[str, Any], name: str, successes: int, games: int) -> str:
    """The rate counting the excluded games as failures (``–`` when none was excluded: it is
    the rate beside it)."""
    excluded = int(g.get("excluded") or 0)
    if not excluded:
        return "–"
    low, high = g.get(f"{name}_with_excluded_low"), g.get(f"{name}_with_excluded_high")
    return _rate(successes, games + excluded, low, high)


#: The means of the Maze Escape table, from :data:`maze_envs.metrics.METRICS` (each a mean over
#: games with its bootstrap interval in the results).
ESCAPE_REPORT_MEANS: Final = tuple(
    m for m in metrics_for("report", "escape") if m.interval == "bootstrap"
)


def _mean_cell(metric: Metric, estimate: dict[str, Any]) -> str:
    """A metric's mean over a group, in its unit (with its interval when its label says so)."""
    if "(95% CI)" in metric.label:
        return _interval(estimate)
    if metric.unit == "share":
        return _percent(estimate["mean"])
    digits = {"bytes": 0, "ratio": 2}.get(metric.unit, 1)
    return _num(estimate["mean"], digits)


def escape_table(groups: Sequence[dict[str, Any]]) -> str:
    """The Maze Escape table: one line per setup, size and policy."""
    with_usage = _with_usage(groups)
    header = [
        "setup",
        "size",
        "policy",
        "team success (95% CI)",
        "excluded",
        WITH_EXCLUDED.replace("success", "team success"),
        *(m.label for m in ESCAPE_REPORT_MEANS),
    ]
    if with_usage:
        header += USAGE_HEADER
    lines = []
    for g in groups:
        cells = [
            g["setup"],
            g["size"],
            _policy(g),
            _rate(g["successes"], g["games"], g["success_low"], g["success_high"]),
            _excluded(g),
            _with_excluded(g, "success_rate", g["successes"], g["games"]),
            *(_mean_cell(m, g[m.column("results")]) for m in ESCAPE_REPORT_MEANS),
        ]
        if with_usage:
            cells += _usage_cells(g)
        lines.append(cells)
    return table(header, lines)


def agimaze_stage_table(stages: Sequence[dict[str, Any]]) -> str:
    """Per stage, laid out like the AGI Maze benchmark's calibration table (rates in %)."""
    header = [
        "Family",
        "Stage",
        "Size",
        "soft/hard",
        "policy",
        "episodes",
        "success",
        "good",
        "late",
        "solved (budget)",
        "RHAE70 (95% CI)",
        "RHAE60",
        "RHAE80",
        "step fraction",
        "random, real",
    ]
    with_usage = _with_usage(stages)
    if with_usage:  # "cost / success": per solved episode, as the level tables say
        header += [c.replace("success", "solved") for c in USAGE_HEADER]
    header += ["excluded", WITH_EXCLUDED.replace("success", "solved")]
    lines = []
    for s in stages:
        real = s.get("real_random_success_pct")
        family = (
            s["family"]
            if s["group"] in {"TRAINING", s["family"]}
            else f"{s['group']}/{s['family']}"
        )
        lines.append(
            [
                family,
                s["stage"],
                str(s.get("size") or "–"),
                f"{s.get('soft_good_steps')}/{s.get('max_steps')}",
                _policy(s),
                str(s["episodes"]),
                _share(s["success_pct"]),
                _share(s["good_pct"]),
                _share(s["late_pct"]),
                _rate(s["solved"], s["episodes"], s["solved_low"], s["solved_high"]),
                _interval(s["rhae70"], 3),
                _num(s["rhae60"], 3),
                _num(s["rhae80"], 3),
                _num(s["step_fraction"]["mean"]),
                "–" if real is None else f"{real:.1f}",
                *(_usage_cells(s) if with_usage else []),
                _excluded(s),
                _with_excluded(s, "solved_rate", s["solved"], s["episodes"]),
            ]
        )
    return table(header, lines)


def agimaze_level_table(groups: Sequence[dict[str, Any]], level: str) -> str:
    """Per pack family, group or overall: the same scores without the stage's budget columns."""
    names = {"family": ["Group", "Family"], "group": ["Group"], "overall": []}[level]
    header = [
        *names,
        "policy",
        "episodes",
        "success %",
        "good %",
        "late %",
        "x1-solved",
        "solved (budget)",
        "RHAE70 (95% CI)",
        "RHAE60",
        "RHAE80",
        "step fraction (95% CI)",
    ]
    with_usage = _with_usage(groups)
    header += (
        [c.replace("success", "solved") for c in USAGE_HEADER] if with_usage else ["cost / solved"]
    )
    header += ["excluded", WITH_EXCLUDED.replace("success", "solved")]
    lines = []
    for g in groups:
        where = (
            [g["group"], g["family"]]
            if level == "family"
            else [g["group"]]
            if level == "group"
            else []
        )
        lines.append(
            [
                *where,
                _policy(g),
                str(g["episodes"]),
                _share(g["success_pct"]),
                _share(g["good_pct"]),
                _share(g["late_pct"]),
                str(g["x1_solved"]),
                _rate(g["solved"], g["episodes"], g["solved_low"], g["solved_high"]),
                _interval(g["rhae70"], 3),
                _num(g["rhae60"], 3),
                _num(g["rhae80"], 3),
                _interval(g["step_fraction"]),
                *(
                    _usage_cells(g)
                    if with_usage
                    else [_money(g["cost_per_success"], g["cost_status"])]
                ),
                _excluded(g),
                _with_excluded(g, "solved_rate", g["solved"], g["episodes"]),
            ]
        )
    return table(header, lines)


def _by_setup(groups: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for group in groups:
        out.setdefault(group["setup"], []).append(group)
    return out


NOTES = {
    "escape": (
        "Team success: every agent visited the exit. "
        + " ".join(m.plain_legend for m in ESCAPE_REPORT_MEANS)
        + " STAYs and radio messages are the team's, per game. "
        "Rates and means are over the games played: "
        "'excluded' games (an outage touched them, or a cap stopped them) are counted apart, "
        "not as failures, and the rate counting them as failures is beside it (long, failing "
        "games are the likeliest to meet an outage or a cap: the truth lies between the two); "
        "tokens and cost include them. "
        + " ".join(m.plain_legend for m in USAGE_METRICS)
        + " Intervals: Wilson "
        "(rates) and seeded bootstrap (means), 95 %; a mean over one game, or over equal "
        "values, has no interval (n shown)."
    ),
    "agimaze": (
        "success / good / late (%, the AGI Maze benchmark's convention): solved within "
        "hard_max_steps (= max_steps) / within soft_good_steps (half of it) / after soft but "
        "within hard. Solved (budget): within the evaluation budget (budget factor x "
        "max_steps). RHAE70 = min(1, (0.7 max_steps / steps)^2) when solved, else 0. "
        "'random, real': the real benchmark's random-agent success on that TRAINING stage. "
        "Rates and means are over the episodes played: 'excluded' episodes (an outage touched "
        "them, or a cap stopped them) are counted apart, not as failures; the solved rate "
        "counting them as failures is beside it. History trims: decisions whose history was "
        "cut to fit the context window (the model did not see the whole episode)."
    ),
}


@dataclass(frozen=True)
class Part:
    """One part of a run's summary: a heading (``level`` 1-3), a paragraph (0) or a table.

    A table's ``games`` give, per line, the row fields that pick that line's games out of
    the run's rows (:func:`games_of`), so the front page can link each line to its games.
    """

    text: str
    level: int = 0
    games: tuple[dict[str, Any], ...] = ()

    @property
    def table(self) -> Table | None:
        return self.text if isinstance(self.text, Table) else None

    def markdown(self) -> str:
        return f"{'#' * self.level} {self.text}" if self.level else str(self.text)


def games_of(rows: Iterable[Row], key: dict[str, Any]) -> list[Row]:
    """The rows whose fields equal every item of ``key`` (a table line's :attr:`Part.games`)."""
    return [row for row in rows if all(row.get(k) == v for k, v in key.items())]


def line_keys(
    groups: Sequence[dict[str, Any]], columns: Sequence[str]
) -> tuple[dict[str, Any], ...]:
    """Per summary group (a table line), the row fields that pick its games out."""
    return tuple({"env": g["env"], **{c: g[c] for c in columns}} for g in groups)


def escape_section(escape: Sequence[Row]) -> list[Part]:
    """The report's Maze Escape section."""
    return [
        Part("Maze Escape", 2),
        Part(escape_table(escape), games=line_keys(escape, ("setup", "size", "policy"))),
        Part(NOTES["escape"]),
    ]


def agimaze_tables(agimaze: dict[str, Any]) -> list[Part]:
    """The report's AGI Maze section: per stage, then per family, group and overall."""
    if not agimaze.get("stage"):
        return []
    parts = [Part("AGI Maze", 2)]
    for setup, stages in _by_setup(agimaze["stage"]).items():
        stage_columns = ("setup", "policy", *AGIMAZE_LEVELS["stage"])
        parts += [
            Part(f"{setup}: per stage", 3),
            Part(agimaze_stage_table(stages), games=line_keys(stages, stage_columns)),
        ]
    for level in ("family", "group", "overall"):
        groups = agimaze.get(level) or []
        columns = ("setup", "policy", *AGIMAZE_LEVELS[level])
        for setup, part in _by_setup(groups).items():
            heading = "overall" if level == "overall" else f"per {level}"
            parts += [
                Part(f"{setup}: {heading}", 3),
                Part(agimaze_level_table(part, level), games=line_keys(part, columns)),
            ]
    parts.append(Part(NOTES["agimaze"]))
    return parts


def sections(experiment: dict[str, Any], summary: dict[str, Any]) -> list[Part]:
    """The parts of a run's summary, in order: what ``summary.md`` and ``index.html`` show:
    each environment setup's section (its setup class's report), in the order of the table of
    environments."""
    from maze_envs.bench.spec import setup_classes

    parts = [Part(str(experiment.get("name", "experiment")), 1)]
    if experiment.get("description"):
        parts.append(Part(str(experiment["description"])))
    for cls in setup_classes().values():
        parts += cls.sections(summary.get(cls.table))
    return parts


def markdown(experiment: dict[str, Any], summary: dict[str, Any]) -> str:
    """The Markdown summary of a run."""
    return "\n\n".join(part.markdown() for part in sections(experiment, summary)) + "\n"


def stop_reasons(rows: Sequence[dict[str, Any]]) -> str:
    """Why the stopped games stopped, by kind (:func:`maze_envs.metrics.stop_kind`):
    ``" (context 2, run cap 1)"``, or ``""`` when none stopped.

    >>> stop_reasons([{"status": "stopped", "stop_reason": "A: config: the server rejects"},
    ...               {"status": "stopped", "stop_reason": "run cap: token cap of the run"}])
    ' (config 1, run cap 1)'
    """
    kinds = Counter(
        stop_kind(r.get("stop_reason")) or "other" for r in rows if r.get("status") == "stopped"
    )
    if not kinds:
        return ""
    return " (" + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) + ")"


#: The advice closing an outage report.
OUTAGE_ADVICE = (
    "those games are reported apart (status outage), not as failures; check the server, "
    "the port and the key, then run again with --resume --retry-outages to play them"
)


def outage_report(rows: Sequence[dict[str, Any]]) -> str | None:
    """What a run's outages were, or None without any: which model at which endpoint could not
    be reached, why, and how many decisions of how many games were outages."""
    hit = [r for r in rows if r.get("outages")]
    if not hit:
        return None
    models: dict[tuple[str, str], dict[str, Any]] = {}
    for row in hit:
        detail = row.get("outage") or {}
        model = str(detail.get("model") or row.get("policy"))
        endpoint = str(detail.get("endpoint") or "its default endpoint")
        entry = models.setdefault(
            (model, endpoint), {"games": 0, "outages": 0, "decisions": 0, "error": None}
        )
        entry["games"] += 1
        entry["outages"] += int(row.get("outages") or 0)
        entry["decisions"] += int(row.get("decisions") or 0)
        entry["error"] = entry["error"] or detail.get("error")
    lines = []
    for (model, endpoint), entry in models.items():
        lines.append(
            f"model {model} at {endpoint} could not be reached: {entry['outages']} of "
            f"{entry['decisions']} decisions in {entry['games']} game(s) were outages"
            + (f" (first error: {entry['error']})" if entry["error"] else "")
        )
    lines.append(OUTAGE_ADVICE)
    return "\n".join(lines)
