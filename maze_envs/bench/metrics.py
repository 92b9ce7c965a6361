"""Per-game metrics: what one game's row in the results holds.

Every metric is defined once, in :mod:`maze_envs.metrics` (re-exported here); the tallies below
collect what the environments report each turn, in the form the journal stores it (per-agent
event dicts, and each decision's status), and call those definitions, so the same code scores a
live game and a game read back from a journal, and ``maze-envs analyze``, the viewer and the
decision replay report the same numbers.

Maze Escape (:class:`EscapeTally`):
    ``success`` (team success), ``finish_turn`` (the turn of team success, None otherwise),
    ``turns``, ``first_out`` (the first turn any agent reached the exit), ``exit_turns`` (per
    agent), ``agents_out``, ``fastest`` (the fastest possible finish: the longest of the agents'
    shortest paths), ``finish_ratio`` = finish_turn / fastest (successes only),
    ``finish_ratio_censored`` (a failure counts as ``max_turns`` / fastest: a lower bound),
    ``wall_moves`` and ``wall_move_rate`` = wall moves / moves tried,
    ``stays``, ``radio_messages`` (messages delivered), all over the policies' own decisions
    (fallback and outage decisions excluded), and ``notebook_bytes`` (UTF-8 bytes in all
    notebooks at the end).

AGI Maze (:func:`agimaze_scores`, :class:`AgiMazeTally`):
    ``solved`` (within the evaluation budget), ``steps``, ``max_steps`` (the reference budget),
    ``budget`` (budget factor x max_steps), ``rhae70`` / ``rhae60`` / ``rhae80``,
    ``x1_solved``, ``step_fraction`` = steps / max_steps, and the AGI Maze benchmark's own
    convention: ``success`` = solved within ``max_steps`` (its ``hard_max_steps``), ``good`` =
    solved within ``soft_good_steps`` (half of it), ``late`` = success but not good; and
    ``wall_moves``, ``wall_move_rate`` as for Maze Escape. A labyrinth set
    (:func:`agimaze_set_scores`) scores its target, the set's last labyrinth, and adds
    ``labyrinths`` (each one's result), ``set_steps``, ``set_solved`` and ``set_labyrinths``.

Both (:class:`UsageTally`): decisions, fallbacks and outages (``Decision.status``), model tokens,
requests, latency and cost summed over the game, ``cost_status`` (``unknown`` as soon as one
decision's price is unknown: never counted as 0), ``cache_read_share``
(:func:`cache_read_share`), ``quirks``: counts of the reply-parsing rules a policy reports in
``Decision.record["quirks"]`` (a list of rule names or a name -> count map), and ``outage``:
which model and endpoint could not be reached, and why (None without outages).

Example:
    >>> tally = EscapeTally(("A", "B"))
    >>> tally.add_turn({"A": {"move": "moved", "radio": "sent"},
    ...                 "B": {"move": "bumped_interior_wall", "radio": "none"}})
    >>> tally.add_turn({"A": {"move": "stayed", "radio": "none"}, "B": {"move": "moved"}})
    >>> tally.add_turn({"A": {"move": "stayed"}, "B": {"move": "stayed"}}, {"B": "fallback"})
    >>> outcome = {"success": True, "turns": 3, "first_visit_turn": {"A": 1, "B": 3},
    ...            "fastest_possible_finish": 3}
    >>> row = tally.finish(outcome, {"A": "hi", "B": ""}, max_turns=10)
    >>> row["finish_ratio"], row["wall_move_rate"], row["stays"], row["radio_messages"]
    (1.0, 0.3333333333333333, 2, 1)
    >>> scores = agimaze_scores(steps=20, solved=True, max_steps=70, soft_good_steps=35, budget=350)
    >>> scores["good"], scores["late"], scores["rhae70"]
    (True, False, 1.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from maze_envs import metrics as _metrics
from maze_envs.agimaze.scoring import rhae, step_fraction, x1_solved
from maze_envs.metrics import (
    STATUSES,
    Status,
    Step,
    decision_metrics,
    decision_status,
    game_status,
)
from maze_envs.policies.interface import Decision, Usage

__all__ = [
    "RHAE_FACTORS",
    "AgiMazeTally",
    "EscapeTally",
    "Status",
    "Step",
    "UsageTally",
    "agimaze_scores",
    "agimaze_set_scores",
    "cache_read_share",
    "decision_metrics",
    "decision_status",
    "game_status",
    "harness_endpoint",
    "journal_record",
    "status_from_outcome",
]

_NO_STATUSES: Final[Mapping[str, Status]] = {}
#: The per-decision metrics of a game's row (the rows of METRICS its tally shows; decisions,
#: fallbacks and outages come from the usage tally, which counts every decision's status).
_USAGE: Final = frozenset({"decisions", "fallbacks", "outages"})
_ESCAPE_TALLIED: Final = tuple(
    m for m in _metrics.metrics_for("tally", "escape") if m.name not in _USAGE
)
_AGIMAZE_TALLIED: Final = tuple(
    m for m in _metrics.metrics_for("tally", "agimaze") if m.name not in _USAGE
)
#: The RHAE reference factors reported, by column name.
RHAE_FACTORS: Final = {"rhae70": 0.7, "rhae60": 0.6, "rhae80": 0.8}


class EscapeTally:
    """Collects a Maze Escape game's decisions from the per-agent events of each step."""

    def __init__(self, agents: Sequence[str]) -> None:
        self.agents = tuple(agents)
        # (agent, move result, status, radio result) -> turns: a handful of distinct keys per
        # game, so each turn costs a lookup (this runs on every turn of every game); they
        # become Steps (escape_kind, radio_sent) when read
        self._counts: dict[tuple[str, Any, Status, Any], int] = {}

    def add_turn(
        self,
        events: Mapping[str, Mapping[str, Any]],
        statuses: Mapping[str, Status] | None = None,
    ) -> None:
        """One step's events, ``{agent: {"move": result, "radio": result, ...}}``, and the
        status of each agent's decision (``ok`` when not given)."""
        counts = self._counts
        status_of = (statuses or _NO_STATUSES).get
        for agent, event in events.items():
            key = (agent, event.get("move"), status_of(agent, "ok"), event.get("radio"))
            counts[key] = counts.get(key, 0) + 1

    @property
    def steps(self) -> dict[str, dict[Step, int]]:
        """Per agent, how many times each distinct decision (:class:`Step`) occurred."""
        out: dict[str, dict[Step, int]] = {agent: {} for agent in self.agents}
        for (agent, result, status, radio), n in self._counts.items():
            step = Step(_metrics.escape_kind(result), status, _metrics.radio_sent({"radio": radio}))
            counts = out.setdefault(agent, {})
            counts[step] = counts.get(step, 0) + n
        return out

    def all_steps(self) -> dict[Step, int]:
        """Every agent's decisions, counted."""
        total: dict[Step, int] = {}
        for counts in self.steps.values():
            for step, n in counts.items():
                total[step] = total.get(step, 0) + n
        return total

    def finish(
        self, outcome: Mapping[str, Any], notebooks: Mapping[str, str], max_turns: int
    ) -> dict[str, Any]:
        """The game's metrics from its outcome (the env's ``outcome()``) and final notebooks."""
        success = bool(outcome["success"])
        turns = int(outcome["turns"])
        visits = outcome.get("first_visit_turn") or {}
        exit_turns = {agent: visits.get(agent) for agent in self.agents}
        fastest = _metrics.fastest_finish(outcome)
        finish = _metrics.finish_turn(success, turns)
        behaviour = decision_metrics(self.all_steps())
        return {
            "success": success,
            "finish_turn": finish,
            "turns": turns,
            "first_out": _metrics.first_out(exit_turns),
            "agents_out": _metrics.agents_out(exit_turns),
            "exit_turns": exit_turns,
            "fastest": fastest,
            "finish_ratio": _metrics.finish_ratio(finish, fastest),
            "finish_ratio_censored": _metrics.finish_ratio_censored(finish, max_turns, fastest),
            "notebook_bytes": _metrics.notebook_bytes(notebooks),
            # the per-decision metrics the table gives the row (maze_envs.metrics.METRICS)
            **{
                m.column("tally"): behaviour[m.name] for m in _ESCAPE_TALLIED if m.name in behaviour
            },
        }


