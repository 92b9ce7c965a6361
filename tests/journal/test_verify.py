"""verify_game on toy games: every kind of damage is found at its own turn."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from maze_envs.journal import CorruptTurnError, Journal, JournalError, ReplayStep, verify_game
from maze_envs.journal.connect import PAGE_SIZE
from tests.journal.tamper import delete_turns, edit_turn, set_hashes, stored_turns, update_game
from tests.journal.toy import MOVES, ToyReplayer, play


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


def test_finished_unfinished_and_aborted_games(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        done = play(journal, 3, MOVES)
        cut = play(journal, 3, MOVES[:2], finish=False)
        abandoned = play(journal, 3, MOVES[:2], finish=False)
        journal.finish_game(abandoned, {"aborted": True, "turns": 2})
        ok = verify_game(journal, done, ToyReplayer)
        assert (ok.status, ok.ok, ok.turns_verified, ok.problem) == ("ok", True, 6, None)
        assert ok.describe() == "game 1: ok, 6 turns verified"
        unfinished = verify_game(journal, cut, ToyReplayer)
        assert (unfinished.status, unfinished.ok, unfinished.turns_verified) == (
            "unfinished",
            False,
            3,
        )
        assert unfinished.describe() == (
            "game 2: unfinished (no outcome); the 3 stored turns verify"
        )
        assert "TRUNCATED" not in unfinished.describe().upper()
        aborted = verify_game(journal, abandoned, ToyReplayer)
        assert (aborted.status, aborted.ok, aborted.turns_verified) == ("aborted", True, 3)
        assert aborted.describe() == "game 3: ok, 3 turns verified (abandoned before its end)"
        # integrity only, without a replayer, and the report says so
        rows_only = verify_game(journal, done)
        assert rows_only.ok and not rows_only.replayed
        assert rows_only.describe() == (
            "game 1: ok, 6 turns verified (stored rows only: no replayer for this env)"
        )


@pytest.mark.parametrize("turn", [0, 2, 5])
@pytest.mark.parametrize("column", ["observations", "actions", "events", "decisions", "state_hash"])
def test_tampering_is_reported_at_its_turn(journal_path: Path, column: str, turn: int) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
    if column == "state_hash":
        stored = stored_turns(journal_path, game_id)[turn].state_hash
        set_hashes(journal_path, game_id, turn, state_hash=bytes([stored[0] ^ 1]) + stored[1:])
    else:

        def plausible(text: str) -> str:  # a well-formed edit of what the turn stores
            return json.dumps({**json.loads(text), "A": 99}, separators=(",", ":"))

        edit_turn(journal_path, game_id, turn, column, plausible)
    with Journal(journal_path, readonly=True) as journal:
        for replayer in (ToyReplayer, None):
            report = verify_game(journal, game_id, replayer)
            assert report.status == "failed" and report.problem is not None
            assert report.problem.turn == turn, report.describe()
            assert report.turns_verified == turn
        with pytest.raises(CorruptTurnError) as raised:
            journal.load_game(game_id)
        assert raised.value.turn == turn


def test_an_edit_with_recomputed_record_hashes_is_caught_by_replay(journal_path: Path) -> None:
    """Someone who rewrites the record chain too is still caught: the replay disagrees."""
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
    edit_turn(journal_path, game_id, 4, "actions", lambda _: '{"A":1,"B":1}', rehash=True)
    with Journal(journal_path, readonly=True) as journal:
        assert verify_game(journal, game_id).ok  # the rows are consistent with each other...
        report = verify_game(journal, game_id, ToyReplayer)  # ...but not with the game
        assert report.problem is not None and report.problem.turn == 4
        assert report.problem.kind == "mismatch" and "state hash" in report.problem.reason


def test_gaps_broken_json_and_missing_tail(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        gap = play(journal, 3, MOVES)
        broken = play(journal, 3, MOVES)
        tail = play(journal, 3, MOVES)
    delete_turns(journal_path, gap, 3, 3)
    edit_turn(journal_path, broken, 2, "observations", lambda _: '{"A": [1,')
    delete_turns(journal_path, tail, 5, 5)
    with Journal(journal_path, readonly=True) as journal:
        for replayer in (ToyReplayer, None):
            report = verify_game(journal, gap, replayer)
            assert report.problem is not None
            assert (report.problem.turn, report.problem.kind) == (3, "missing")
            assert report.problem.reason == "turn 3 is missing (next is 4)"
            report = verify_game(journal, broken, replayer)
            assert report.problem is not None
            assert (report.problem.turn, report.problem.kind) == (2, "unreadable")
            assert "not valid JSON" in report.problem.reason
        report = verify_game(journal, tail, ToyReplayer)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (5, "missing")
        assert report.turns_verified == 5


def test_an_outcome_claiming_more_turns_than_stored_fails_at_the_first_missing(
    journal_path: Path,
) -> None:
    """The writer-death defect: an aborted game whose turns stop before its outcome says."""
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES[:4], finish=False)  # turns 0..4
        journal.finish_game(game_id, {"aborted": True, "turns": 4})
        assert verify_game(journal, game_id, ToyReplayer).status == "aborted"
    delete_turns(journal_path, game_id, 3)
    with Journal(journal_path, readonly=True) as journal:
        for replayer in (ToyReplayer, None):
            report = verify_game(journal, game_id, replayer)
            assert (report.status, report.ok, report.turns_verified) == ("failed", False, 3)
            assert report.problem is not None
            assert (report.problem.turn, report.problem.kind) == (3, "missing")
            assert report.problem.reason == (
                "the outcome says the game reached turn 4, but the journal holds turns 0 to 2 "
                "only: turn 3 is the first missing"
            )
    # and the other way: a turn stored beyond the turn the outcome ends at
    update_game(journal_path, game_id, outcome='{"turns":1}')
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (2, "extra")


def test_turns_after_the_end_and_wrong_outcome(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES, finish=False)
        journal.record_turn(
            game_id, 6, observations={}, actions={"A": 0}, events={}, state_digest=b""
        )
        journal.finish_game(game_id, {"final": "whatever"})
        report = verify_game(journal, game_id, ToyReplayer)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (6, "extra")
        liar = play(journal, 3, MOVES, finish=False)
        journal.finish_game(liar, {"final": {"A": 0, "B": 0}, "turns": 5})
        report = verify_game(journal, liar, ToyReplayer)
        assert report.problem is not None and "outcome differs" in report.problem.reason


def test_a_replayer_that_raises_is_reported(journal_path: Path) -> None:
    class Broken(ToyReplayer):
        def step(self, actions: Mapping[str, Any]) -> ReplayStep:
            raise RuntimeError("boom")

    def unbuildable() -> ToyReplayer:
        raise ImportError("no module named toys")

    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
        report = verify_game(journal, game_id, Broken)
        assert report.problem is not None and report.problem.turn == 1
        assert report.problem.kind == "replay_error" and "boom" in report.problem.reason
        report = verify_game(journal, game_id, unbuildable)
        assert report.problem is not None and report.problem.turn == 0
        assert report.problem.reason == "ImportError: no module named toys"


def _cut_database(source: Path, target: Path, fraction: float) -> None:
    """The first ``fraction`` of ``source``'s pages, its header saying so (a truncated copy)."""
    data = source.read_bytes()
    pages = int(len(data) * fraction) // PAGE_SIZE
    cut = bytearray(data[: pages * PAGE_SIZE])
    cut[28:32] = pages.to_bytes(4, "big")  # SQLite refuses a file shorter than its header says
    target.write_bytes(bytes(cut))


