"""The per-game results rows of a run, kept beside its journal for fast resumes.

``rows.jsonl`` holds one JSON object per finished game, appended (and flushed) right after the
game was copied into the run's journal. The journal is the record; this file is a cache of what
the metrics computed live, so that resuming a run of many games needs neither a replay nor a read
of every turn. A line cut short by a crash is skipped; a game in the journal without a row (the
runner died between the two writes) is scored again from its journal rows
(:func:`row_from_journal`).

Example:
    >>> import tempfile, pathlib
    >>> store = RowStore(pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl")
    >>> store.append({"run_key": "k1", "status": "ok"})
    >>> store.append({"run_key": "k2", "status": "error"})
    >>> sorted(store.load())
    ['k1', 'k2']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from maze_envs.bench.envs import JournaledGame
from maze_envs.bench.metrics import (
    Status,
    UsageTally,
    decision_status,
    harness_endpoint,
    status_from_outcome,
)
from maze_envs.bench.rollout import Row, task_columns
from maze_envs.bench.spec import GameTask
from maze_envs.policies.interface import Decision, Usage


class RowStore:
    """Append-only JSON-lines file of result rows, keyed by run key (the last row wins)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = None

    def load(self) -> dict[str, Row]:
        rows: dict[str, Row] = {}
        if not self.path.is_file():
            return rows
        with self.path.open("rb") as handle:
            for line in handle:
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue  # a line cut short by a crash
                if isinstance(row, dict) and isinstance(row.get("run_key"), str):
                    rows[row["run_key"]] = row
        return rows

    def append(self, row: Row) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")
        self._file.write(orjson.dumps(row) + b"\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _usage_from_record(record: Any) -> Usage | None:
    usage = record.get("usage") if isinstance(record, dict) else None
    if not isinstance(usage, dict):
        return None
    try:
        return Usage(**{k: v for k, v in usage.items() if k in Usage.__dataclass_fields__})
    except TypeError:
        return None


def row_from_journal(journal: Any, game: Any) -> Row | None:
    """Score a recorded game again from its journal rows (None if it is not a runner game).

    Tokens and cost come back only where the policy's decision records carry a ``usage``
    object (:meth:`maze_envs.policies.interface.Usage.to_json` keys).
    """
    meta = getattr(game, "meta", None) or {}
    if not isinstance(meta.get("task"), dict) or game.outcome is None:
        return None
    task = GameTask.model_validate(meta["task"])
    turns = list(journal.turns(game.id))
    if not turns:
        return None
    outcome = game.outcome
    row = task_columns(task)
    row["game_id"] = game.id
    harness = meta.get("harness")
    reports = harness.items() if isinstance(harness, dict) else ()
    usage = UsageTally({agent: harness_endpoint(report) for agent, report in reports})
    agents = task.agents
    # every agent acted each turn; one without a record made the policy's own choice
    statuses: list[dict[str, Status]] = [{} for _ in turns]
    for index, turn in enumerate(turns[1:], start=1):
        records = getattr(turn, "decisions", None) or {}
        for agent in agents:
            record = records.get(agent)
            status = decision_status(record)
            statuses[index][agent] = status
            usage.add(
                agent,
                Decision(None, record=record, usage=_usage_from_record(record), status=status),
            )
    # the adapter that played the game scores it again (its environment's own rules)
    metrics = task.case.adapter_class().rescore(JournaledGame(task.case, turns, outcome, statuses))
    row.update(
        privileged=bool(meta.get("privileged")),
        status=status_from_outcome(outcome, usage.outages),
        error=outcome.get("error"),
        stop_reason=outcome.get("stop_reason"),
    )
    row.update(metrics)
    row.update(usage.row())
    row["elapsed_s"] = None
    return row