class AgiMazeTally:
    """Collects an AGI Maze episode's decisions (the player's actions and their events)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def add_step(
        self, action: str, events: Iterable[str], played: bool, status: Status = "ok"
    ) -> None:
        """One step: the action, its formal events, whether it was played, and its status."""
        self.steps.append(Step(_metrics.agimaze_kind(action, events, played), status))

    def metrics(self) -> dict[str, Any]:
        """The per-decision metrics of the episode its row holds (``wall_moves`` and
        ``wall_move_rate``: the rows of METRICS the AGI Maze tally shows)."""
        behaviour = decision_metrics(self.steps, escape=False)
        return {
            m.column("tally"): behaviour[m.name] for m in _AGIMAZE_TALLIED if m.name in behaviour
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


def agimaze_set_scores(
    results: Sequence[Mapping[str, Any]], count: int, soft_good_steps: int | None
) -> dict[str, Any]:
    """A labyrinth-set game's scores from its per-labyrinth results (``info["results"]``).

    The set's score is its target's: ``solved``, ``steps``, ``rhae70`` / ``rhae60`` /
    ``rhae80``, ``x1_solved``, ``success`` / ``good`` / ``late`` and ``step_fraction`` are those
    of :func:`agimaze_scores` for the last labyrinth (all zero / false
    when the set ended before it finished). ``labyrinths`` lists every finished labyrinth in set
    order (``name``, ``steps``, ``max_steps``, ``budget``, ``solved``, ``rhae70``);
    ``set_steps`` is the steps of the whole set (the resource use, tutorials included),
    ``set_solved`` the labyrinths solved, ``set_labyrinths`` how many the set has.
    """
    finished = [dict(r) for r in results]
    target = finished[-1] if len(finished) == count else None
    if target is None:  # the set stopped before its target ended: nothing of it to score
        scores: dict[str, Any] = {
            "solved": False,
            "steps": 0,
            "max_steps": None,
            "soft_good_steps": None,
            "budget": None,
            "step_fraction": None,
            "x1_solved": False,
            "success": False,
            "good": False,
            "late": False,
            **dict.fromkeys(RHAE_FACTORS, 0.0),
        }
    else:
        scores = agimaze_scores(
            steps=int(target["steps"]),
            solved=bool(target["solved"]),
            max_steps=int(target["max_steps"]),
            soft_good_steps=soft_good_steps,
            budget=int(target["budget"]),
        )
    scores["labyrinths"] = [
        {
            "name": r["name"],
            "steps": int(r["steps"]),
            "max_steps": int(r["max_steps"]),
            "budget": int(r["budget"]),
            "solved": bool(r["solved"]),
            "rhae70": float(r["rhae"]),  # the set env reports each labyrinth's RHAE70
        }
        for r in finished
    ]
    scores["set_steps"] = sum(int(r["steps"]) for r in finished)
    scores["set_solved"] = sum(bool(r["solved"]) for r in finished)
    scores["set_labyrinths"] = count
    return scores


def journal_record(decision: Decision[Any]) -> Mapping[str, Any] | None:
    """The record of a decision as the runner stores it in the journal: the policy's record,
    with the decision's status added when it is not ``ok`` (so ``maze-envs analyze``, the viewer
    and a rescore from the journal tell the policy's play from fallbacks and outages)."""
    record = decision.record
    if decision.status == "ok" or decision_status(record) == decision.status:
        return record
    return {**(record or {}), "status": decision.status}


