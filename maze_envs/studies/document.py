"""A study report (:func:`maze_envs.studies.report.build_report`) laid out as a document.

:func:`sections` turns the report's data into titled sections of paragraphs, bullet lists and
tables of text, which :mod:`maze_envs.studies.render` writes as Markdown and as an HTML page:
the question and how the run was made; the arms (team success, finish / fastest, cost, tokens,
excluded games); the arms per maze size with the fastest possible finish beside each; the paired
comparisons; the behaviour measures and their paired differences; the decision replay beside
full games (when the study has one); the definitions, taken from the functions that define the
metrics. Intervals are 95 % (Wilson for rates, bootstrap otherwise); a mean without spread is
printed with its n and no interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from maze_envs.bench.stats import describe_estimate
from maze_envs.metrics import METRIC


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    title: str
    blocks: list[str | list[str] | Table] = field(default_factory=list)


def rate(arm: dict[str, Any]) -> str:
    """``3/20 (15%) [5–36%]``: team successes of the games played, with the Wilson interval."""
    if not arm["games"]:
        return "– (no game played)"
    text = f"{arm['successes']}/{arm['games']} ({100 * arm['success_rate']:.0f}%)"
    if arm["success_low"] is not None:
        text += f" [{100 * arm['success_low']:.0f}–{100 * arm['success_high']:.0f}%]"
    return text


def estimate(
    value: dict[str, Any] | None, percent: bool = False, digits: int = 2, unit: str = "%"
) -> str:
    """An estimate as text (``mean [low, high]``, or the mean with its n and no interval);
    ``percent`` shows a share in percent (``unit`` ``" pts"`` for a difference of shares)."""
    if not value or value.get("mean") is None:
        return "–"
    if not percent:
        return describe_estimate(value, digits)
    scaled = {
        k: 100 * v if k in ("mean", "low", "high") and v is not None else v
        for k, v in value.items()
    }
    head, _, tail = describe_estimate(scaled, 1).partition(" ")
    return f"{head}{unit} {tail}".rstrip()


def money(value: float | None, status: str) -> str:
    """A sum of dollars; ``$0 (local)`` for local models, ``unknown`` for an unknown price."""
    if status == "local":
        return "$0 (local)"
    if value is None:
        return "unknown" if status == "unknown" else "–"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def money_estimate(value: dict[str, Any] | None, status: str) -> str:
    if status == "local":
        return "$0 (local)"
    if value is None or value.get("mean") is None:
        return "unknown" if status == "unknown" else "–"
    return "$" + describe_estimate(value, 4)


def excluded(arm: dict[str, Any]) -> str:
    """``0``, or ``2 (1 outage, 1 stopped)``."""
    total = int(arm.get("excluded") or 0)
    if not total:
        return "0"
    parts = []
    if arm.get("outage_games"):
        parts.append(f"{arm['outage_games']} outage")
    if arm.get("stopped_games"):
        parts.append(f"{arm['stopped_games']} stopped")
    return f"{total} ({', '.join(parts)})"


def arm_name(arm: dict[str, Any]) -> str:
    return f"{arm['arm']} ({arm['policy']})"


def _arms(report: dict[str, Any]) -> Table:
    header = [
        "arm",
        "games played",
        "excluded",
        "team success [95% CI]",
        "finish / fastest, all games",
        "finish / fastest, successes",
        f"{METRIC['fastest'].label} (turns)",
        "cost",
        "cost per team success",
        "input tok/decision",
        "output tok/decision",
        "cache-read share",
        "requests",
        METRIC["fallbacks"].label,
        "quirks",
    ]
    rows = []
    for arm in report["arms"]:
        m = arm["measures"]
        quirks = ", ".join(f"{k} {v}" for k, v in arm["quirks"].items()) or "–"
        rows.append(
            [
                arm_name(arm),
                str(arm["games"]),
                excluded(arm),
                rate(arm),
                estimate(arm["finish_ratio_censored"]),
                estimate(arm["finish_ratio"]),
                estimate(arm["fastest"], digits=0),
                money(arm["cost_usd"], arm["cost_status"]),
                money_estimate(arm["cost_per_success"], arm["cost_status"]),
                estimate(m.get("input_tokens"), digits=0),
                estimate(m.get("output_tokens"), digits=0),
                estimate(m.get("cache_read_share"), percent=True),
                "–" if arm["requests"] is None else str(arm["requests"]),
                str(arm["fallbacks"]),
                quirks,
            ]
        )
    return Table(header, rows)


def _sizes(report: dict[str, Any]) -> Table:
    header = [
        "size",
        "arm",
        "team success",
        "finish / fastest, all games",
        "finish turn",
        "fastest possible finish",
    ]
    rows = []
    for size in report["sizes"]:
        for arm in report["arms"]:
            at = arm["by_size"].get(size)
            if at is not None:
                rows.append(
                    [
                        size,
                        arm_name(arm),
                        rate(at),
                        estimate(at["finish_ratio_censored"]),
                        estimate(at["finish_turn"], digits=0),
                        estimate(at["fastest"], digits=0),
                    ]
                )
    return Table(header, rows)


def _comparisons(report: dict[str, Any]) -> Table:
    header = [
        "comparison (first minus second, same mazes)",
        "pairs",
        "team success",
        "finish / fastest (a failure counts as the turn limit)",
        "times faster (finish turns)",
        "cost per game",
        "reading",
    ]
    rows = []
    for pair in report["comparisons"]:
        faster, cost = pair["times_faster"], pair["cost_usd"]
        rows.append(
            [
                pair["name"],
                str(pair["pairs"]),
                estimate(pair["success"], percent=True, unit=" pts"),
                estimate(pair["finish_ratio_censored"]),
                "–" if faster.get("mean") is None else estimate(faster) + "x",
                "–" if cost.get("mean") is None else "$" + estimate(cost, digits=4),
                pair["reading"],
            ]
        )
    return Table(header, rows)


def study_measures(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The measures the study's question is about (the report also has the usage ones)."""
    keys = set(report["study"]["metrics"])
    return [m for m in report["measures"] if m["key"] in keys]


