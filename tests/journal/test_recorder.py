"""The generic Recorder: the game loop, meta and notes, and honesty when the journal fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maze_envs.journal import Blob, Journal, JournalError, Recorder, verify_game
from tests.journal.faults import inject
from tests.journal.toy import ToyGame, ToyReplayer


def record_toy(recorder: Recorder, seed: int, moves: list[dict[str, Any]]) -> ToyGame:
    game = ToyGame(seed)
    recorder.start(seed, game.observations(), game.digest())
    for turn, actions in enumerate(moves, start=1):
        events = game.step(actions)
        recorder.turn(turn, game.observations(), actions, events, game.digest())
        if game.done:
            recorder.finish(game.outcome())
            break
    return game


MOVES = [{"A": 1, "B": 0}] * 5


def advance(recorder: Recorder, game: ToyGame, turn: int) -> None:
    """Play one toy turn and record it."""
    events = game.step(MOVES[0])
    recorder.turn(turn, game.observations(), MOVES[0], events, game.digest())


def test_the_game_loop_with_meta_and_notes(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    recorder = Recorder(path, env_id="toy-v0", config={"n": 2}, library_version="9.9")
    recorder.set_game_meta({"run_key": "toy/3", "policies": ["go-east"]})
    game = ToyGame(3)
    game_id = recorder.start(3, game.observations(), game.digest())
    assert recorder.game_id == recorder.last_game_id == game_id == 1
    assert (recorder.last_turn, recorder.next_turn) == (0, 1)
    for turn in range(1, 6):
        recorder.note("A", {"prompt": Blob("long prompt"), "turn": turn})
        if turn == 2:
            recorder.note("A", {"replaced": True})  # a second note replaces the first
            recorder.note("B", {"turn": turn})
        events = game.step(MOVES[0])
        recorder.turn(turn, game.observations(), MOVES[0], events, game.digest())
    recorder.finish(game.outcome())
    assert recorder.game_id is None and recorder.last_game_id == 1
    # the meta was for that game only; notes do not carry over to the next game
    recorder.note("A", {"stale": True})
    recorder.start(4, game.observations(), game.digest())
    recorder.close()  # aborts the unfinished second game, closes the journal it opened
    with Journal(path, readonly=True) as journal:
        first, second = journal.games()
        turns = list(journal.turns(first.id))
        assert first.meta == {"run_key": "toy/3", "policies": ["go-east"]}
        assert first.library_version == "9.9" and first.config == {"n": 2}
        assert first.outcome == {"final": {"A": 8, "B": 0}, "turns": 5}
        assert second.meta is None and second.outcome == {"aborted": True, "turns": 0}
        assert [t.decisions for t in turns][:3] == [
            {},
            {"A": {"prompt": {"$blob": Blob("long prompt").key}, "turn": 1}},
            {"A": {"replaced": True}, "B": {"turn": 2}},
        ]
        assert journal.resolve(turns[5].decisions) == {"A": {"prompt": "long prompt", "turn": 5}}
        assert next(iter(journal.turns(second.id))).decisions == {}
        assert verify_game(journal, first.id, ToyReplayer).status == "ok"
        assert verify_game(journal, second.id).status == "aborted"


def test_an_outcome_gets_the_last_stored_turn(tmp_path: Path) -> None:
    with Journal(tmp_path / "games.sqlite") as journal:
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(1)
        recorder.start(1, game.observations(), game.digest())
        advance(recorder, game, 1)
        recorder.abort({"turns": 7, "score": 3})  # the env claims more than was recorded
        recorder.close()  # an injected journal stays open
        (info,) = journal.games()
        assert info.outcome == {"turns": 1, "score": 3, "aborted": True, "turns_played": 7}


def test_a_failed_write_stops_the_game_and_stores_only_what_is_in_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path, durability="turn") as journal:
        faults = inject(journal)
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(2)
        recorder.start(2, game.observations(), game.digest())
        for turn in (1, 2, 3):
            advance(recorder, game, turn)
        faults.fail["INSERT INTO turns"] = "disk I/O error"
        with pytest.raises(JournalError, match=r"cannot write turn 4 of game 1 .*disk I/O error"):
            advance(recorder, game, 4)
        faults.fail.clear()  # the disk is back: the game stays stopped all the same
        for call in (recorder.check, lambda: recorder.turn(5, {}, {}, {}, b"")):
            with pytest.raises(JournalError, match=r"game 1 is no longer being recorded \(the"):
                call()
        recorder.finish({"turns": 9})  # the env's end or abort changes nothing now
        recorder.abort({"turns": 9})
        (info,) = journal.games()
        assert info.outcome is not None
        assert info.outcome["aborted"] is True and info.outcome["turns"] == 3
        assert "disk I/O error" in info.outcome["journal_error"]
        assert info.turn_count == 4
        report = verify_game(journal, 1, ToyReplayer)
        assert (report.status, report.ok, report.turns_verified) == ("aborted", True, 4)
        # a new game records again
        record_toy(recorder, 5, MOVES)
        assert recorder.failure is None
        assert verify_game(journal, 2, ToyReplayer).status == "ok"


@pytest.mark.parametrize("durability", ["turn", "batch"])
def test_when_even_the_outcome_cannot_be_written_the_game_stays_unfinished(
    tmp_path: Path, durability: str
) -> None:
    with Journal(tmp_path / "games.sqlite", durability=durability) as journal:
        faults = inject(journal)
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(2)
        recorder.start(2, game.observations(), game.digest())
        advance(recorder, game, 1)
        recorder.flush()  # turns 0 and 1 are in the file
        faults.fail.update({"INSERT INTO turns": "database or disk is full", "UPDATE": "full"})
        with pytest.raises(JournalError, match="disk is full"):
            advance(recorder, game, 2)
            recorder.flush()  # batch: the commit of turn 2 fails here
        faults.fail.clear()
        (info,) = journal.games()
        assert info.outcome is None and info.turn_count == 2
        report = verify_game(journal, 1, ToyReplayer)
        assert (report.status, report.ok, report.turns_verified) == ("unfinished", False, 2)


def test_with_group_commit_a_failure_raises_from_the_call_that_commits(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path) as journal:  # durability="batch", the default
        faults = inject(journal)
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(2)
        recorder.start(2, game.observations(), game.digest())
        for turn in (1, 2, 3):
            advance(recorder, game, turn)
        assert journal.committed_turn(1) is None and journal.pending_turns() == 4
        recorder.flush()
        assert journal.committed_turn(1) == 3 and journal.pending_turns() == 0
        faults.fail["INSERT INTO turns"] = "disk I/O error"
        advance(recorder, game, 4)  # buffered: nothing fails yet
        advance(recorder, game, 5)
        with pytest.raises(JournalError, match=r"cannot write turns 4-5 of game 1 .*disk I/O"):
            recorder.finish(game.outcome())  # the game's end commits the batch: it fails
        faults.fail.clear()
        with pytest.raises(JournalError, match=r"game 1 is no longer being recorded \(the"):
            recorder.turn(6, {}, {}, {}, b"")
        (info,) = journal.games()
        assert info.outcome is not None and info.turn_count == 4
        # turn 4 was returned (its step came back); turn 5's step raised at the game's end
        assert (info.outcome["aborted"], info.outcome["turns"]) == (True, 3)
        assert info.outcome["turns_played"] == 4
        report = verify_game(journal, 1, ToyReplayer)
        assert (report.status, report.ok, report.turns_verified) == ("failed", False, 4)
        assert report.problem is not None and report.problem.turn == 4
        assert "turn 4 was played but never stored" in report.problem.reason
        assert "disk I/O error" in report.problem.reason


def test_a_full_batch_commits_and_its_failure_raises_from_that_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from maze_envs.journal import batch

    monkeypatch.setattr(batch, "BATCH_ROWS", 3)
    with Journal(tmp_path / "games.sqlite") as journal:
        faults = inject(journal)
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(2)
        recorder.start(2, game.observations(), game.digest())
        advance(recorder, game, 1)
        assert journal.committed_turn(1) is None
        advance(recorder, game, 2)  # the third pending row: turns 0-2 are committed
        assert journal.committed_turn(1) == 2
        faults.fail["INSERT INTO turns"] = "disk I/O error"
        advance(recorder, game, 3)
        advance(recorder, game, 4)
        with pytest.raises(JournalError, match=r"cannot write turns 3-5 of game 1"):
            advance(recorder, game, 5)  # a later step than the turns lost
        faults.fail.clear()
        with pytest.raises(JournalError, match="no longer being recorded"):
            recorder.check()
        info = journal.game(1)
        assert info.outcome is not None and info.turn_count == 3
        assert (info.outcome["aborted"], info.outcome["turns"]) == (True, 2)
        assert info.outcome["turns_played"] == 4  # turns 3 and 4 were returned, then lost
        report = verify_game(journal, 1, ToyReplayer)
        assert (report.status, report.turns_verified) == ("failed", 3)
        assert report.problem is not None and report.problem.kind == "missing"
        assert report.problem.reason.startswith("turns 3-4 were played but never stored")


def test_the_clock_commits_a_batch_when_a_turn_comes_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from maze_envs.journal import batch, store

    now = [1000.0]  # the journal's clock, moved by the test alone
    monkeypatch.setattr(store, "time", SimpleNamespace(monotonic=lambda: now[0]))
    with Journal(tmp_path / "games.sqlite") as journal:
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(2)
        recorder.start(2, game.observations(), game.digest())
        journal.flush()
        advance(recorder, game, 1)
        assert journal.committed_turn(1) == 0  # turn 1 waits in the batch
        now[0] += batch.BATCH_SECONDS + 0.01
        assert journal.committed_turn(1) == 0  # no timer: only an added turn looks at the clock
        advance(recorder, game, 2)
        assert journal.committed_turn(1) == 2


def test_a_failed_outcome_write_is_raised_and_stops_the_game(tmp_path: Path) -> None:
    with Journal(tmp_path / "games.sqlite") as journal:
        faults = inject(journal)
        recorder = Recorder(journal, env_id="toy-v0", config={})
        game = ToyGame(2)
        recorder.start(2, game.observations(), game.digest())
        faults.fail["UPDATE games"] = "disk I/O error"
        with pytest.raises(JournalError, match="disk I/O error"):
            recorder.finish({"final": 1})
        with pytest.raises(JournalError, match="its outcome could not be stored"):
            recorder.check()
        faults.fail.clear()
        assert journal.game(1).outcome is None


def test_turns_need_a_started_game(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "games.sqlite", env_id="toy-v0", config={})
    with pytest.raises(JournalError, match="start\\(\\) comes first"):
        recorder.turn(1, {}, {}, {}, b"")
    recorder.finish({})  # nothing to finish: harmless
    recorder.close()


def test_a_game_that_could_not_start_takes_no_turns(tmp_path: Path) -> None:
    with Journal(tmp_path / "games.sqlite") as journal:
        faults = inject(journal)
        recorder = Recorder(journal, env_id="toy-v0", config={})
        faults.fail["INSERT INTO games"] = "disk I/O error"
        with pytest.raises(JournalError, match="disk I/O error"):
            recorder.start(1, {}, b"")
        faults.fail.clear()
        with pytest.raises(JournalError, match="could not be started"):
            recorder.check()
        game = ToyGame(1)
        recorder.start(1, game.observations(), game.digest())  # the next start records again
        advance(recorder, game, 1)
        assert [g.turn_count for g in journal.games()] == [2]


def test_games_sharing_a_journal_each_learn_of_a_failed_batch(tmp_path: Path) -> None:
    with Journal(tmp_path / "games.sqlite") as journal:
        faults = inject(journal)
        first = Recorder(journal, env_id="toy-v0", config={})
        second = Recorder(journal, env_id="toy-v0", config={})
        games = ToyGame(1), ToyGame(2)
        for recorder, game in zip((first, second), games, strict=True):
            recorder.start(1, game.observations(), game.digest())
            advance(recorder, game, 1)
        journal.flush()  # turns 0-1 of both games are in the file
        for recorder, game in zip((first, second), games, strict=True):
            advance(recorder, game, 2)  # both wait in the one batch
        faults.fail["INSERT INTO turns"] = "disk I/O error"
        with pytest.raises(JournalError, match=r"turn 2 of game 1, turn 2 of game 2 .*disk I/O"):
            first.flush()
        faults.fail.clear()
        # the other game's next call says its turn was lost and stops it honestly too
        with pytest.raises(JournalError, match=r"out of order.*cannot write turn 2 of game 1, "):
            advance(second, games[1], 3)
        for game_id in (1, 2):
            info = journal.game(game_id)
            assert info.turn_count == 2 and info.outcome is not None
            assert (info.outcome["aborted"], info.outcome["turns"]) == (True, 1)
