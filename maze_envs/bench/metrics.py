"""Per-game metrics: what one game's row in the results holds.

The tallies read what the environments report each turn, in the form the journal stores it
(per-agent event dicts), so the same code scores a live game and a game read back from a journal.

Maze Escape (:class:`EscapeTally`):
    ``success`` (team success), ``finish_turn`` (the turn of team success, None otherwise),
    ``turns``, ``first_out`` (the first turn any agent reached the exit), ``exit_turns`` (per
    agent), ``agents_out``, ``fastest`` (the fastest possible finish: the longest of the agents'
    shortest paths), ``finish_ratio`` = finish_turn / fastest (successes only),
    ``finish_ratio_censored`` (a failure counts as ``max_turns`` / fastest: a lower bound),
    ``wall_moves`` and ``wall_move_rate`` (moves into a wall / moves tried, STAY excluded),
    ``stays``, ``radio_messages`` (messages sent), ``notebook_bytes`` (UTF-8 bytes in all
    notebooks at the end).

AGI Maze (:func:`agimaze_scores`):
    ``solved`` (within the evaluation budget), ``steps``, ``max_steps`` (the reference budget),
    ``budget`` (budget factor x max_steps), ``rhae70`` / ``rhae60`` / ``rhae80``,
    ``x1_solved``, ``step_fraction`` = steps / max_steps, and the AGI Maze benchmark's own
    convention: ``success`` = solved within ``max_steps`` (its ``hard_max_steps``), ``good`` =
    solved within ``soft_good_steps`` (half of it), ``late`` = success but not good.

Both (:class:`UsageTally`): decisions, fallbacks and outages (``Decision.status``), model tokens,
requests, latency and cost summed over the game, ``cost_status`` (``unknown`` as soon as one
decision's price is unknown: never counted as 0), ``cache_read_share``
(:func:`cache_read_share`) and ``quirks``: counts of the reply-parsing rules a policy reports in
``Decision.record["quirks"]`` (a list of rule names or a name -> count map).

Example:
    >>> tally = EscapeTally(("A", "B"))
    >>> tally.add_turn({"A": {"move": "moved", "radio": "sent"},
    ...                 "B": {"move": "bumped_interior_wall", "radio": "none"}})
    >>> tally.add_turn({"A": {"move": "stayed", "radio": "none"}, "B": {"move": "moved"}})
    >>> outcome = {"success": True, "turns": 2, "first_visit_turn": {"A": 1, "B": 2},
    ...            "fastest_possible_finish": 2}
    >>> row = tally.finish(outcome, {"A": "hi", "B": ""}, max_turns=10)
    >>> row["finish_ratio"], row["wall_move_rate"], row["stays"], row["radio_messages"]
    (1.0, 0.3333333333333333, 1, 1)
    >>> scores = agimaze_scores(steps=20, solved=True, max_steps=70, soft_good_steps=35, budget=350)
    >>> scores["good"], scores["late"], scores["rhae70"]
    (True, False, 1.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from maze_envs.agimaze.scoring import rhae, step_fraction, x1_solved
from maze_envs.policies.interface import Decision, Usage

#: Move results that are a move into a wall (see ``maze_envs.escape.types.MOVE_RESULTS``).
WALL_RESULTS: Final = frozenset({"bumped_interior_wall", "bumped_outer_brick"})
#: Move results of a move that was tried (every result but STAY and "none").
TRIED_RESULTS: Final = frozenset({"moved", "doorway", *WALL_RESULTS})
#: The RHAE reference factors reported, by column name.
RHAE_FACTORS: Final = {"rhae70": 0.7, "rhae60": 0.6, "rhae80": 0.8}


class EscapeTally:
    """Counts a Maze Escape game's turns from the per-agent events of each step."""

    def __init__(self, agents: Sequence[str]) -> None:
        self.agents = tuple(agents)
        self.tried = 0
        self.walls = 0
        self.stays = 0
        self.radio = 0

    def add_turn(self, events: Mapping[str, Mapping[str, Any]]) -> None:
        """One step's events, ``{agent: {"move": result, "radio": result, ...}}``."""
        for event in events.values():
            move = event.get("move")
            if move in TRIED_RESULTS:
                self.tried += 1
                if move in WALL_RESULTS:
                    self.walls += 1
            elif move == "stayed":
                self.stays += 1
            if event.get("radio") == "sent":
                self.radio += 1

    def finish(
        self, outcome: Mapping[str, Any], notebooks: Mapping[str, str], max_turns: int
    ) -> dict[str, Any]:
        """The game's metrics from its outcome (the env's ``outcome()``) and final notebooks."""
        success = bool(outcome["success"])
        turns = int(outcome["turns"])
        visits = outcome.get("first_visit_turn") or {}
        exit_turns = {agent: visits.get(agent) for agent in self.agents}
        reached = [t for t in exit_turns.values() if t is not None]
        fastest = int(outcome["fastest_possible_finish"])
        finish = turns if success else None
        return {
            "success": success,
            "finish_turn": finish,
            "turns": turns,
            "first_out": min(reached) if reached else None,
            "agents_out": len(reached),
            "exit_turns": exit_turns,
            "fastest": fastest,
            "finish_ratio": finish / fastest if finish is not None and fastest > 0 else None,
            "finish_ratio_censored": (
                (finish if finish is not None else max_turns) / fastest if fastest > 0 else None
            ),
            "wall_moves": self.walls,
            "wall_move_rate": self.walls / self.tried if self.tried else None,
            "stays": self.stays,
            "radio_messages": self.radio,
            "notebook_bytes": sum(len(text.encode("utf-8")) for text in notebooks.values()),
        }


