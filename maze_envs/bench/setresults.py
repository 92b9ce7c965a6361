"""Aggregates and tables of labyrinth-set games, as the EnvTraverse evaluation reports them.

Per arm (setup, policy): the number of sets; the set's score, which is its target's (RHAE70 with
a bootstrap interval, RHAE60 and RHAE80, target solved within the budget with a Wilson interval,
x1-solved); and the resource use of the whole set (steps, tutorials included). Per labyrinth of
the set, in order: how often it was solved, its mean RHAE70 and steps, so a curriculum's effect
on each tutorial and on the target can be read off. As for single labyrinths, rates and means are
over the sets the policy played (:func:`maze_envs.bench.results.played`): sets an outage touched
or a cap stopped are counted apart (``excluded``).

Example:
    >>> rows = [{"env": "agimaze-set", "setup": "s", "policy": "p", "status": "ok", "solved": s,
    ...          "x1_solved": s, "rhae70": 1.0 if s else 0.0, "rhae60": 0.0, "rhae80": 0.0,
    ...          "set_steps": 40, "set_solved": 2 if s else 1,
    ...          "labyrinths": [{"name": "T", "steps": 10, "solved": True, "rhae70": 1.0},
    ...                         {"name": "X", "steps": 30, "solved": s, "rhae70": float(s)}]}
    ...         for s in (True, False)]
    >>> (summary,) = agimaze_set_summary(rows)
    >>> summary["sets"], summary["solved"], summary["rhae70"]["mean"], summary["excluded"]
    (2, 1, 0.5, 0)
    >>> [(lab["name"], lab["solved"]) for lab in summary["labyrinths"]]
    [('T', 2), ('X', 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from maze_envs._registration import latest
from maze_envs.bench.agimaze_spec import AgiMazeSetCase
from maze_envs.bench.results import excluded_counts, played, rate_with_excluded
from maze_envs.bench.stats import bootstrap_mean, describe_estimate, wilson_interval

Row = dict[str, Any]
Summary = dict[str, Any]
#: The ``env`` column of set rows (the set case's kind).
SET_ENV: str = AgiMazeSetCase.model_fields["kind"].default


def _labyrinths(group: Sequence[Row]) -> list[dict[str, Any]]:
    """Per position of the set: name (``target`` when the sets differ there), solved, means."""
    positions: dict[int, list[dict[str, Any]]] = {}
    for row in group:
        for index, lab in enumerate(row.get("labyrinths") or []):
            positions.setdefault(index, []).append(lab)
    out = []
    for index in sorted(positions):
        labs = positions[index]
        names = {lab["name"] for lab in labs}
        out.append(
            {
                "position": index + 1,
                "name": names.pop() if len(names) == 1 else f"target ({len(names)} labyrinths)",
                "played": len(labs),
                "solved": sum(1 for lab in labs if lab.get("solved")),
                "rhae70": bootstrap_mean([float(lab["rhae70"]) for lab in labs]).mean,
                "steps": bootstrap_mean([float(lab["steps"]) for lab in labs]).mean,
            }
        )
    return out


def agimaze_set_summary(rows: Iterable[Row]) -> list[Summary]:
    """One summary per (setup, policy) of the labyrinth-set rows, in first-seen order."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.get("env") == SET_ENV:
            groups.setdefault((row["setup"], row["policy"]), []).append(row)
    out: list[Summary] = []
    for (setup, policy), everything in groups.items():
        group = played(everything)
        sets = len(group)
        solved = sum(1 for r in group if r.get("solved"))
        low, high = wilson_interval(solved, sets)
        apart = excluded_counts(everything)
        out.append(
            {
                "env": SET_ENV,
                "setup": setup,
                "policy": policy,
                "privileged": any(r.get("privileged") for r in everything),
                "sets": sets,
                **apart,
                "errors": sum(1 for r in group if r.get("status") == "error"),
                "solved": solved,
                "solved_rate": solved / sets if sets else None,
                "solved_low": low,
                "solved_high": high,
                **rate_with_excluded(solved, sets, apart["excluded"], "solved_rate"),
                "x1_solved": sum(1 for r in group if r.get("x1_solved")),
                "rhae70": bootstrap_mean([float(r.get("rhae70") or 0.0) for r in group]).to_json(),
                "rhae60": bootstrap_mean([float(r.get("rhae60") or 0.0) for r in group]).mean,
                "rhae80": bootstrap_mean([float(r.get("rhae80") or 0.0) for r in group]).mean,
                "set_steps": bootstrap_mean(
                    [float(r["set_steps"]) for r in group if r.get("set_steps") is not None]
                ).mean,
                "labyrinths": _labyrinths(group),
            }
        )
    return out


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def agimaze_set_tables(summaries: Sequence[Summary]) -> list[str]:
    """Markdown: the sets' scores per arm, then every labyrinth of each arm's sets."""
    from maze_envs.bench.report import table

    def solved(s: Summary) -> str:
        if not s["sets"]:
            return "–"
        low, high = s["solved_low"], s["solved_high"]
        return (
            f"{s['solved']}/{s['sets']} = {100 * s['solved_rate']:.0f}% "
            f"[{100 * low:.1f}, {100 * high:.1f}]"
        )

    def excluded(s: Summary) -> str:
        parts = [
            f"{s[key]} {name}"
            for key, name in (("outage_games", "outage"), ("stopped_games", "stopped"))
            if s.get(key)
        ]
        return f"{s['excluded']} ({', '.join(parts)})" if s.get("excluded") else "0"

    def with_excluded(s: Summary) -> str:
        if not s.get("excluded"):
            return "–"
        games, low, high = (
            s["sets"] + s["excluded"],
            s["solved_rate_with_excluded_low"],
            s["solved_rate_with_excluded_high"],
        )
        share = 100 * s["solved"] / games
        return f"{s['solved']}/{games} = {share:.0f}% [{100 * low:.1f}, {100 * high:.1f}]"

    def policy(s: Summary) -> str:
        return s["policy"] + (" (privileged)" if s.get("privileged") else "")

    scores = table(
        [
            "setup",
            "policy",
            "sets",
            "RHAE70 of the target (95% CI)",
            "RHAE60",
            "RHAE80",
            "target solved (budget, 95% CI)",
            "target x1-solved",
            "steps of the set",
            "excluded",
            "target solved, excluded as failures (95% CI)",
        ],
        [
            [
                s["setup"],
                policy(s),
                str(s["sets"]),
                describe_estimate(s["rhae70"], 3),
                _num(s["rhae60"], 3),
                _num(s["rhae80"], 3),
                solved(s),
                str(s["x1_solved"]),
                _num(s["set_steps"], 1),
                excluded(s),
                with_excluded(s),
            ]
            for s in summaries
        ],
    )
    labyrinths = table(
        ["setup", "policy", "#", "labyrinth", "solved", "mean RHAE70", "mean steps"],
        [
            [
                s["setup"],
                policy(s),
                str(lab["position"]),
                lab["name"],
                f"{lab['solved']}/{lab['played']}",
                _num(lab["rhae70"], 3),
                _num(lab["steps"], 1),
            ]
            for s in summaries
            for lab in s["labyrinths"]
        ],
    )
    return [scores, "Per labyrinth of the set, in order:", labyrinths]