def _behaviour(report: dict[str, Any]) -> list[str | list[str] | Table]:
    measures = study_measures(report)
    if not measures:
        return []
    arms = Table(
        ["arm", *(m["label"] for m in measures)],
        [
            [arm_name(a), *(estimate(a["measures"].get(m["key"]), m["percent"]) for m in measures)]
            for a in report["arms"]
        ],
    )
    blocks: list[str | list[str] | Table] = [arms]
    if report["comparisons"]:
        blocks.append("Paired differences (first minus second; shares per game, in points):")
        blocks.append(
            Table(
                ["comparison", *(m["label"] for m in measures)],
                [
                    [
                        p["name"],
                        *(
                            estimate(p["measures"].get(m["key"]), m["percent"], unit=" pts")
                            for m in measures
                        ),
                    ]
                    for p in report["comparisons"]
                ],
            )
        )
    return blocks


def _share(rate: dict[str, Any] | None) -> str:
    """A replay rate (``{"rate", "low", "high", "n"}``) with its Wilson interval."""
    if not rate or not rate.get("n"):
        return "n/a"
    return (
        f"{100 * rate['rate']:.1f}% [{100 * (rate['low'] or 0):.1f}, "
        f"{100 * (rate['high'] or 0):.1f}] (n={rate['n']})"
    )