def agimaze_scores(
    *,
    steps: int,
    solved: bool,
    max_steps: int,
    soft_good_steps: int | None,
    budget: int,
) -> dict[str, Any]:
    """An AGI Maze episode's scores (see the module docstring).

    ``soft_good_steps`` defaults to half of ``max_steps``, the benchmark's rule of thumb.
    """
    soft = soft_good_steps if soft_good_steps is not None else max_steps // 2
    success = bool(solved) and steps <= max_steps
    good = bool(solved) and steps <= soft
    row: dict[str, Any] = {
        "solved": bool(solved),
        "steps": steps,
        "max_steps": max_steps,
        "soft_good_steps": soft,
        "budget": budget,
        "step_fraction": step_fraction(steps, max_steps),
        "x1_solved": x1_solved(steps, max_steps, solved),
        "success": success,
        "good": good,
        "late": success and not good,
    }
    for column, factor in RHAE_FACTORS.items():
        row[column] = rhae(steps, max_steps, solved, factor)
    return row


def cache_read_share(usage: Usage) -> float | None:
    """The share of a game's input tokens the provider read from its prompt cache.

    ``cache_read_tokens / input_tokens`` (``input_tokens`` counts every input token, cache reads
    included); ``None`` when no input token was reported.

    >>> cache_read_share(Usage(input_tokens=1000, cache_read_tokens=750))
    0.75
    """
    return usage.cache_read_tokens / usage.input_tokens if usage.input_tokens else None


def _quirk_counts(record: Mapping[str, Any] | None) -> Mapping[str, int]:
    quirks = record.get("quirks") if isinstance(record, Mapping) else None
    if isinstance(quirks, Mapping):
        return {str(k): int(v) for k, v in quirks.items() if isinstance(v, int)}
    if isinstance(quirks, list | tuple):
        return Counter(str(q) for q in quirks)
    return {}


class UsageTally:
    """Sums what the decisions of a game cost and how they went, per agent and in total."""

    def __init__(self) -> None:
        self.decisions = 0
        self.fallbacks = 0
        self.outages = 0
        self.by_agent: dict[str, Usage] = {}
        self.reported = False
        self.quirks: Counter[str] = Counter()

    def add(self, agent: str, decision: Decision[Any]) -> None:
        self.decisions += 1
        if decision.status == "fallback":
            self.fallbacks += 1
        elif decision.status == "outage":
            self.outages += 1
        if decision.usage is not None:
            self.reported = True
            previous = self.by_agent.get(agent)
            self.by_agent[agent] = decision.usage if previous is None else previous + decision.usage
        if decision.record is not None:
            self.quirks.update(_quirk_counts(decision.record))

    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_agent.values():
            total = total + usage
        return total

    def row(self) -> dict[str, Any]:
        """The usage columns of the game's row (token and cost columns None when unreported)."""
        total = self.total()
        reported = self.reported
        return {
            "decisions": self.decisions,
            "fallbacks": self.fallbacks,
            "outages": self.outages,
            "input_tokens": total.input_tokens if reported else None,
            "output_tokens": total.output_tokens if reported else None,
            "cache_read_tokens": total.cache_read_tokens if reported else None,
            "cache_write_tokens": total.cache_write_tokens if reported else None,
            "cache_read_share": cache_read_share(total) if reported else None,
            "requests": total.requests if reported else None,
            "model_latency_s": total.latency_s if reported else None,
            "cost_usd": total.cost_usd,
            "cost_status": total.cost_status,
            "quirks": dict(sorted(self.quirks.items())),
            "usage_by_agent": {a: u.to_json() for a, u in sorted(self.by_agent.items())},
        }
