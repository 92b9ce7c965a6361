"""Aggregates of a run's rows, with their uncertainty.

Rows are grouped into **arms** (a setup and a policy entry) and, within an arm, by maze size
(Maze Escape) or by AGI Maze stage, pack family and pack group. Every rate comes with its Wilson
interval and every mean with a seeded bootstrap interval (:mod:`maze_envs.bench.stats`; none for
a single value or values that are all equal), so a single game is never presented as an effect.

**Games played.** Rates and means of outcomes and behaviour are over the games the policies
actually played (status ``ok`` or ``error``, :func:`maze_envs.metrics.is_played`): a game that an
outage touched (``outage``) or a cap stopped (``stopped``) is not a failure of the policy, so it
is counted apart (``excluded``, with ``outage_games`` and ``stopped_games``). Because long
(failing) games are the likeliest to meet an outage or a cap, the success rate is also given
counting the excluded games as failures (``success_rate_with_excluded``, ``solved_rate_with_
excluded``, with their Wilson intervals), beside the rate without them. Tokens and cost are over
every game (they were spent); cost per success divides them by the successes. What the model
saw and wrote is summed too: ``history_trims`` (decisions whose history was cut to fit the
context window), ``cap_breaches`` (replies over the output cap) and ``truncations`` (replies cut
at it).

Maze Escape, per (setup, size, policy): games, successes and the success rate, the team finish
turn and finish / fastest possible finish over the successful games, the censored finish ratio
over all games (a failure counts as ``max_turns`` / fastest, a lower bound of its true ratio),
first agent out, wall-move rate, STAY count, radio messages, notebook bytes, and, when policies
report them, tokens, cost and cost per team success (the cost of every game of the group,
failures included, divided by the successes).

AGI Maze, per (setup, policy) and stage / family / group: episodes, solved within the evaluation
budget (Wilson), x1-solved, the benchmark's success / good / late (in %, as its calibration table
reports them), RHAE70 (bootstrap) with RHAE60 and RHAE80, step fraction and steps; TRAINING stages
also carry the real benchmark's random-agent success rate for comparison.

Example:
    >>> rows = [{"env": "escape", "setup": "s", "size": "9x9", "policy": "p", "status": "ok",
    ...          "success": s, "finish_turn": 20 if s else None, "finish_ratio": 2.0 if s else None,
    ...          "finish_ratio_censored": 2.0 if s else 5.0, "privileged": False}
    ...         for s in (True, True, False)]
    >>> (group,) = escape_summary(rows)
    >>> group["games"], group["successes"], round(group["success_rate"], 3)
    (3, 2, 0.667)
    >>> group["finish_ratio"]["mean"], group["finish_ratio_censored"]["mean"]
    (2.0, 3.0)
    >>> rows.append({**rows[2], "status": "outage"})
    >>> (group,) = escape_summary(rows)
    >>> group["games"], group["excluded"], group["outage_games"]
    (3, 1, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from maze_envs.bench.stats import Estimate, bootstrap_mean, bootstrap_ratio, wilson_interval
from maze_envs.metrics import is_played, metrics_for, success_rate_counting_excluded

Row = dict[str, Any]
Summary = dict[str, Any]

#: Maze Escape means reported per group, with a bootstrap interval: column -> over which games
#: (the rows of :data:`maze_envs.metrics.METRICS` the results show for Maze Escape).
ESCAPE_MEANS: dict[str, str] = {
    m.column("results"): m.over
    for m in metrics_for("results", "escape")
    if m.interval == "bootstrap"
}
#: AGI Maze levels of aggregation, each a tuple of row columns below (setup, policy).
AGIMAZE_LEVELS: dict[str, tuple[str, ...]] = {
    "stage": ("group", "family", "stage"),
    "family": ("group", "family"),
    "group": ("group",),
    "overall": (),
}


def _groups(
    rows: Iterable[Row], key: Callable[[Row], tuple[Any, ...]]
) -> dict[tuple[Any, ...], list[Row]]:
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def played(rows: Iterable[Row]) -> list[Row]:
    """The rows of games the policies played (:func:`maze_envs.metrics.is_played`; a row
    without a status counts as played)."""
    return [row for row in rows if is_played(row.get("status", "ok"))]


def excluded_counts(rows: Sequence[Row]) -> dict[str, int]:
    """How many games of a group are counted apart: ``excluded`` in all, ``outage_games``
    (an outage touched them) and ``stopped_games`` (a cap stopped them)."""
    outage = sum(1 for r in rows if r.get("status") == "outage")
    stopped = sum(1 for r in rows if r.get("status") == "stopped")
    return {"excluded": outage + stopped, "outage_games": outage, "stopped_games": stopped}


def _estimate(rows: Sequence[Row], column: str) -> Estimate:
    return bootstrap_mean([r[column] for r in rows if r.get(column) is not None])


def _rate(successes: int, trials: int) -> dict[str, Any]:
    low, high = wilson_interval(successes, trials)
    return {"rate": successes / trials if trials else None, "low": low, "high": high}


def rate_with_excluded(successes: int, played: int, excluded: int, name: str) -> dict[str, Any]:
    """The rate counting excluded games as failures
    (:func:`maze_envs.metrics.success_rate_counting_excluded`) with its Wilson interval, as
    ``<name>_with_excluded``, ``_low``, ``_high``."""
    low, high = wilson_interval(successes, played + excluded)
    rate = success_rate_counting_excluded(successes, played, excluded)
    return {
        f"{name}_with_excluded": rate,
        f"{name}_with_excluded_low": low,
        f"{name}_with_excluded_high": high,
    }


def usage_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """Tokens, cost and quirks of a group of games (cost None when any price is unknown)."""
    reported = [r for r in rows if r.get("input_tokens") is not None]
    statuses = {r.get("cost_status") for r in rows}
    unknown = "unknown" in statuses
    priced = [r["cost_usd"] for r in rows if r.get("cost_usd") is not None]
    cost = None if unknown or not priced else float(sum(priced))
    quirks: dict[str, int] = {}
    for row in rows:
        for name, count in (row.get("quirks") or {}).items():
            quirks[name] = quirks.get(name, 0) + int(count)
    # local models cost 0 by definition: a group of only local games says "local", not "priced"
    status = (
        "unknown"
        if unknown
        else "priced"
        if "priced" in statuses
        else "local"
        if "local" in statuses
        else "priced"
        if priced
        else "none"
    )
    return {
        "input_tokens": sum(r["input_tokens"] for r in reported) if reported else None,
        "output_tokens": sum(r["output_tokens"] or 0 for r in reported) if reported else None,
        "cost_usd": cost,
        "cost_status": status,
        "fallbacks": sum(int(r.get("fallbacks") or 0) for r in rows),
        "outages": sum(int(r.get("outages") or 0) for r in rows),
        "quirks": dict(sorted(quirks.items())),
        # what the model saw and wrote (maze_envs.metrics.history_trims, cap_breaches...)
        "history_trims": sum(int(r.get("history_trims") or 0) for r in rows),
        "cap_breaches": sum(int(r.get("cap_breaches") or 0) for r in rows),
        "truncations": sum(int(r.get("truncations") or 0) for r in rows),
    }


def escape_summary(rows: Iterable[Row]) -> list[Summary]:
    """One summary per (setup, size, policy) of the Maze Escape rows, in first-seen order."""
    escape = [r for r in rows if r.get("env") == "escape"]
    out: list[Summary] = []
    for (setup, size, policy), everything in _groups(
        escape, lambda r: (r["setup"], r["size"], r["policy"])
    ).items():
        group = played(everything)
        games = len(group)
        successes = sum(1 for r in group if r.get("success"))
        rate = _rate(successes, games)
        usage = usage_summary(everything)
        cost = usage["cost_usd"]
        summary: Summary = {
            "env": "escape",
            "setup": setup,
            "size": size,
            "policy": policy,
            "privileged": any(r.get("privileged") for r in everything),
            "games": games,
            **excluded_counts(everything),
            "errors": sum(1 for r in group if r.get("status") == "error"),
            "successes": successes,
            "success_rate": rate["rate"],
            "success_low": rate["low"],
            "success_high": rate["high"],
        }
        summary.update(rate_with_excluded(successes, games, summary["excluded"], "success_rate"))
        for column in ESCAPE_MEANS:
            summary[column] = _estimate(group, column).to_json()
        summary.update(usage)
        summary["cost_per_success"] = cost / successes if cost is not None and successes else None
        out.append(summary)
    return out


def _training_reference(group: str, family: str, stage: str) -> float | None:
    """The real benchmark's random-agent success (%) of a TRAINING stage (None elsewhere)."""
    if group != "TRAINING":
        return None
    from maze_envs.agimaze.packs.catalog import REAL_CALIBRATION

    for row in REAL_CALIBRATION:
        if row.family == family and row.stage == stage:
            return row.success
    return None