def _replay(replay: dict[str, Any]) -> list[str | list[str] | Table]:
    settings = ", ".join(f"{k}={v}" for k, v in (replay.get("settings") or {}).items())
    rows = [
        [
            f"recorded decisions ({replay.get('recorded_arm', '')})",
            str(replay["decisions"]),
            str(replay["compared"]),
            _share(replay.get("recorded_wall_interval")),
            "–",
        ],
        [
            f"the same prompts re-asked ({settings})",
            str(replay["decisions"]),
            str(replay["compared"]),
            _share(replay.get("replayed_wall_interval")),
            _share(replay.get("agreement_interval")),
        ],
    ]
    for label, key in (("recorded full games", "recorded_games"), ("full games", "full_games")):
        games = replay.get(key)
        if games:
            name = replay.get("full_arm", "") if key == "full_games" else replay.get("recorded_arm")
            rows.append(
                [
                    f"{label} ({name}: {games['games']} games, {games['successes']} won)",
                    str(games["decisions"]),
                    str(games["played"]),
                    _share(games.get("wall_move")),
                    "–",
                ]
            )
    excluded_text = ", ".join(f"{k} {v}" for k, v in (replay.get("excluded") or {}).items())
    return [
        f"The recorded prompts of one arm re-asked with {settings or 'no change'}, beside full "
        "games played with those settings. A replay tests independent decisions; in a game each "
        "reply shapes the next prompt, so the two can disagree.",
        Table(
            ["", "decisions", "compared", "wall-move rate [95% CI]", "agreement with recorded"],
            rows,
        ),
        "Rates compare the decisions the model played on both sides; fallbacks and outages are "
        "counted apart" + (f": {excluded_text}." if excluded_text else "."),
    ]


def _run(report: dict[str, Any]) -> list[str]:
    run, apart = report["run"], report["excluded"]
    lines = [
        f"models: {', '.join(run.get('models') or []) or '–'}",
        f"arms: {', '.join(run.get('arms') or [])}",
        f"maze sizes: {', '.join(report['sizes'])}; turn limits: "
        f"{run.get('turns_text', 'as in the study')}; seeds: {run.get('seeds_text', '')}",
        f"games: {report['games']} ({apart['excluded']} excluded: {apart['outage_games']} "
        f"outage, {apart['stopped_games']} stopped)",
    ]
    if run.get("command"):
        lines.append(f"command: {run['command']}")
    if run.get("stand_in"):
        lines.append(
            "a stand-in model played (a scripted player behind the real harness): this run "
            "checks the pipeline; its numbers say nothing about language models"
        )
    return lines


def _definitions(report: dict[str, Any]) -> list[str]:
    lines = [
        "team success: every agent visited the exit; Wilson 95% interval over the games played.",
        "finish / fastest: maze_envs.metrics.finish_ratio_censored over every game played (a "
        "failure counts as the turn limit over the fastest possible finish: a lower bound of its "
        "ratio), and finish_ratio over the successes; the fastest possible finish is the longest "
        "of the agents' shortest paths.",
        "cost per team success: the cost of every game of the arm (failures and excluded games "
        "included) over its team successes.",
        "excluded: games an outage touched or a cap stopped: not the model's play, left out of "
        "every rate and mean of play and of every pair, and counted.",
    ]
    lines += [f"{m['label']} ({m['defined_by']}): {m['definition']}" for m in report["measures"]]
    return lines


def title(report: dict[str, Any]) -> str:
    study = report["study"]
    return f"Study {study['number']}: {study['title']} ({study['name']})"


def sections(report: dict[str, Any]) -> list[Section]:
    """The report as titled sections (see the module docstring)."""
    study = report["study"]
    intro = [f"Question. {study['question']}"]
    if study["finding"]:
        intro.append(f"What the write-up saw. {study['finding']}")
    out = [Section("", list(intro)), Section("This run", [_run(report)])]
    out.append(Section("Arms", [_arms(report)]))
    if len(report["sizes"]) > 1:
        out.append(Section("Per maze size", [_sizes(report)]))
    if report["comparisons"]:
        out.append(Section("Paired comparisons", [_comparisons(report)]))
    behaviour = _behaviour(report)
    if behaviour:
        out.append(Section("Behaviour", behaviour))
    for model, replay in (report.get("replay") or {}).items():
        out.append(Section(f"Decision replay beside full games: {model}", _replay(replay)))
    out.append(Section("Definitions", [_definitions(report)]))
    return out
