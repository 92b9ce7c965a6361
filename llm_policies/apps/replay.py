"""Decision replay: re-ask a model the recorded prompts of a journal, with changed settings.

The Maze Escape study replayed 60 recorded decisions at a lower temperature and saw wall moves
fall from 24% to 9%; a full game at that temperature then had 56%, because in a game each reply
shapes the next prompt. So a replay is only half an experiment: :func:`replay_decisions`
re-sends every recorded request (system prompt, messages, output mode and schema exactly as
stored) with the recorded model settings (seed, output cap, temperature...: those the game was
played with), changed only where ``--set`` says, and compares the actions with the recorded ones
(agreement, wall-move rate); :func:`full_game_summary` reads full games played with the same
settings from another journal; :class:`~llm_policies.apps.replay_report.ReplayReport` shows both
side by side. ``--set output_mode=...`` changes the output mode too.

The figures and what they leave out (fallbacks and outages, counted apart) are defined in
:mod:`llm_policies.apps.replay_report`. Wall-move rate: the share of decisions whose move goes
through a side of the cell that is not ``open`` (Maze Escape; read from the observation the
decision was made on). AGI Maze has no walls in its observations, so there only agreement is
compared, and the recorded games' bump rate (``bumped_wall``/``bumped_monolith`` events) is shown.

Command line: ``maze-envs replay-decisions JOURNAL [--model SPEC] [--set temperature=0.2]
[--full-games OTHER.sqlite] [--games 1 2] [--limit 60] [--json report.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from llm_policies.apps.replay_report import FullGameSummary, ReplayedDecision, ReplayReport
from llm_policies.backends.base import ChatMessage, ModelBackend, ModelError, ModelRequest
from llm_policies.harness import decode_messages
from llm_policies.parsing import parse_reply
from llm_policies.schema import ReplySchema, agimaze_schema, escape_schema
from llm_policies.settings import OUTPUT_MODES, ModelSettings, OutputMode
from maze_envs import metrics
from maze_envs.agimaze.types import WALL_EVENTS
from maze_envs.escape.types import DIRECTIONS, EDGE_KINDS, Config

__all__ = [
    "FullGameSummary",
    "RecordedDecision",
    "ReplayReport",
    "ReplayedDecision",
    "full_game_summary",
    "main",
    "recorded_decisions",
    "replay_decisions",
    "replay_settings",
]

#: What ``--set`` may change: a model setting, or the output mode.
REPLAY_KEYS = (*ModelSettings.model_fields, "output_mode")


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
    #: the model settings the game was played with, as recorded (``None``: not recorded)
    settings: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        """The recorded decision's status: ``ok``, ``fallback`` or ``outage``."""
        return str(self.record.get("status") or "ok")

    @property
    def action(self) -> str | None:
        """The recorded action: a Maze Escape move or an AGI Maze action id."""
        action = self.record.get("action")
        if isinstance(action, Mapping):
            return str(action.get("move"))
        return None if action is None else str(action)


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


def _meta_settings(info: Any) -> dict[str, dict[str, Any]]:
    """The model settings per agent in a game's meta (the runner stores the harness reports)."""
    harness = (getattr(info, "meta", None) or {}).get("harness") or {}
    return {
        agent: dict(report["settings"])
        for agent, report in harness.items()
        if isinstance(report, Mapping) and isinstance(report.get("settings"), Mapping)
    }


def recorded_decisions(
    journal: Any, games: Sequence[int] | None = None
) -> Iterator[RecordedDecision]:
    """Every LLM decision recorded in ``journal`` (optionally only ``games``), in turn order,
    with the model settings its game was played with (the first decision's ``harness`` report,
    else the game meta's)."""
    for info in journal.games():
        if games is not None and info.id not in games:
            continue
        played_with = _meta_settings(info)
        previous: dict[str, tuple[ChatMessage, ...]] = {}
        # a decision is stored with the turn it led to; it was made on the turn before's view
        seen: Mapping[str, Any] = {}
        for turn in journal.turns(info.id):
            decided_on, seen = seen, turn.observations
            decisions = getattr(turn, "decisions", None) or {}
            for agent, record in decisions.items():
                if not isinstance(record, Mapping) or not {"attempts", "messages"} & record.keys():
                    continue  # not a model decision (a classical policy's record)
                harness = record.get("harness")
                if isinstance(harness, Mapping) and isinstance(harness.get("settings"), Mapping):
                    played_with[agent] = dict(harness["settings"])
                if "messages" not in record:
                    continue  # a decision whose request was never sent (a cap, the context)
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
                    settings=played_with.get(agent),
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


