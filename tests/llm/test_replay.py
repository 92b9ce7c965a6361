"""Decision replay: recorded prompts re-sent with other settings, compared with the recorded
actions and with full games; the prompt stored once per distinct prefix."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from llm_policies.apps.replay import (
    full_game_summary,
    main,
    open_journal,
    recorded_decisions,
    replay_decisions,
)
from llm_policies.backends.base import ModelRequest
from llm_policies.policy import EscapeLLMPolicy
from llm_policies.settings import ModelSettings
from tests.llm.harness_support import (
    FakeBackend,
    last_user,
    outage,
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
    # one system prompt shared by every agent (the agent's name opens its user message, from
    # prompt version v14) and one schema: two blobs, however many turns and agents
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 2


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
    import llm_policies.backends.make as base

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


def _record_with(path: Path, backend: Any, **options: Any) -> None:
    policies = {a: EscapeLLMPolicy(backend, **options) for a in ("A", "B", "C")}
    asyncio.run(
        record_escape_game(path, policies, 3, preset="sparse", width=8, height=8, max_turns=6)
    )


def test_a_replay_reuses_the_recorded_settings_unless_set_changes_them(
    tmp_path: Path, monkeypatch: Any
) -> None:
    path = tmp_path / "recorded.sqlite"
    played_with = ModelSettings(max_output_tokens=300, seed=5, temperature=0.7)
    _record_with(path, FakeBackend(wall_follower_reply), settings=played_with, output_mode="native")
    import llm_policies.backends.make as base

    replayers: list[FakeBackend] = []

    def make(spec: str, settings: ModelSettings) -> FakeBackend:
        replayers.append(FakeBackend(_always_north))
        return replayers[-1]

    monkeypatch.setattr(base, "make_backend", make)
    assert main([str(path), "--limit", "6"]) == 0
    sent = replayers[-1].requests
    assert len(sent) == 6
    assert {
        (r.settings.max_output_tokens, r.settings.seed, r.settings.temperature) for r in sent
    } == {(300, 5, 0.7)}  # before: 300 / 5 became None
    assert {r.output_mode for r in sent} == {"native"}
    assert (
        main(
            [str(path), "--limit", "6", "--set", "temperature=0.2", "--set", "output_mode=prompted"]
        )
        == 0
    )
    sent = replayers[-1].requests
    assert {
        (r.settings.max_output_tokens, r.settings.seed, r.settings.temperature) for r in sent
    } == {(300, 5, 0.2)}
    assert {r.output_mode for r in sent} == {"prompted"}
    assert main([str(path), "--set", "prompt_version=v3"]) == 2  # not a replay setting


def test_outages_and_fallbacks_are_left_out_of_the_rates_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "recorded.sqlite"
    calls = iter(range(10_000))

    def flaky(request: ModelRequest) -> Any:
        # every other call is an outage: the recorded action is then STAY, not the model's
        return outage() if next(calls) % 2 else wall_follower_reply(request)

    _record_with(path, FakeBackend(flaky), output_mode="tool")
    with open_journal(path) as journal:
        recorded = list(recorded_decisions(journal))
        statuses = Counter(d.status for d in recorded)
        assert statuses["outage"] > 0 and statuses["ok"] > 0
        stay = FakeBackend(lambda r: {"move": "STAY", "notebook": None, "radio": None})
        report = asyncio.run(replay_decisions(journal, stay))
        summary = full_game_summary(journal)
    # a STAY replay agrees with no move the model played: not with the outages' STAYs
    ok = [d for d in report.decisions if d.recorded_status == "ok"]
    assert report.agreement == sum(d.recorded == "STAY" for d in ok) / len(ok)
    data = report.to_json()
    assert data["excluded"] == {"recorded outage": statuses["outage"]}
    assert data["compared"] == statuses["ok"] == data["agreement_interval"]["n"]
    assert data["recorded_wall_interval"]["n"] <= statuses["ok"]
    text = report.to_markdown()
    assert f"recorded outage {statuses['outage']}" in text
    # full games: the wall-move rate is over the played decisions only
    assert summary.decisions == len(recorded) and summary.played == statuses["ok"]
    assert summary.outages == statuses["outage"]
