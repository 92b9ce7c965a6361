"""A study's report as data: every arm, every paired comparison, the behaviour it asks about.

:func:`build_report` reads a study run (the runner's result rows, and the team rows of
``maze-envs analyze`` for its journal) and computes, with the runner's own statistics
(:mod:`maze_envs.bench.stats`, :mod:`maze_envs.bench.results`):

* per arm (and per arm and maze size when there are several): team success with its Wilson
  interval; finish / fastest possible finish with bootstrap intervals (over every game, a
  failure counting as the turn limit over the fastest, and over successes); the fastest possible
  finish itself; cost (total, per game, per team success: every game's cost over the
  successes); input and output tokens per decision and the cache-read share; requests sent;
  games excluded (outages, stops) and counted; quirks; and the study's behaviour measures
  (:mod:`maze_envs.studies.measures`);
* per comparison (:mod:`maze_envs.studies.pairing`): the number of pairs (the same maze and
  seed in both arms, both games played) and the paired difference, first minus second, of team
  success, finish / fastest, cost and each measure, with bootstrap intervals over pairs, and a
  reading that never says more than the interval does.

Rates and means of play are over the games the policies played (outage and stopped games
apart, and counted); tokens and cost over every game (they were spent).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from maze_envs.bench.metrics import cache_read_share
from maze_envs.bench.results import (
    excluded_counts,
    paired_difference,
    paired_ratio,
    played,
    usage_summary,
)
from maze_envs.bench.stats import Estimate, bootstrap_mean, bootstrap_ratio, wilson_interval
from maze_envs.metrics import is_played
from maze_envs.policies.interface import Usage
from maze_envs.studies.measures import MEASURES, Measure
from maze_envs.studies.pairing import Arm, Pair, comparisons, run_arms
from maze_envs.studies.spec import Study

Row = dict[str, Any]
#: Measures every report shows, whatever the study's question (tokens of a decision).
USAGE_MEASURES: Final = ("input_tokens", "output_tokens", "cache_read_share")
#: The prefix of a measure's per-game value in the report's rows.
MEASURE_PREFIX: Final = "measure:"


@dataclass
class StudyRun:
    """What a study run left: the study, how it was run, its rows and their team metrics."""

    study: Study
    run: dict[str, Any]
    rows: list[Row]
    team: dict[int, dict[str, Any]] = field(default_factory=dict)
    replay: dict[str, Any] | None = None

    @property
    def models(self) -> list[str]:
        return list(self.run.get("models") or [])

    @property
    def arm_names(self) -> list[str]:
        return list(self.run.get("arms") or [arm.name for arm in self.study.arms])


def _estimate(estimate: Estimate) -> dict[str, Any]:
    return estimate.to_json()


def _measures(study: Study) -> list[Measure]:
    keys = list(dict.fromkeys([*study.metrics, *USAGE_MEASURES]))
    return [MEASURES[key] for key in keys]


def with_measures(
    rows: Iterable[Row], team: dict[int, dict[str, Any]], measures: Sequence[Measure]
) -> list[Row]:
    """The rows with each measure's per-game value (``measure:<key>``) and ``success`` as 0/1."""
    out = []
    for row in rows:
        team_row = team.get(row.get("game_id") or -1) or {}
        merged = dict(row)
        merged["won"] = 1.0 if row.get("success") else 0.0
        for measure in measures:
            source = team_row if measure.source == "team" else row
            merged[MEASURE_PREFIX + measure.key] = measure.value(source) if source else None
        out.append(merged)
    return out


def _ratio(rows: Sequence[Row], numerator: str, denominator: str) -> dict[str, Any]:
    pairs = [
        (float(r[numerator]), float(r[denominator]))
        for r in rows
        if isinstance(r.get(numerator), int | float) and isinstance(r.get(denominator), int | float)
    ]
    return _estimate(bootstrap_ratio([a for a, _ in pairs], [b for _, b in pairs]))


def _measure_estimate(
    measure: Measure, rows: Sequence[Row], team: dict[int, dict[str, Any]]
) -> dict[str, Any]:
    chosen = rows if measure.source == "row" and measure.key in USAGE_MEASURES else played(rows)
    if measure.source == "team":
        columns = [team[r["game_id"]] for r in chosen if r.get("game_id") in team]
    else:
        columns = list(chosen)
    if measure.denominator is None:
        values = [
            float(c[measure.numerator]) for c in columns if c.get(measure.numerator) is not None
        ]
        return _estimate(bootstrap_mean(values))
    return _ratio(columns, measure.numerator, measure.denominator)


