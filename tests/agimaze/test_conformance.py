"""Conformance: replay the real engine's recordings through our engine (SPEC section 7).

Every position (per_step, seq) and every narration line (txt) must agree: 100 %, per file.
The recordings are read from ../shared at test time (skipped when absent) and only the
``*valid*`` files are used. The agreement per file is printed in the terminal summary.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from maze_envs.agimaze.engine import PlayerState, compile_labyrinth, transition
from maze_envs.agimaze.mapfmt import parse_map, render_map
from tests.agimaze.traces import (
    AGREEMENT,
    read_narration_traces,
    read_position_records,
    recover_hidden_glyphs,
    valid_files,
)
from tests.conftest import shared_root

pytestmark = pytest.mark.shared

_ROOT = shared_root()
_TRACES = _ROOT / "agimaze" / "traces" if _ROOT is not None else None


def _files(kind: str) -> list[str]:
    if _TRACES is None or not (_TRACES / kind).is_dir():
        return ["<recordings absent>"]
    return [p.name for p in valid_files(_TRACES, kind)]


def _path(shared_dir: Path, kind: str, name: str) -> Path:
    path = shared_dir / "agimaze" / "traces" / kind / name
    if not path.is_file():
        pytest.skip(f"recording {kind}/{name} is not in {shared_dir}")
    return path


def _report(label: str, ok: int, total: int, unit: str, failures: list[str]) -> None:
    AGREEMENT[f"{label} {unit}"] = (ok, total, unit)
    print(f"{label}: {ok}/{total} {unit} agree")
    assert total > 0, f"{label}: no records parsed"
    assert ok == total, f"{label}: {total - ok} disagreements, first ones:\n" + "\n".join(
        failures[:10]
    )


@pytest.mark.parametrize("name", _files("per_step"))
def test_per_step_positions(shared_dir: Path, name: str) -> None:
    """Each record is one action from a mid-walk state, replayed empty-handed (SPEC section 7)."""
    records = read_position_records(_path(shared_dir, "per_step", name))
    hidden = recover_hidden_glyphs(records)
    ok, maps_ok, failures = 0, 0, []
    for record, under in zip(records, hidden, strict=True):
        if under is None:
            failures.append(f"line {record.line}: the glyph under S could not be recovered")
            continue
        parsed = parse_map(record.map_text, under_player=under)
        maps_ok += render_map(parsed.labyrinth, PlayerState(parsed.player)) == record.map_text
        compiled = compile_labyrinth(parsed.labyrinth)
        state = PlayerState(parsed.player)
        won = False
        for action in record.actions:
            result = transition(compiled, state, action)
            state, won = result.state, result.won
        # Terminal transitions are never recorded in per_step files.
        if state.pos == record.target and not won:
            ok += 1
        else:
            failures.append(f"line {record.line}: got {state.pos}, recorded {record.target}")
    _report(f"per_step/{name}", ok, len(records), "positions", failures)
    _report(f"per_step/{name}", maps_ok, len(records), "maps round-trip", ["map text differs"])


@pytest.mark.parametrize("name", _files("seq"))
def test_seq_positions(shared_dir: Path, name: str) -> None:
    """Each record is a start map and h actions; the start cell (under S) is plain floor."""
    records = read_position_records(_path(shared_dir, "seq", name))
    exit_file = "exit" in name
    ok, maps_ok, failures = 0, 0, []
    for record in records:
        parsed = parse_map(record.map_text)
        maps_ok += render_map(parsed.labyrinth) == record.map_text
        compiled = compile_labyrinth(parsed.labyrinth)
        state = PlayerState(parsed.player)
        wins = []
        for action in record.actions:
            result = transition(compiled, state, action)
            state = result.state
            wins.append(result.won)
        # Exit episodes win on their last action exactly; rnd files never contain a win.
        expected_wins = [False] * (len(wins) - 1) + [True] if exit_file else [False] * len(wins)
        if state.pos == record.target and wins == expected_wins:
            ok += 1
        else:
            failures.append(
                f"line {record.line}: got {state.pos} (wins {wins}), recorded {record.target}"
            )
    _report(f"seq/{name}", ok, len(records), "positions", failures)
    _report(f"seq/{name}", maps_ok, len(records), "maps round-trip", ["map text differs"])


@pytest.mark.parametrize("name", _files("txt"))
def test_txt_narration(shared_dir: Path, name: str) -> None:
    """Every narration line byte for byte, the start cell, and ``<END>Win</END>``."""
    traces = read_narration_traces(_path(shared_dir, "txt", name))
    ok = total = 0
    failures: list[str] = []
    for trace in traces:
        parsed = parse_map(trace.map_text)
        assert parsed.player == trace.start, f"line {trace.line}: S is not on the START cell"
        assert (parsed.labyrinth.rows, parsed.labyrinth.cols) == trace.board
        assert render_map(parsed.labyrinth) == trace.map_text, f"line {trace.line}: map differs"
        compiled = compile_labyrinth(parsed.labyrinth)
        state = PlayerState(parsed.player)
        won = False
        for k, (action, text) in enumerate(trace.steps, start=1):
            result = transition(compiled, state, action)
            state, won = result.state, result.won
            total += 1
            if result.text == text:
                ok += 1
            else:
                failures.append(f"line {trace.line}#{k} {action}: {result.text!r} != {text!r}")
        if won != trace.won:
            failures.append(f"line {trace.line}: won={won}, recorded won={trace.won}")
            total += 1
    _report(f"txt/{name}", ok, total, "narration lines", failures)


def test_replay_detects_a_missing_rule(shared_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sanity check of the harness: without "a bump mid-river still flows" records disagree."""
    from dataclasses import replace

    from maze_envs.agimaze import engine

    path = _path(shared_dir, "per_step", "3x4-rivers-rnd-valid.jsonl")
    records = read_position_records(path)
    hidden = recover_hidden_glyphs(records)
    original = engine._bump
    monkeypatch.setattr(
        engine, "_bump", lambda c, s, d, what: original(replace(c, rides={}), s, d, what)
    )
    wrong = []
    for record, under in zip(records, hidden, strict=True):
        parsed = parse_map(record.map_text, under_player=under or " ")
        state = PlayerState(parsed.player)
        for action in record.actions:
            state = engine.transition(parsed.labyrinth, state, action).state
        if state.pos != record.target:
            wrong.append(record.line)
    assert 27 in wrong and 371 in wrong  # SPEC section 2, rule 1: the two cited records