def status_from_outcome(outcome: Mapping[str, Any] | None, outages: int) -> str:
    """The :func:`~maze_envs.metrics.game_status` of a journaled game, from its outcome and its
    outage decisions; ``unfinished`` (no outcome) or ``aborted`` (abandoned, not by the runner)
    for games the runner did not end."""
    if outcome is None:
        return "unfinished"
    stopped = outcome.get("stopped") if outcome.get("aborted") else None
    if outcome.get("aborted") and stopped is None and not outages:
        return "aborted"
    return game_status(
        error=stopped == "error", outages=outages, stopped=stopped not in (None, "error")
    )


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
    """Sums what the decisions of a game cost and how they went, per agent and in total.

    ``endpoints`` maps an agent to the model endpoint its policy calls (``settings.base_url``
    of its harness report), for the outage message.
    """

    def __init__(self, endpoints: Mapping[str, str | None] | None = None) -> None:
        self.statuses: list[Status] = []
        self.by_agent: dict[str, Usage] = {}
        self.reported = False
        self.quirks: Counter[str] = Counter()
        self.endpoints = dict(endpoints or {})
        self.outage: dict[str, Any] | None = None
        #: what the model saw and wrote, beyond the statuses (:mod:`maze_envs.metrics`)
        self.history_trims = 0
        self.cap_breaches = 0
        self.truncations = 0

    @property
    def decisions(self) -> int:
        return _metrics.decisions(self.statuses)

    @property
    def fallbacks(self) -> int:
        return _metrics.fallbacks(self.statuses)

    @property
    def outages(self) -> int:
        return _metrics.outages(self.statuses)

    def add_action(self, agent: str) -> None:
        """A bare action (no :class:`Decision`): the policy's own choice, nothing to account."""
        self.statuses.append("ok")

    def add(self, agent: str, decision: Decision[Any]) -> None:
        status = decision.status if decision.status in STATUSES else "ok"
        self.statuses.append(status)
        record = decision.record
        if status == "outage" and self.outage is None:
            self.outage = _outage_detail(agent, record, self.endpoints.get(agent))
        if decision.usage is not None:
            self.reported = True
            previous = self.by_agent.get(agent)
            self.by_agent[agent] = decision.usage if previous is None else previous + decision.usage
        if record is not None:
            self.quirks.update(_quirk_counts(record))
            self.history_trims += _metrics.history_trims((record,))
            self.cap_breaches += _metrics.cap_breaches((record,))
            self.truncations += _metrics.truncations((record,))

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
            "outage": self.outage,
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
            "history_trims": self.history_trims if reported else None,
            "cap_breaches": self.cap_breaches if reported else None,
            "truncations": self.truncations if reported else None,
            "usage_by_agent": {a: u.to_json() for a, u in sorted(self.by_agent.items())},
        }


def _outage_detail(agent: str, record: Any, endpoint: str | None) -> dict[str, Any]:
    """Which model (and endpoint) an outage decision could not reach, and why."""
    record = record if isinstance(record, Mapping) else {}
    model = record.get("model")
    error = record.get("error")
    return {
        "agent": agent,
        "model": None if model is None else str(model),
        "endpoint": endpoint,
        "error": None if error is None else str(error),
    }


def __getattr__(name: str) -> Any:
    """Every other name of :mod:`maze_envs.metrics` (this module re-exports its definitions
    beside the runner's tallies)."""
    try:
        return getattr(_metrics, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def harness_endpoint(harness: Any) -> str | None:
    """The endpoint a policy's harness report names (``settings.base_url``), if any."""
    settings = harness.get("settings") if isinstance(harness, Mapping) else None
    url = settings.get("base_url") if isinstance(settings, Mapping) else None
    return None if url is None else str(url)