#: What the set tables mean (printed under them).
SET_NOTE = (
    "A set is the tutorials and then one target labyrinth, played in one episode "
    f"({latest('agimaze', labyrinth_set=True).name}). As in the EnvTraverse evaluation only the "
    "target counts for the score: "
    "RHAE70 = min(1, (0.7 max_steps / steps)^2) of the target when solved within the budget, "
    "else 0; steps of the set include the tutorials (resource use). Rates and means are over the "
    "sets played: 'excluded' sets (an outage touched them, or a cap stopped them) are counted "
    "apart."
)


def agimaze_set_section(summaries: Sequence[Summary]) -> list[Any]:
    """The report's section of labyrinth sets (:class:`maze_envs.bench.report.Part`): its
    heading, tables (each line linked to its games) and note."""
    from maze_envs.bench.report import Part, line_keys

    scores, between, labyrinths = agimaze_set_tables(summaries)
    arms = line_keys(summaries, ("setup", "policy"))
    per_labyrinth = tuple(k for s, k in zip(summaries, arms, strict=True) for _ in s["labyrinths"])
    return [
        Part("AGI Maze labyrinth sets", 2),
        Part(scores, games=arms),
        Part(between),
        Part(labyrinths, games=per_labyrinth),
        Part(SET_NOTE),
    ]


__all__ = [
    "SET_ENV",
    "SET_NOTE",
    "agimaze_set_section",
    "agimaze_set_summary",
    "agimaze_set_tables",
]