def _kind(edges: tuple[str, ...] | None, move: str | None) -> metrics.Kind | None:
    """The kind of a Maze Escape move on the cell it was decided on
    (:func:`maze_envs.metrics.escape_kind_of_move`); None when the move or the cell is unknown."""
    kind = metrics.escape_kind_of_move(move, edges)
    return None if kind == "other" else kind


def replay_settings(
    decision: RecordedDecision, changed: Mapping[str, Any], fallback: ModelSettings
) -> tuple[ModelSettings, OutputMode]:
    """The settings and output mode to replay ``decision`` with: as recorded, but ``changed``.

    A journal without recorded settings uses ``fallback``'s; ``changed`` may hold any model
    setting and ``output_mode``.
    """
    base = decision.settings if decision.settings is not None else fallback.model_dump()
    known = {k: v for k, v in base.items() if k in ModelSettings.model_fields}
    model = {k: v for k, v in changed.items() if k != "output_mode"}
    settings = ModelSettings(**{**known, **model})
    mode = changed.get("output_mode") or decision.record.get("output_mode") or "tool"
    if mode not in OUTPUT_MODES:
        raise ValueError(f"output_mode must be one of {', '.join(OUTPUT_MODES)}, got {mode!r}")
    return settings, mode


async def _replay_one(
    backend: ModelBackend,
    decision: RecordedDecision,
    settings: ModelSettings,
    mode: OutputMode,
    limit: asyncio.Semaphore,
) -> ReplayedDecision:
    schema = rebuild_schema(decision)
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
    recorded_kind = _kind(decision.edges, decision.action) if is_escape else None
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
                recorded_kind,
                None,
                recorded_status=decision.status,
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
        recorded_kind,
        _kind(decision.edges, replayed) if is_escape and replayed else None,
        dict(result.quirks),
        recorded_status=decision.status,
    )


async def replay_decisions(
    journal: Any,
    backend: ModelBackend,
    settings: ModelSettings | None = None,
    *,
    games: Sequence[int] | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    changed: Mapping[str, Any] | None = None,
) -> ReplayReport:
    """Re-send the recorded requests of ``journal`` to ``backend``.

    Each request goes with the model settings and output mode its game was played with, except
    the ones ``changed`` names (:func:`replay_settings`); ``settings`` stands in for a journal
    that recorded none. ``limit`` replays only the first N decisions.
    """
    chosen = []
    for decision in recorded_decisions(journal, games):
        chosen.append(decision)
        if limit is not None and len(chosen) >= limit:
            break
    overrides = dict(changed or {})
    fallback = settings if settings is not None else ModelSettings()
    plans = [(d, *replay_settings(d, overrides, fallback)) for d in chosen]
    gate = asyncio.Semaphore(max(1, concurrency))
    replayed = await asyncio.gather(*(_replay_one(backend, d, s, m, gate) for d, s, m in plans))
    return ReplayReport(
        source=str(getattr(journal, "path", "journal")),
        model=backend.spec,
        settings=overrides,
        decisions=list(replayed),
        recorded_games=full_game_summary(journal, games),
    )


def full_game_summary(journal: Any, games: Sequence[int] | None = None) -> FullGameSummary:
    """Decisions, wall-move rate (over played decisions), fallbacks and successes of the LLM
    games in ``journal``."""
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
                if not isinstance(record, Mapping) or not {"attempts", "messages"} & record.keys():
                    continue  # not a model decision (a classical policy's record)
                counted = True
                summary.decisions += 1
                status = record.get("status")
                summary.fallbacks += status == "fallback"
                summary.outages += status == "outage"
                quirks.update(record.get("quirks") or {})
                if status not in (None, "ok"):
                    continue  # not the model's play: counted apart, in no rate
                summary.played += 1
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
    return any(n in WALL_EVENTS for n in names)


# --- command line ----------------------------------------------------------------------------


def _parse_sets(pairs: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set takes key=value (for example temperature=0.2), got {pair!r}")
        if key not in REPLAY_KEYS:
            raise ValueError(
                f"--set {key}: not a setting a replay can change; use one of "
                f"{', '.join(REPLAY_KEYS)}"
            )
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
        help="a model setting to change from the recorded ones, e.g. temperature=0.2, or "
        "output_mode=prompted (repeatable; everything else is replayed as recorded)",
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
        journal = open_journal(args.journal)
        first = next(iter(recorded_decisions(journal)), None)
        settings = replay_settings(first, changed, ModelSettings())[0] if first else None
    except (ValueError, FileNotFoundError, ValidationError) as exc:
        print(f"maze-envs replay-decisions: error: {exc}", file=sys.stderr)
        return 2
    spec = args.model or _recorded_model(journal)
    if spec is None or settings is None:
        print(f"maze-envs replay-decisions: no LLM decisions in {args.journal}", file=sys.stderr)
        return 1
    from llm_policies.backends.make import make_backend

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
