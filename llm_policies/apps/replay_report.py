"""What a decision replay reports: its figures, one function each, and the side-by-side table.

A replay compares like with like: a figure over recorded and replayed decisions uses only the
decisions whose recorded *and* replayed status is ``ok`` (:func:`comparable`). A recorded
fallback or outage was not the model's play (an outage plays STAY, a move the model never
chose), and a replayed one is no answer to compare; they are counted apart, by side and status
(:func:`excluded`), never mixed into a rate. Full games count the same way: their wall-move
rate is over the decisions the model played (status ``ok``).

Definitions (each with its Wilson 95% interval in the report):

* :func:`agreement_rate`: the share of comparable decisions whose replayed action equals the
  recorded one;
* :func:`wall_move_rate`: :func:`maze_envs.metrics.wall_move_rate`, the number the benchmark
  results and ``maze-envs analyze`` report: wall moves / moves tried (STAY is no move tried);
  a replayed move is a wall move when it goes through a side of the agent's cell that is not
  ``open`` (:func:`maze_envs.metrics.escape_kind_of_move`, what the engine reports for a played
  move).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from maze_envs import metrics
from maze_envs.bench.stats import wilson_interval
from maze_envs.metrics import METRIC


@dataclass
class ReplayedDecision:
    """One decision, recorded and replayed: the actions, the statuses, the wall moves."""

    game_id: int
    turn: int
    agent: str
    recorded: str | None
    replayed: str | None
    status: str
    #: the kind of each side's move (:data:`maze_envs.metrics.Kind`; None: move or cell unknown)
    recorded_kind: str | None
    replayed_kind: str | None
    quirks: dict[str, int] = field(default_factory=dict)
    recorded_status: str = "ok"


def comparable(decisions: Iterable[ReplayedDecision]) -> list[ReplayedDecision]:
    """The decisions both sides played: recorded status ``ok`` and replayed status ``ok``."""
    return [d for d in decisions if d.status == "ok" and d.recorded_status == "ok"]


def excluded(decisions: Iterable[ReplayedDecision]) -> dict[str, int]:
    """The decisions left out of every rate, by side and status.

    >>> excluded([ReplayedDecision(1, 0, "A", "STAY", "N", "ok", "stay", "move", {}, "outage")])
    {'recorded outage': 1}
    """
    counts: Counter[str] = Counter()
    for d in decisions:
        if d.recorded_status != "ok":
            counts[f"recorded {d.recorded_status}"] += 1
        if d.status != "ok":
            counts[f"replayed {d.status}"] += 1
    return dict(sorted(counts.items()))


def agreement_rate(decisions: Iterable[ReplayedDecision]) -> tuple[int, int]:
    """(agreeing, compared): comparable decisions whose replayed action is the recorded one."""
    pairs = [d for d in comparable(decisions) if d.recorded is not None]
    return sum(d.recorded == d.replayed for d in pairs), len(pairs)


def wall_move_rate(kinds: Iterable[str | None]) -> tuple[int, int]:
    """(wall moves, moves tried) of the decisions' move kinds, as
    :func:`maze_envs.metrics.wall_move_rate` counts them (None: move or cell unknown, not
    counted).

    >>> wall_move_rate(["wall", "move", "stay", None])
    (1, 2)
    """
    steps = [metrics.Step(kind) for kind in kinds if kind is not None]  # type: ignore[arg-type]
    return metrics.wall_moves(steps), metrics.moves_tried(steps)


def rate_json(hits: int, n: int) -> dict[str, Any]:
    """A rate with its Wilson 95% interval (``None`` values when nothing was scored)."""
    low, high = wilson_interval(hits, n)
    return {"rate": hits / n if n else None, "low": low, "high": high, "hits": hits, "n": n}


def _pct(hits: int, n: int) -> str:
    if not n:
        return "n/a"
    low, high = wilson_interval(hits, n)
    return f"{100 * hits / n:.1f}% [{100 * (low or 0):.1f}, {100 * (high or 0):.1f}] (n={n})"


@dataclass
class FullGameSummary:
    """Full games of a journal: decisions, wall-move rate over played ones, fallbacks, wins."""

    journal: str
    games: int = 0
    successes: int = 0
    decisions: int = 0
    played: int = 0
    moves_tried: int = 0
    wall_moves: int = 0
    bumps: int = 0
    fallbacks: int = 0
    outages: int = 0
    quirks: dict[str, int] = field(default_factory=dict)

    @property
    def wall_move_rate(self) -> float | None:
        """:func:`maze_envs.metrics.wall_move_rate` over the played decisions (fallbacks and
        outages left out)."""
        return metrics.wall_move_rate(self.wall_moves, self.moves_tried)

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "wall_move_rate": self.wall_move_rate,
            "wall_move": rate_json(self.wall_moves, self.moves_tried),
        }


@dataclass
class ReplayReport:
    """Replayed decisions beside the recorded ones and, optionally, full games."""

    source: str
    model: str
    settings: dict[str, Any]
    decisions: list[ReplayedDecision]
    full_games: FullGameSummary | None = None
    recorded_games: FullGameSummary | None = None

    def _wall(self, side: str) -> tuple[int, int]:
        return wall_move_rate(getattr(d, f"{side}_kind") for d in comparable(self.decisions))

    @property
    def agreement(self) -> float | None:
        """:func:`agreement_rate` as a share (``None``: nothing to compare)."""
        hits, n = agreement_rate(self.decisions)
        return hits / n if n else None

    @property
    def recorded_wall_rate(self) -> float | None:
        hits, n = self._wall("recorded")
        return hits / n if n else None

    @property
    def replayed_wall_rate(self) -> float | None:
        hits, n = self._wall("replayed")
        return hits / n if n else None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "model": self.model,
            "settings": self.settings,
            "decisions": len(self.decisions),
            "compared": len(comparable(self.decisions)),
            "excluded": excluded(self.decisions),
            "agreement": self.agreement,
            "agreement_interval": rate_json(*agreement_rate(self.decisions)),
            "recorded_wall_rate": self.recorded_wall_rate,
            "recorded_wall_interval": rate_json(*self._wall("recorded")),
            "replayed_wall_rate": self.replayed_wall_rate,
            "replayed_wall_interval": rate_json(*self._wall("replayed")),
            "statuses": dict(Counter(d.status for d in self.decisions)),
            "recorded_statuses": dict(Counter(d.recorded_status for d in self.decisions)),
            "quirks": dict(sum((Counter(d.quirks) for d in self.decisions), Counter())),
            "full_games": None if self.full_games is None else self.full_games.to_json(),
            "recorded_games": (
                None if self.recorded_games is None else self.recorded_games.to_json()
            ),
            "per_decision": [asdict(d) for d in self.decisions],
        }

    def to_markdown(self) -> str:
        """The side-by-side table: replayed decisions, and full games with the same settings."""
        decisions = self.decisions
        compared = len(comparable(decisions))
        recorded = Counter(d.recorded_status for d in decisions)
        replayed = Counter(d.status for d in decisions)
        settings = ", ".join(f"{k}={v}" for k, v in self.settings.items()) or "no changes"
        lines = [
            f"# Decision replay of {self.source}",
            "",
            f"Model {self.model}; the recorded settings, changed: {settings}.",
            "",
            f"| | {METRIC['decisions'].label} | compared | {METRIC['wall_move_rate'].label} "
            f"(95% CI) | agreement with recorded (95% CI) | {METRIC['fallbacks'].label} | "
            f"{METRIC['outages'].label} |",
            "|---|---|---|---|---|---|---|",
            f"| recorded decisions | {len(decisions)} | {compared} | "
            f"{_pct(*self._wall('recorded'))} | - | {recorded.get('fallback', 0)} | "
            f"{recorded.get('outage', 0)} |",
            f"| replayed decisions | {len(decisions)} | {compared} | "
            f"{_pct(*self._wall('replayed'))} | {_pct(*agreement_rate(decisions))} | "
            f"{replayed.get('fallback', 0)} | {replayed.get('outage', 0)} |",
        ]
        for label, summary in (
            ("recorded full games", self.recorded_games),
            ("full games, new settings", self.full_games),
        ):
            if summary is not None:
                lines.append(
                    f"| {label} ({summary.games} games, {summary.successes} won) | "
                    f"{summary.decisions} | {summary.played} | "
                    f"{_pct(summary.wall_moves, summary.moves_tried)} | - | "
                    f"{summary.fallbacks} | {summary.outages} |"
                )
        lines += [
            "",
            "Rates compare like with like: only decisions the model played on both sides "
            "(recorded and replayed status ok) are compared; fallbacks and outages (a fallback "
            "plays STAY, a move the model never chose) are counted apart"
            + (
                ": " + ", ".join(f"{k} {v}" for k, v in excluded(decisions).items()) + "."
                if excluded(decisions)
                else "."
            ),
        ]
        if self.full_games is None:
            lines += [
                "",
                "No full games with these settings were given (--full-games): a replay tests "
                "independent decisions, while in a game each reply shapes the next prompt, so "
                "the two can disagree.",
            ]
        return "\n".join(lines)
