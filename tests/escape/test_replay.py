"""Replay and verification of real, journaled Maze Escape games."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maze_envs import maze_escape_v0
from maze_envs.escape.types import Action, AppendEdit, SpliceEdit
from maze_envs.journal import Journal
from maze_envs.verify import main, verify_journal
from tests.journal.tamper import (
    delete_turns,
    edit_turn,
    run_sql,
    set_hashes,
    stored_turns,
    update_game,
)

WORDS = ["tree", "left at piano", "dead end", "→ N", "日本", "exit?", "x" * 300]


def random_action(rng: np.random.Generator, notebook: str, splice: bool) -> Any:
    """Random moves with notebook edits (some out of range or too long) and radio messages."""
    text = str(rng.choice(WORDS)) * int(rng.integers(1, 5))
    radio = text if rng.random() < 0.3 else ""
    if rng.random() < 0.15:  # a typed model now and then: the env accepts both forms
        edit: SpliceEdit | AppendEdit | None = None
        if rng.random() < 0.5:
            edit = (
                SpliceEdit(start=len(notebook), end=len(notebook), text=text)
                if splice
                else (AppendEdit(text=text))
            )
        return Action(
            move=str(rng.choice(["N", "E", "S", "W", "STAY"])), notebook=edit, radio=radio or None
        )
    if splice:
        start = int(rng.integers(0, len(notebook) + 3))
        end = start + int(rng.integers(0, 4))
        notebook_edit = {"edit": int(rng.random() < 0.6), "start": start, "end": end, "text": text}
    else:
        notebook_edit = {"append": text if rng.random() < 0.6 else ""}
    return {"move": int(rng.integers(0, 5)), "notebook": notebook_edit, "radio": radio}


def play_random(path: Path, seed: int, **config: Any) -> None:
    env = maze_escape_v0.parallel_env(journal=path, **config)
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    splice = env.config.notebook_mode == "splice"
    while env.agents:
        actions = {a: random_action(rng, observations[a]["notebook"], splice) for a in env.agents}
        observations, *_ = env.step(actions)
    env.close()


FULL = {"preset": "full", "width": 7, "height": 6, "max_turns": 40, "radio_cooldown": 2}


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


@pytest.mark.parametrize(
    "config",
    [
        FULL,
        {
            **FULL,
            "notebook_mode": "rolling_log",
            "notebook_max_bytes": 600,
            "notebook_turn_bytes": 400,
        },
        {"preset": "navigator", "width": 5, "height": 8, "max_turns": 30},
        {"preset": "sparse", "num_agents": 5, "width": 6, "height": 6, "max_turns": 30},
    ],
)
def test_random_games_verify(journal_path: Path, config: dict[str, Any]) -> None:
    for seed in range(3):
        play_random(journal_path, seed, **config)
    reports = verify_journal(journal_path)
    assert [r.describe() for r in reports if not r.ok] == []
    with Journal(journal_path, readonly=True) as journal:
        games = journal.games()
        # the random play really exercised the notebook and the radio
        events = [e for g in games for t in journal.turns(g.id) for e in t.events.values()]
    assert {e["notebook"] for e in events} >= {"applied", "rejected"}
    assert {e["radio"] for e in events} >= {"sent", "refused"}
    assert [r.turns_verified for r in reports] == [g.turn_count for g in games]


def _edit_row(path: Path, game_id: int, turn: int, column: str, change: Any) -> None:
    if column == "state_hash":
        stored = stored_turns(path, game_id)[turn].state_hash
        set_hashes(path, game_id, turn, state_hash=change(stored))
    else:
        edit_turn(path, game_id, turn, column, change)


def _set_notebook(text: str) -> str:
    observations = json.loads(text)  # (what the turn stores: what changed)
    observations.setdefault("B", {})["notebook"] = "forged"
    return json.dumps(observations)


def _set_move(text: str) -> str:
    actions = json.loads(text)
    action = actions["A"]
    action["move"] = "W" if isinstance(action["move"], str) else (action["move"] + 1) % 5
    return json.dumps(actions)


def _flip_hash(stored: bytes) -> bytes:
    return bytes([stored[0] ^ 0xFF]) + stored[1:]


@pytest.mark.parametrize(
    ("column", "change", "turn"),
    [
        (column, change, turn)
        for column, change in [
            ("observations", _set_notebook),
            ("actions", _set_move),
            ("state_hash", _flip_hash),
        ]
        for turn in (0, 7, 19)
        if not (column == "actions" and turn == 0)  # turn 0 (the reset) has no actions
    ],
)
def test_tampering_is_found_at_its_turn(
    journal_path: Path, column: str, change: Any, turn: int
) -> None:
    play_random(journal_path, 1, **{**FULL, "max_turns": 20})
    _edit_row(journal_path, 1, turn, column, change)
    (report,) = verify_journal(journal_path)
    assert report.status == "failed" and report.problem is not None
    assert report.problem.turn == turn, report.describe()
    assert report.turns_verified == turn


def test_a_consistent_forgery_is_still_caught_by_the_replay(journal_path: Path) -> None:
    """Rewrite an action and every record hash after it: only the replay can tell."""
    play_random(journal_path, 2, **{**FULL, "max_turns": 20})
    edit_turn(journal_path, 1, 9, "actions", _set_move, rehash=True)
    (report,) = verify_journal(journal_path)
    assert report.problem is not None and report.problem.turn == 9
    assert report.problem.kind == "mismatch"


def test_unfinished_and_aborted_games(journal_path: Path) -> None:
    env = maze_escape_v0.parallel_env(journal=journal_path, **{**FULL, "max_turns": 500})
    for seed in (5, 6):  # the first game is abandoned by the second reset
        env.reset(seed=seed)
        for _ in range(12):
            env.step(
                {
                    a: {
                        "move": 4,
                        "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""},
                        "radio": "",
                    }
                    for a in env.agents
                }
            )
    # game 2 is left unfinished, as if the process had died (after its turns were committed:
    # with group commit they wait in the batch until a flush)
    env.recorder.flush()
    aborted, unfinished = verify_journal(journal_path)
    assert aborted.status == "aborted" and aborted.ok and aborted.turns_verified == 13
    assert unfinished.status == "unfinished" and not unfinished.ok
    assert unfinished.turns_verified == 13
    assert unfinished.describe() == "game 2: unfinished (no outcome); the 13 stored turns verify"
    env.close()  # closing finishes the game as aborted
    assert verify_journal(journal_path)[1].status == "aborted"


def test_missing_last_turn_and_broken_config(journal_path: Path) -> None:
    play_random(journal_path, 3, **{**FULL, "max_turns": 15})
    play_random(journal_path, 4, **{**FULL, "max_turns": 15})
    delete_turns(journal_path, 1, 15, 15)
    run_sql(journal_path, "UPDATE games SET config = json_set(config, '$.width', 3) WHERE id = 2")
    missing, broken = verify_journal(journal_path)
    assert missing.problem is not None
    assert (missing.problem.turn, missing.problem.kind) == (15, "missing")
    assert broken.problem is not None
    assert (broken.problem.turn, broken.problem.kind) == (0, "replay_error")
    assert "width" in broken.problem.reason


def test_cli(journal_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    play_random(journal_path, 1, **{**FULL, "max_turns": 10})
    play_random(journal_path, 2, **{**FULL, "max_turns": 10})
    assert main([str(journal_path)]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 game(s) verified" in out
    row = r"^ +1  maze_envs/MazeEscape-v0 +1 +11  ok, 11 turns verified$"
    assert re.search(row, out, re.MULTILINE), out
    _edit_row(journal_path, 2, 4, "observations", _set_notebook)
    assert main([str(journal_path), "--game", "1"]) == 0
    assert main([str(journal_path)]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 game(s) verified" in out
    failed = (
        r"^ +2  maze_envs/MazeEscape-v0 +2 +11  FAILED at turn 4 \(mismatch\): "
        "observation differs: 'B'"
    )
    assert re.search(failed, out, re.MULTILINE), out
    assert main([str(journal_path), "--game", "9"]) == 2
    not_journal = tmp_path / "x.txt"
    not_journal.write_text("no database here" * 64)
    assert main([str(not_journal)]) == 2
    assert main([str(tmp_path / "absent.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "not a readable maze-envs journal" in err and "no journal at" in err
    assert "no game [9]" in err


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24)
SPLICE = st.fixed_dictionaries(
    {
        "edit": st.integers(0, 1),
        "start": st.integers(0, 40),
        "end": st.integers(0, 40),
        "text": TEXT,
    }
)
APPEND = st.fixed_dictionaries({"append": TEXT})
MODES = {"splice": SPLICE, "rolling_log": APPEND}


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    preset=st.sampled_from(["sparse", "navigator", "full"]),
    mode=st.sampled_from(sorted(MODES)),
    data=st.data(),
)
def test_any_action_sequence_verifies(seed: int, preset: str, mode: str, data: Any) -> None:
    action = st.fixed_dictionaries(
        {"move": st.integers(0, 4), "notebook": MODES[mode], "radio": TEXT}
    )
    turns = data.draw(st.lists(st.tuples(action, action, action), min_size=1, max_size=25))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "games.sqlite"
        env = maze_escape_v0.parallel_env(
            preset=preset, width=5, height=5, max_turns=30, notebook_mode=mode, journal=path
        )
        env.reset(seed=seed)
        for actions in turns:
            if not env.agents:
                break
            env.step(dict(zip(env.agents, actions, strict=True)))
        env.close()
        (report,) = verify_journal(path)
    assert report.ok, report.describe()


def test_each_version_is_replayed_by_its_own_env_id(journal_path: Path) -> None:
    from maze_envs import maze_escape_v1

    for module in (maze_escape_v0, maze_escape_v1):
        env = module.parallel_env(journal=journal_path, **{**FULL, "max_turns": 12})
        observations, _ = env.reset(seed=8)
        rng = np.random.default_rng(8)
        while env.agents:
            env.step({a: random_action(rng, observations[a]["notebook"], True) for a in env.agents})
        env.close()
    with Journal(journal_path, readonly=True) as journal:
        assert [g.env_id for g in journal.games()] == [
            "maze_envs/MazeEscape-v0",
            "maze_envs/MazeEscape-v1",
        ]
    assert [(r.status, r.turns_verified) for r in verify_journal(journal_path)] == [("ok", 13)] * 2
    # the v1 game claimed to be v0: its observations (uniform layout) no longer replay
    update_game(journal_path, 2, env_id="maze_envs/MazeEscape-v0")
    run_sql(
        journal_path,
        "INSERT INTO games SELECT 3, 'maze_envs/MazeEscape-v9', config, generator, "
        "seed, library_version, created, outcome, meta FROM games WHERE id = 1",
    )
    _, relabelled, unknown = verify_journal(journal_path)
    assert relabelled.problem is not None
    assert (relabelled.problem.turn, relabelled.problem.kind) == (0, "mismatch")
    assert not unknown.replayed  # no replayer for that env id: the rows are checked only
