"""Decision replay: recorded prompts re-sent with other settings, compared with the recorded
actions and with full games; the prompt stored once per distinct prefix."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from llm_policies.backends.base import ModelRequest
from llm_policies.policy import EscapeLLMPolicy
from llm_policies.replay import (
    full_game_summary,
    main,
    open_journal,
    recorded_decisions,
    replay_decisions,
)
from llm_policies.settings import ModelSettings
from tests.llm.harness_support import (
    FakeBackend,
    last_user,
    record_escape_game,
    wall_follower_reply,
)


def _record(path: Path, seed: int = 3, max_turns: int = 25) -> Any:
    backend = FakeBackend(wall_follower_reply)
    policies = {a: EscapeLLMPolicy(backend, output_mode="tool") for a in ("A", "B", "C")}
    env = asyncio.run(
        record_escape_game(
            path, policies, seed, preset="sparse", width=8, height=8, max_turns=max_turns
        )
    )
    return env, backend


def _always_north(request: ModelRequest) -> dict[str, Any]:
    return {"move": "N", "notebook": None, "radio": None}


def _edges_of(request: ModelRequest) -> dict[str, str]:
    line = next(x for x in last_user(request).splitlines() if x.startswith("Cell: "))
    parts = line.removeprefix("Cell: ").rstrip(".").split(", ")
    return {p.split(" ")[0]: p.split(" ")[1] for p in parts}


def test_recorded_requests_are_rebuilt_exactly_and_prefixes_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    _, backend = _record(path)
    with open_journal(path) as journal:
        decisions = list(recorded_decisions(journal))
    assert len(decisions) == len(backend.requests)
    sent = {(r.system, r.messages) for r in backend.requests}
    assert {(d.system, d.messages) for d in decisions} == sent
    assert all(d.schema == backend.requests[0].schema for d in decisions)
    # one system prompt per agent and one schema: four blobs, however many turns
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 4


def test_replay_compares_with_the_recorded_actions(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    _, recorded = _record(path)
    expected_walls = sum(_edges_of(r)["N"] != "open" for r in recorded.requests)
    expected_agree = sum(wall_follower_reply(r)["move"] == "N" for r in recorded.requests)
    replay_backend = FakeBackend(_always_north)
    with open_journal(path) as journal:
        report = asyncio.run(
            replay_decisions(
                journal,
                replay_backend,
                ModelSettings(temperature=0.2),
                changed={"temperature": 0.2},
            )
        )
    n = len(recorded.requests)
    assert len(report.decisions) == n and len(replay_backend.requests) == n
    assert all(r.settings.temperature == 0.2 for r in replay_backend.requests)
    assert report.recorded_wall_rate == 0.0  # the wall follower never walks into a wall
    assert report.replayed_wall_rate == expected_walls / n
    assert report.agreement == expected_agree / n
    assert report.recorded_games is not None and report.recorded_games.decisions == n
    text = report.to_markdown()
    assert "| replayed decisions |" in text and "temperature=0.2" in text
    assert "No full games with these settings were given" in text


def test_full_games_are_summarised_beside_the_replay(tmp_path: Path, capsys: Any) -> None:
    source, full = tmp_path / "recorded.sqlite", tmp_path / "full.sqlite"
    _record(source)
    backend = FakeBackend(_always_north)
    policies = {a: EscapeLLMPolicy(backend) for a in ("A", "B", "C")}
    asyncio.run(
        record_escape_game(full, policies, 3, preset="sparse", width=8, height=8, max_turns=25)
    )
    walls = sum(_edges_of(r)["N"] != "open" for r in backend.requests)
    with open_journal(full) as journal:
        summary = full_game_summary(journal)
    assert summary.games == 1 and summary.decisions == len(backend.requests) == 75
    assert summary.wall_move_rate == walls / 75


def test_the_command_reports_side_by_side(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    source = tmp_path / "recorded.sqlite"
    _record(source)
    import llm_policies.backends.base as base

    monkeypatch.setattr(base, "make_backend", lambda spec, settings: FakeBackend(_always_north))
    out = tmp_path / "report.json"
    code = main(
        [str(source), "--set", "temperature=0.2", "--full-games", str(source), "--json", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"# Decision replay of {source}")
    assert "| full games, new settings (1 games, 0 won) |" in printed
    data = json.loads(out.read_text())
    assert data["settings"] == {"temperature": 0.2} and data["decisions"] == 75


def test_the_command_refuses_bad_input(tmp_path: Path, capsys: Any) -> None:
    assert main([str(tmp_path / "missing.sqlite")]) == 2
    assert "no journal at" in capsys.readouterr().err
    assert main([str(tmp_path / "x.sqlite"), "--set", "temperature"]) == 2
    assert "--set takes key=value" in capsys.readouterr().err