def agimaze_summary(rows: Iterable[Row], level: str = "stage") -> list[Summary]:
    """AGI Maze summaries per (setup, policy) and ``level`` (stage, family, group, overall)."""
    if level not in AGIMAZE_LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(AGIMAZE_LEVELS)}")
    columns = AGIMAZE_LEVELS[level]
    agimaze = [r for r in rows if r.get("env") == "agimaze"]
    out: list[Summary] = []
    grouped = _groups(
        agimaze, lambda r: (r["setup"], r["policy"], *(r.get(c, "") for c in columns))
    )
    for key, everything in grouped.items():
        setup, policy, *where = key
        group = played(everything)
        episodes = len(group)
        solved = sum(1 for r in group if r.get("solved"))
        success = sum(1 for r in group if r.get("success"))
        good = sum(1 for r in group if r.get("good"))
        rate = _rate(solved, episodes)
        summary: Summary = {
            "env": "agimaze",
            "level": level,
            "setup": setup,
            "policy": policy,
            **dict(zip(columns, where, strict=True)),
            "privileged": any(r.get("privileged") for r in everything),
            "episodes": episodes,
            **excluded_counts(everything),
            "errors": sum(1 for r in group if r.get("status") == "error"),
            "solved": solved,
            "solved_rate": rate["rate"],
            "solved_low": rate["low"],
            "solved_high": rate["high"],
            **rate_with_excluded(
                solved, episodes, excluded_counts(everything)["excluded"], "solved_rate"
            ),
            "x1_solved": sum(1 for r in group if r.get("x1_solved")),
            "success_pct": 100 * success / episodes if episodes else None,
            "good_pct": 100 * good / episodes if episodes else None,
            "late_pct": 100 * (success - good) / episodes if episodes else None,
            "rhae70": _estimate(group, "rhae70").to_json(),
            "rhae60": _estimate(group, "rhae60").mean,
            "rhae80": _estimate(group, "rhae80").mean,
            "step_fraction": _estimate(group, "step_fraction").to_json(),
            "steps": _estimate(group, "steps").mean,
        }
        if level == "stage":
            first = everything[0]
            summary["size"] = first.get("size")
            summary["soft_good_steps"] = first.get("soft_good_steps")
            summary["max_steps"] = first.get("max_steps")
            summary["real_random_success_pct"] = _training_reference(*where)
        usage = usage_summary(everything)
        summary.update(usage)
        cost = usage["cost_usd"]
        summary["cost_per_success"] = cost / solved if cost is not None and solved else None
        out.append(summary)
    return out


