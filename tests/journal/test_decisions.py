"""Per-decision records and blobs: round trip, stored once, every tampering found."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from maze_envs.journal import Blob, Journal, JournalError, verify_game
from tests.journal.tamper import edit_turn, run_sql, stored_turns
from tests.journal.toy import MOVES, ToyReplayer, cell, play

SYSTEM = "You are agent A in a maze. Explore, keep notes, radio your teammates. " * 50


class Usage(BaseModel):
    input_tokens: int
    output_tokens: int


def decisions_for(turns: int) -> list[dict[str, Any]]:
    """Records as an LLM policy makes them: a shared prompt prefix, a changing suffix."""
    return [
        {
            "A": {
                "prompt": [Blob(SYSTEM), f"turn {t}: what now?"],
                "reply": f"move east ({t})",
                "usage": Usage(input_tokens=900 + t, output_tokens=7),
                "latency": np.float64(0.25),
            },
            "B": {"prompt": (Blob(SYSTEM), Blob(f"B's long history {t} " * 30))},
        }
        for t in range(1, turns + 1)
    ]


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


def test_decisions_and_blobs_round_trip_and_are_stored_once(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES, decisions=decisions_for(5))
    with Journal(journal_path, readonly=True) as journal:
        turns = list(journal.turns(game_id))
        assert turns[0].decisions == {}
        stored = turns[2].decisions
        key = hashlib.sha256(SYSTEM.encode()).hexdigest()
        assert Blob(SYSTEM).key == key
        assert stored["A"] == {
            "prompt": [{"$blob": key}, "turn 2: what now?"],
            "reply": "move east (2)",
            "usage": {"input_tokens": 902, "output_tokens": 7},
            "latency": 0.25,
        }
        assert journal.blob(key) == SYSTEM
        resolved = journal.resolve(stored)
        assert resolved["A"]["prompt"] == [SYSTEM, "turn 2: what now?"]
        assert resolved["B"]["prompt"] == [SYSTEM, "B's long history 2 " * 30]
        report = verify_game(journal, game_id, ToyReplayer)
        assert (report.status, report.turns_verified) == ("ok", 6)
    # the system prompt once, plus one history blob per turn
    assert cell(journal_path, "SELECT COUNT(*) FROM blobs") == 1 + 5
    assert cell(journal_path, "SELECT COUNT(*) FROM blobs WHERE content = ?", SYSTEM) == 1
    size = sum(len(turn.parts["decisions"]) for turn in stored_turns(journal_path, game_id))
    assert size < len(SYSTEM)  # the rows hold references, not the text


def test_a_changed_blob_is_found_at_the_first_turn_that_uses_it(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES, decisions=decisions_for(5))
    key = Blob(SYSTEM).key
    run_sql(journal_path, "UPDATE blobs SET content = ? WHERE key = ?", SYSTEM + "!", key)
    with Journal(journal_path, readonly=True) as journal:
        for replayer in (ToyReplayer, None):
            report = verify_game(journal, game_id, replayer)
            assert report.problem is not None
            assert (report.problem.turn, report.problem.kind) == (1, "edited")
            assert report.turns_verified == 1
            assert key[:12] in report.problem.reason
        with pytest.raises(JournalError, match="was changed after it was recorded"):
            journal.blob(key)


def test_a_missing_blob_is_found(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES, decisions=decisions_for(5))
    history = Blob("B's long history 3 " * 30).key
    run_sql(journal_path, "DELETE FROM blobs WHERE key = ?", history)
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id, ToyReplayer)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (3, "missing")
        with pytest.raises(JournalError, match=f"no blob {history}"):
            journal.blob(history)


def test_an_edited_reference_or_record_breaks_the_chain(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES, decisions=decisions_for(5))

    def rewritten(text: str) -> str:
        value = json.loads(text)
        value["A"]["reply"] = "move west (4)"  # what the model said, rewritten
        return json.dumps(value)

    edit_turn(journal_path, game_id, 4, "decisions", rewritten)
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id, ToyReplayer)
    assert report.problem is not None
    assert (report.problem.turn, report.problem.kind) == (4, "edited")


def test_records_are_stored_leniently_but_never_fake_references(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        journal.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
        journal.record_turn(
            game_id,
            1,
            observations={},
            actions={},
            events={},
            state_digest=b"",
            decisions={"A": {7: "seven", "odd": object(), "set": {2, 1}}},
        )
        with pytest.raises(JournalError, match=r'cannot hold a \{"\$blob": \.\.\.\} object'):
            journal.record_turn(
                game_id,
                2,
                observations={},
                actions={},
                events={},
                state_digest=b"",
                decisions={"A": {"$blob": "0" * 64}},
            )
        turns = list(journal.turns(game_id))
    record = turns[1].decisions["A"]
    assert record["7"] == "seven" and record["set"] == [1, 2]
    assert set(record["odd"]) == {"unencodable"} and "object" in record["odd"]["unencodable"]
    assert len(turns) == 2


def test_blob_takes_text_only() -> None:
    with pytest.raises(ValueError, match="Blob holds text"):
        Blob(b"bytes")  # type: ignore[arg-type]
    assert Blob("x") == Blob("x") and Blob("x").key == hashlib.sha256(b"x").hexdigest()
