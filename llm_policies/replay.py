"""Decision replay: re-ask a model the recorded prompts of a journal, with changed settings.

The Maze Escape study replayed 60 recorded decisions at a lower temperature and saw wall moves
fall from 24% to 9%; a full game at that temperature then had 56%, because in a game each reply
shapes the next prompt. So a replay is only half an experiment: :func:`replay_decisions`
re-sends every recorded request (system prompt, messages, output mode and schema exactly as
stored) with new model settings and compares the actions with the recorded ones (agreement,
wall-move rate), and :func:`full_game_summary` reads full games played with the same settings
from another journal; :class:`ReplayReport` shows both side by side.

Wall-move rate: :func:`maze_envs.metrics.wall_move_rate`, the benchmark results' and
``maze-envs analyze``'s number: wall moves / moves tried, over the policy's own decisions (STAYs,
fallbacks and outages in neither count). A replayed move is a wall move when it goes through a
side of the cell that is not ``open`` (Maze Escape; read from the observation the decision was
made on: :func:`maze_envs.metrics.escape_kind_of_move`, which is what the engine reports for a
played move); full games count the recorded move results (AGI Maze: ``bumped_wall`` /
``bumped_monolith``). AGI Maze has no walls in its observations, so replayed AGI Maze decisions
are compared by agreement only.

Command line: ``maze-envs replay-decisions JOURNAL [--model SPEC] [--set temperature=0.2]
[--full-games OTHER.sqlite] [--games 1 2] [--limit 60] [--json report.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from llm_policies.backends.base import ChatMessage, ModelBackend, ModelError, ModelRequest
from llm_policies.harness import decode_messages
from llm_policies.parsing import parse_reply
from llm_policies.schema import ReplySchema, agimaze_schema, escape_schema
from llm_policies.settings import ModelSettings
from maze_envs import metrics
from maze_envs.escape.types import DIRECTIONS, EDGE_KINDS, Config


@dataclass(frozen=True)
class RecordedDecision:
    """One recorded model decision, with the request rebuilt from the journal."""

    game_id: int
    turn: int
    agent: str
    env_id: str
    record: dict[str, Any]
    system: str
    messages: tuple[ChatMessage, ...]
    schema: dict[str, Any]
    #: the sides of the agent's cell when it decided (Maze Escape), N, E, S, W
    edges: tuple[str, ...] | None

    @property
    def action(self) -> str | None:
        """The recorded action: a Maze Escape move or an AGI Maze action id."""
        action = self.record.get("action")
        if isinstance(action, Mapping):
            return str(action.get("move"))
        return None if action is None else str(action)


@dataclass
class ReplayedDecision:
    game_id: int
    turn: int
    agent: str
    recorded: str | None
    replayed: str | None
    status: str
    recorded_wall: bool | None
    replayed_wall: bool | None
    quirks: dict[str, int] = field(default_factory=dict)
    #: the recorded decision's status, and the kinds of both moves (maze_envs.metrics.Kind)
    recorded_status: str = "ok"
    recorded_kind: str | None = None
    replayed_kind: str | None = None


@dataclass
class FullGameSummary:
    """Full games of a journal: decisions, wall-move rate, fallbacks, successes."""

    journal: str
    games: int = 0
    successes: int = 0
    decisions: int = 0
    wall_moves: int = 0
    bumps: int = 0
    fallbacks: int = 0
    outages: int = 0
    quirks: dict[str, int] = field(default_factory=dict)
    moves_tried: int = 0

    @property
    def wall_move_rate(self) -> float | None:
        return metrics.wall_move_rate(self.wall_moves, self.moves_tried)


@dataclass
class ReplayReport:
    """Replayed decisions beside the recorded ones and, optionally, full games."""

    source: str
    model: str
    settings: dict[str, Any]
    decisions: list[ReplayedDecision]
    full_games: FullGameSummary | None = None
    recorded_games: FullGameSummary | None = None

    @property
    def agreement(self) -> float | None:
        usable = [d for d in self.decisions if d.status == "ok" and d.recorded is not None]
        if not usable:
            return None
        return sum(d.recorded == d.replayed for d in usable) / len(usable)

    @property
    def recorded_wall_rate(self) -> float | None:
        return _wall_rate((d.recorded_kind, d.recorded_status) for d in self.decisions)

    @property
    def replayed_wall_rate(self) -> float | None:
        return _wall_rate((d.replayed_kind, d.status) for d in self.decisions)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "model": self.model,
            "settings": self.settings,
            "decisions": len(self.decisions),
            "agreement": self.agreement,
            "recorded_wall_rate": self.recorded_wall_rate,
            "replayed_wall_rate": self.replayed_wall_rate,
            "statuses": dict(Counter(d.status for d in self.decisions)),
            "quirks": dict(sum((Counter(d.quirks) for d in self.decisions), Counter())),
            "full_games": _summary_json(self.full_games),
            "recorded_games": _summary_json(self.recorded_games),
            "per_decision": [asdict(d) for d in self.decisions],
        }

    def to_markdown(self) -> str:
        """The side-by-side table: replayed decisions, and full games with the same settings."""

        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{100 * value:.1f}%"

        statuses = Counter(d.status for d in self.decisions)
        settings = ", ".join(f"{k}={v}" for k, v in self.settings.items()) or "recorded settings"
        lines = [
            f"# Decision replay of {self.source}",
            "",
            f"Model {self.model}; {settings}.",
            "",
            "| | decisions | wall-move rate | agreement with recorded | fallbacks | outages |",
            "|---|---|---|---|---|---|",
            f"| recorded decisions | {len(self.decisions)} | {pct(self.recorded_wall_rate)} | "
            f"- | - | - |",
            f"| replayed decisions | {len(self.decisions)} | {pct(self.replayed_wall_rate)} | "
            f"{pct(self.agreement)} | {statuses.get('fallback', 0)} | "
            f"{statuses.get('outage', 0)} |",
        ]
        for label, summary in (
            ("recorded full games", self.recorded_games),
            ("full games, new settings", self.full_games),
        ):
            if summary is not None:
                lines.append(
                    f"| {label} ({summary.games} games, {summary.successes} won) | "
                    f"{summary.decisions} | {pct(summary.wall_move_rate)} | - | "
                    f"{summary.fallbacks} | {summary.outages} |"
                )
        if self.full_games is None:
            lines += [
                "",
                "No full games with these settings were given (--full-games): a replay tests "
                "independent decisions, while in a game each reply shapes the next prompt, so "
                "the two can disagree.",
            ]
        return "\n".join(lines)


def _wall_rate(kinds: Iterable[tuple[str | None, str]]) -> float | None:
    """:func:`maze_envs.metrics.wall_move_rate` of (kind, status) pairs (no kind: not counted)."""
    steps = [
        metrics.Step(kind, status)  # type: ignore[arg-type]
        for kind, status in kinds
        if kind is not None
    ]
    return metrics.wall_move_rate(metrics.wall_moves(steps), metrics.moves_tried(steps))


def _summary_json(summary: FullGameSummary | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    return {**asdict(summary), "wall_move_rate": summary.wall_move_rate}


# --- reading journals ------------------------------------------------------------------------


def open_journal(path: str | Path) -> Any:
    """The journal at ``path``, read-only where the journal supports it."""
    from maze_envs.journal import Journal

    if not Path(path).is_file():
        raise FileNotFoundError(f"no journal at {path}")
    return Journal(path, readonly=True)


def _resolve(journal: Any, value: Any) -> Any:
    resolve = getattr(journal, "resolve", None)
    if callable(resolve):
        return resolve(value)
    return value


def _edges(observation: Any) -> tuple[str, ...] | None:
    if not isinstance(observation, Mapping) or "edges" not in observation:
        return None
    edges = observation["edges"]
    if isinstance(edges, Mapping):
        return tuple(str(edges[d]) for d in DIRECTIONS)
    return tuple(EDGE_KINDS[int(k)] for k in edges)


def recorded_decisions(
    journal: Any, games: Sequence[int] | None = None
) -> Iterator[RecordedDecision]:
    """Every LLM decision recorded in ``journal`` (optionally only ``games``), in turn order."""
    for info in journal.games():
        if games is not None and info.id not in games:
            continue
        previous: dict[str, tuple[ChatMessage, ...]] = {}
        # a decision is stored with the turn it led to; it was made on the turn before's view
        seen: Mapping[str, Any] = {}
        for turn in journal.turns(info.id):
            decided_on, seen = seen, turn.observations
            decisions = getattr(turn, "decisions", None) or {}
            for agent, record in decisions.items():
                if not isinstance(record, Mapping) or "messages" not in record:
                    continue  # not a model decision (a classical policy's record)
                record = _resolve(journal, dict(record))
                messages = decode_messages(record["messages"], previous.get(agent))
                previous[agent] = messages
                schema_text = record.get("schema")
                yield RecordedDecision(
                    game_id=info.id,
                    turn=turn.turn,
                    agent=agent,
                    env_id=info.env_id,
                    record=record,
                    system=str(record["system"]),
                    messages=messages,
                    schema=json.loads(schema_text) if isinstance(schema_text, str) else {},
                    edges=_edges(decided_on.get(agent)),
                )


def rebuild_schema(decision: RecordedDecision) -> ReplySchema:
    """The reply schema a recorded decision was parsed with, from its stored JSON schema."""
    props = decision.schema.get("properties", {})
    fields = tuple(decision.record.get("fields") or props)
    check_prop = props.get("check")
    check = (
        "off" if check_prop is None else ("required" if "minLength" in check_prop else "optional")
    )
    if "move" in fields:
        notebook = props.get("notebook", {})
        first = (notebook.get("anyOf") or [{}])[0]
        mode = "splice" if first.get("type") == "object" else "rolling_log"
        config = Config(notebook_mode=mode, radio="radio" in fields, num_agents=2)
        return escape_schema(config, check=check, order=fields)  # type: ignore[arg-type]
    names = props.get("action", {}).get("enum") or []
    reasoning = [f for f in fields if f in ("plan", "state")]
    return agimaze_schema(names, reasoning=reasoning, check=check, order=fields)  # type: ignore[arg-type]


def _is_wall(edges: tuple[str, ...] | None, move: str | None) -> bool | None:
    kind = metrics.escape_kind_of_move(move, edges)
    return None if kind == "other" or edges is None else kind == "wall"


async def _replay_one(
    backend: ModelBackend,
    decision: RecordedDecision,
    settings: ModelSettings,
    limit: asyncio.Semaphore,
) -> ReplayedDecision:
    schema = rebuild_schema(decision)
    mode = decision.record.get("output_mode", "tool")
    request = ModelRequest(
        system=decision.system,
        messages=decision.messages,
        output_mode=mode,
        schema=decision.schema or schema.json_schema,
        schema_name=decision.record.get("schema_name", schema.name),
        settings=settings,
        cache_key_extra="replay",
    )
    is_escape = schema.action_field == "move"
    recorded_wall = _is_wall(decision.edges, decision.action) if is_escape else None
    recorded_kind = (
        metrics.escape_kind_of_move(decision.action, decision.edges) if is_escape else None
    )
    recorded_status = metrics.decision_status(decision.record)
    async with limit:
        try:
            reply = await backend.complete(request)
        except ModelError:
            return ReplayedDecision(
                decision.game_id,
                decision.turn,
                decision.agent,
                decision.action,
                None,
                "outage",
                recorded_wall,
                None,
                recorded_status=recorded_status,
                recorded_kind=recorded_kind,
            )
    result = parse_reply(reply.text, reply.tool_arguments, schema, mode)
    replayed = None if result.values is None else str(result.values[schema.action_field])
    return ReplayedDecision(
        decision.game_id,
        decision.turn,
        decision.agent,
        decision.action,
        replayed,
        "ok" if result.values is not None else "fallback",
        recorded_wall,
        _is_wall(decision.edges, replayed) if is_escape and replayed else None,
        dict(result.quirks),
        recorded_status=recorded_status,
        recorded_kind=recorded_kind,
        replayed_kind=(
            metrics.escape_kind_of_move(replayed, decision.edges)
            if is_escape and replayed
            else None
        ),
    )


async def replay_decisions(
    journal: Any,
    backend: ModelBackend,
    settings: ModelSettings,
    *,
    games: Sequence[int] | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    changed: Mapping[str, Any] | None = None,
) -> ReplayReport:
    """Re-send the recorded requests of ``journal`` to ``backend`` with ``settings``.

    ``limit`` replays only the first N decisions; ``changed`` names the settings that differ
    from the recorded ones (for the report).
    """
    chosen = []
    for decision in recorded_decisions(journal, games):
        chosen.append(decision)
        if limit is not None and len(chosen) >= limit:
            break
    gate = asyncio.Semaphore(max(1, concurrency))
    replayed = await asyncio.gather(*(_replay_one(backend, d, settings, gate) for d in chosen))
    return ReplayReport(
        source=str(getattr(journal, "path", "journal")),
        model=backend.spec,
        settings=dict(changed or {}),
        decisions=list(replayed),
        recorded_games=full_game_summary(journal, games),
    )


def full_game_summary(journal: Any, games: Sequence[int] | None = None) -> FullGameSummary:
    """Decisions, wall-move rate, fallbacks and successes of the LLM games in ``journal``."""
    summary = FullGameSummary(journal=str(getattr(journal, "path", "journal")))
    quirks: Counter[str] = Counter()
    steps: list[metrics.Step] = []
    for info in journal.games():
        if games is not None and info.id not in games:
            continue
        counted = False
        seen: Mapping[str, Any] = {}
        for turn in journal.turns(info.id):
            decided_on, seen = seen, turn.observations
            for agent, record in (getattr(turn, "decisions", None) or {}).items():
                if not isinstance(record, Mapping) or "messages" not in record:
                    continue
                counted = True
                summary.decisions += 1
                status = record.get("status")
                summary.fallbacks += status == "fallback"
                summary.outages += status == "outage"
                quirks.update(record.get("quirks") or {})
                events = turn.events.get(agent) if isinstance(turn.events, Mapping) else None
                steps.append(_played_step(events, record, _edges(decided_on.get(agent))))
                if isinstance(events, Mapping) and _bumped(events):
                    summary.bumps += 1
        if counted:
            summary.games += 1
            outcome = info.outcome or {}
            summary.successes += bool(outcome.get("success") or outcome.get("solved"))
    summary.quirks = dict(quirks)
    summary.wall_moves = metrics.wall_moves(steps)
    summary.moves_tried = metrics.moves_tried(steps)
    return summary


def _played_step(
    events: Any, record: Mapping[str, Any], edges: tuple[str, ...] | None
) -> metrics.Step:
    """A played decision as the metrics count it, from its recorded events (Maze Escape: the
    move result, or without one the move and the sides of the cell it was decided on; AGI Maze:
    the action, its formal events and whether it was played)."""
    events = events if isinstance(events, Mapping) else {}
    if "move" in events:
        return metrics.escape_step(events.get("move"), record, events)
    action = record.get("action")
    if isinstance(action, Mapping):  # a Maze Escape game journaled without its events
        kind = metrics.escape_kind_of_move(action.get("move"), edges)
        return metrics.Step(kind, metrics.decision_status(record))
    formal = events.get("formal")
    names = formal.get("events", []) if isinstance(formal, Mapping) else events.get("events", [])
    played = events.get("error") is None
    return metrics.agimaze_step(events.get("action"), names or [], played, record)


def _bumped(events: Mapping[str, Any]) -> bool:
    formal = events.get("formal")
    names = formal.get("events", []) if isinstance(formal, Mapping) else []
    return any(n in ("bumped_wall", "bumped_monolith") for n in names)


# --- command line ----------------------------------------------------------------------------


def _parse_sets(pairs: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set takes key=value (for example temperature=0.2), got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _recorded_model(journal: Any) -> str | None:
    for decision in recorded_decisions(journal):
        return str(decision.record.get("model"))
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs replay-decisions``: replay a journal's decisions and print the report."""
    parser = argparse.ArgumentParser(
        prog="maze-envs replay-decisions",
        description="Re-ask a model the recorded prompts of a journal with changed settings, "
        "and compare with the recorded actions and with full games.",
    )
    parser.add_argument("journal", help="journal with recorded LLM decisions")
    parser.add_argument("--model", help="model spec (default: the recorded model)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a model setting to change, e.g. temperature=0.2 (repeatable)",
    )
    parser.add_argument("--full-games", help="journal of full games played with the same settings")
    parser.add_argument("--games", type=int, nargs="*", help="only these game ids")
    parser.add_argument("--limit", type=int, help="replay at most this many decisions")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cache", help="response cache file (SQLite)")
    parser.add_argument("--json", help="also write the report as JSON here")
    args = parser.parse_args(argv)
    try:
        changed = _parse_sets(args.set)
        settings = ModelSettings(**changed)
        journal = open_journal(args.journal)
    except (ValueError, FileNotFoundError) as exc:
        print(f"maze-envs replay-decisions: error: {exc}", file=sys.stderr)
        return 2
    spec = args.model or _recorded_model(journal)
    if spec is None:
        print(f"maze-envs replay-decisions: no LLM decisions in {args.journal}", file=sys.stderr)
        return 1
    from llm_policies.backends.base import make_backend

    backend = make_backend(spec, settings)
    if args.cache:
        from llm_policies.cache import CachedBackend

        backend = CachedBackend(backend, args.cache)

    async def run() -> ReplayReport:
        try:
            return await replay_decisions(
                journal,
                backend,
                settings,
                games=args.games,
                limit=args.limit,
                concurrency=args.concurrency,
                changed=changed,
            )
        finally:
            await backend.aclose()

    report = asyncio.run(run())
    if args.full_games:
        report.full_games = full_game_summary(open_journal(args.full_games))
    print(report.to_markdown())
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2), encoding="utf-8")
    return 0