def arm_summary(
    rows: Sequence[Row], team: dict[int, dict[str, Any]], measures: Sequence[Measure]
) -> dict[str, Any]:
    """Every figure of one arm (or one arm at one size): see the module docstring."""
    games = played(rows)
    wins = sum(1 for r in games if r.get("success"))
    low, high = wilson_interval(wins, len(games))
    usage = usage_summary(rows)
    priced = usage["cost_usd"] is not None
    reported = [r for r in rows if r.get("input_tokens") is not None]
    total = Usage(
        input_tokens=sum(int(r["input_tokens"]) for r in reported),
        cache_read_tokens=sum(int(r.get("cache_read_tokens") or 0) for r in reported),
    )
    # cost per team success: every game's cost over the successes of the games played
    spent = [
        (
            float(r.get("cost_usd") or 0.0),
            1.0 if is_played(r.get("status", "ok")) and r.get("success") else 0.0,
        )
        for r in rows
    ]
    return {
        "games": len(games),
        **excluded_counts(rows),
        "successes": wins,
        "success_rate": wins / len(games) if games else None,
        "success_low": low,
        "success_high": high,
        "finish_ratio_censored": _estimate(
            bootstrap_mean(
                [
                    r["finish_ratio_censored"]
                    for r in games
                    if r.get("finish_ratio_censored") is not None
                ]
            )
        ),
        "finish_ratio": _estimate(
            bootstrap_mean([r["finish_ratio"] for r in games if r.get("finish_ratio") is not None])
        ),
        "finish_turn": _estimate(
            bootstrap_mean([r["finish_turn"] for r in games if r.get("finish_turn") is not None])
        ),
        "fastest": _estimate(
            bootstrap_mean([r["fastest"] for r in games if r.get("fastest") is not None])
        ),
        "cost_usd": usage["cost_usd"],
        "cost_status": usage["cost_status"],
        "cost_per_game": _estimate(bootstrap_mean([float(r.get("cost_usd") or 0.0) for r in rows]))
        if priced
        else None,
        "cost_per_success": _estimate(bootstrap_ratio([c for c, _ in spent], [w for _, w in spent]))
        if priced
        else None,
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "cache_read_share": cache_read_share(total) if reported else None,
        "decisions": sum(int(r.get("decisions") or 0) for r in rows),
        "requests": sum(int(r.get("requests") or 0) for r in reported) if reported else None,
        "fallbacks": usage["fallbacks"],
        "outages": usage["outages"],
        "quirks": usage["quirks"],
        "measures": {m.key: _measure_estimate(m, rows, team) for m in measures},
    }


def reading(estimate: dict[str, Any], first: str, second: str, what: str) -> str:
    """What a paired difference says, in words, never more than its interval supports."""
    if estimate.get("mean") is None:
        return "no pairs"
    low, high = estimate.get("low"), estimate.get("high")
    if low is None or high is None:
        return f"no interval (n={estimate.get('n')}): not a finding"
    if low > 0:
        return f"{first} has the higher {what}"
    if high < 0:
        return f"{second} has the higher {what}"
    return "no clear difference (the interval includes 0)"


def comparison_summary(
    rows: Sequence[Row], pair: Pair, measures: Sequence[Measure]
) -> dict[str, Any]:
    """The paired differences of one comparison (first minus second), pooled over sizes."""

    def diff(column: str) -> dict[str, Any]:
        found = paired_difference(rows, pair.first, pair.second, column, by=None)
        return _estimate(found.get("all", Estimate(None, None, None, 0)))

    success = diff("won")
    faster = paired_ratio(rows, pair.first, pair.second, "finish_turn", by=None)
    by_size = {
        size: _estimate(estimate)
        for size, estimate in paired_difference(
            rows, pair.first, pair.second, "finish_ratio_censored"
        ).items()
    }
    return {
        "first": list(pair.first),
        "second": list(pair.second),
        "name": pair.name,
        "about": pair.about,
        "pairs": success["n"],
        "success": success,
        "finish_ratio_censored": diff("finish_ratio_censored"),
        "finish_ratio_by_size": by_size if len(by_size) > 1 else {},
        "times_faster": _estimate(faster.get("all", Estimate(None, None, None, 0))),
        "cost_usd": diff("cost_usd"),
        "measures": {m.key: diff(MEASURE_PREFIX + m.key) for m in measures},
        "reading": reading(success, pair.first[0], pair.second[0], "team success"),
    }


def _arm_rows(rows: Sequence[Row], arm: Arm) -> list[Row]:
    return [r for r in rows if (r.get("setup"), r.get("policy")) == arm]


def _size_key(size: str) -> tuple[int, int]:
    width, _, height = size.partition("x")
    return (int(width), int(height or width)) if width.isdigit() else (0, 0)


def build_report(run: StudyRun) -> dict[str, Any]:
    """The whole report of a study run, as JSON-able data (the renderers' one input)."""
    study = run.study
    measures = _measures(study)
    rows = with_measures(run.rows, run.team, measures)
    arms = run_arms(study, run.models, run.arm_names)
    sizes = sorted({str(r.get("size")) for r in rows}, key=_size_key)
    arm_reports = []
    for arm in arms:
        mine = _arm_rows(rows, arm)
        arm_reports.append(
            {
                "arm": arm[0],
                "policy": arm[1],
                "about": study.arm(arm[0]).about,
                "model": study.arm(arm[0]).uses_model,
                **arm_summary(mine, run.team, measures),
                "by_size": {
                    size: arm_summary([r for r in mine if r.get("size") == size], run.team, ())
                    for size in sizes
                }
                if len(sizes) > 1
                else {},
            }
        )
    pairs = comparisons(study, run.models, run.arm_names)
    return {
        "study": {
            "name": study.name,
            "number": study.number,
            "title": study.title,
            "question": study.question,
            "finding": study.finding,
            "metrics": list(study.metrics),
        },
        "run": run.run,
        "sizes": sizes,
        "games": len(rows),
        "excluded": excluded_counts(rows),
        "arms": arm_reports,
        "comparisons": [comparison_summary(rows, pair, measures) for pair in pairs],
        "measures": [
            {
                "key": m.key,
                "label": m.label,
                "percent": m.percent,
                "defined_by": m.defined_by,
                "definition": m.definition(),
            }
            for m in measures
        ],
        "replay": run.replay,
    }