def test_a_cut_file_is_reported_not_crashed(journal_path: Path, tmp_path: Path) -> None:
    """The tail of a journal file lost: every game is verified, none crashes the verifier."""
    with Journal(journal_path) as journal:
        for seed in range(40):
            play(journal, seed, MOVES)
    db = sqlite3.connect(journal_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    cut = tmp_path / "cut.sqlite"
    _cut_database(journal_path, cut, 0.9)
    with Journal(cut, readonly=True) as journal:
        ids = journal.game_ids()
        assert ids == list(range(1, 41))  # the games table sits in the first pages
        reports = [verify_game(journal, game_id, ToyReplayer) for game_id in ids]
    assert [r.game_id for r in reports] == ids  # the loop ran over every game
    ok = [r for r in reports if r.ok]
    bad = [r for r in reports if not r.ok]
    assert ok and bad, [r.describe() for r in reports]
    assert all((r.status, r.turns_verified) == ("ok", 6) for r in ok)
    for report in bad:
        assert report.status == "failed" and report.problem is not None
        assert report.problem.kind == "unreadable", report.describe()
        assert "malformed" in report.problem.reason


def test_a_cut_wal_keeps_every_whole_commit(journal_path: Path, tmp_path: Path) -> None:
    """A crash mid-write leaves a WAL cut anywhere: what was committed before it verifies."""
    folder = tmp_path / "copy"
    folder.mkdir()
    copy = folder / "games.sqlite"
    with Journal(journal_path, durability="turn") as journal:  # a commit per turn
        for seed in range(6):
            play(journal, seed, MOVES, finish=seed != 5)
        # copy the files as a crash would leave them (the writer never closed the journal)
        copy.write_bytes(journal_path.read_bytes())
        wal = journal_path.with_name("games.sqlite-wal").read_bytes()
    frame = 24 + PAGE_SIZE  # WAL frame header + page
    for cut_at in (len(wal) - 7, 32 + 40 * frame + 100):  # inside the last frame, mid-file
        (folder / "games.sqlite-wal").write_bytes(wal[:cut_at])
        (folder / "games.sqlite-shm").unlink(missing_ok=True)
        with Journal(copy, readonly=True) as journal:
            reports = [verify_game(journal, g, ToyReplayer) for g in journal.game_ids()]
        assert reports, "nothing committed survived"
        for report in reports:
            assert report.status in {"ok", "unfinished"}, report.describe()
        assert all(r.turns_verified == 6 for r in reports if r.status == "ok")
        if cut_at == len(wal) - 7:  # only the last turn's commit is lost
            assert [r.status for r in reports] == ["ok"] * 5 + ["unfinished"]
            assert reports[-1].turns_verified == 5


def test_garbage_hashes_and_types_are_reported(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        games = [play(journal, 3, MOVES) for _ in range(3)]
    set_hashes(journal_path, games[0], 1, record_hash="zz")
    set_hashes(journal_path, games[1], 2, state_hash=b"7")
    edit_turn(journal_path, games[2], 4, "events", lambda _: "[1]")
    with Journal(journal_path, readonly=True) as journal:
        problems = [verify_game(journal, g, ToyReplayer).problem for g in games]
    assert [(p.turn, p.kind) for p in problems if p] == [
        (1, "edited"),
        (2, "mismatch"),  # a stored state hash that is not the hash: the replay finds it
        (4, "unreadable"),
    ]


def test_a_broken_header_is_reported(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
    update_game(journal_path, game_id, config="[1")
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id, ToyReplayer)
        with pytest.raises(JournalError, match="game header is unreadable"):
            journal.game(game_id)
    assert report.problem is not None
    assert (report.problem.turn, report.problem.kind) == (0, "unreadable")