def paired_difference(
    rows: Iterable[Row],
    first: tuple[str, str],
    second: tuple[str, str],
    column: str,
    by: str | None = "size",
) -> dict[str, Estimate]:
    """Per ``by`` value, the mean of ``column`` in arm ``first`` minus arm ``second``, paired.

    Arms are ``(setup, policy)``. Two games pair up when they share ``by`` and the seed (the
    same maze when the setups differ only in what the agents may do, such as the radio), so
    the maze's own difficulty cancels out; the interval is the bootstrap one of the paired
    differences. Pairs where either value is missing, or either game was not played (an outage
    or a cap ended it), are left out. ``by=None`` pools every case into one group, ``"all"``
    (games still pair up only on the same case, e.g. maze size, and seed).
    """
    differences = {
        group: [float(a) - float(b) for a, b in pairs]
        for group, pairs in _pairs(rows, first, second, column, by).items()
    }
    return {group: bootstrap_mean(diffs) for group, diffs in differences.items()}


def paired_ratio(
    rows: Iterable[Row],
    first: tuple[str, str],
    second: tuple[str, str],
    column: str = "finish_turn",
    by: str | None = "size",
) -> dict[str, Estimate]:
    """Per ``by`` value, how many times larger ``column`` is in arm ``second`` than in arm
    ``first``: the ratio of its means over the same pairs as :func:`paired_difference`
    (``mean(second) / mean(first)``; with ``finish_turn``, how many times faster ``first``
    finishes), with a bootstrap interval over pairs."""
    return {
        group: bootstrap_ratio([b for _, b in pairs], [a for a, _ in pairs])
        for group, pairs in _pairs(rows, first, second, column, by).items()
    }


def _pairs(
    rows: Iterable[Row],
    first: tuple[str, str],
    second: tuple[str, str],
    column: str,
    by: str | None,
) -> dict[Any, list[tuple[float, float]]]:
    """Per ``by`` value (``"all"`` when None), the (first, second) values of ``column`` of
    games paired by ``by`` (or case) and seed."""
    on = by or "case"
    values: dict[tuple[str, str], dict[tuple[Any, int], Any]] = {first: {}, second: {}}
    for row in played(rows):
        arm = (str(row.get("setup")), str(row.get("policy")))
        if arm in values:
            values[arm][(row.get(on), int(row.get("seed") or 0))] = row.get(column)
    pairs: dict[Any, list[tuple[float, float]]] = {}
    for (group, seed), a in values[first].items():
        b = values[second].get((group, seed))
        if a is not None and b is not None:
            pairs.setdefault(group if by else "all", []).append((float(a), float(b)))
    return pairs


def agimaze_levels(rows: Iterable[Row]) -> dict[str, list[Summary]]:
    """The AGI Maze summaries at every level of :data:`AGIMAZE_LEVELS`."""
    rows = list(rows)
    return {level: agimaze_summary(rows, level) for level in AGIMAZE_LEVELS}


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    """Every aggregate of a run, one entry per environment setup of the table of environments
    (``escape``: Maze Escape groups, ``agimaze``: AGI Maze at each level, ``agimaze_set``:
    labyrinth sets), each by its setup class's summary."""
    from maze_envs.bench.spec import setup_classes

    return {cls.table: cls.summarize(rows) for cls in setup_classes().values()}
