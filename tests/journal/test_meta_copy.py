"""Game meta, completed keys for resuming, and copying games between journals."""

from __future__ import annotations

import dataclasses
import pickle
import sqlite3
from pathlib import Path

import pytest

from maze_envs.journal import Blob, Journal, JournalError, verify_game
from tests.journal.test_decisions import SYSTEM, decisions_for
from tests.journal.toy import MOVES, ToyReplayer, cell, play


def _game_with_meta(journal: Journal, key: object, outcome: dict[str, object] | None) -> int:
    game_id = journal.start_game(
        env_id="toy-v0",
        config={},
        seed=1,
        library_version="t",
        meta={"run_key": key, "policies": ["explorer"], "temperature": 0.0},
    )
    journal.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
    if outcome is not None:
        journal.finish_game(game_id, outcome)
    return game_id


def test_meta_is_stored_with_the_game(tmp_path: Path) -> None:
    with Journal(tmp_path / "games.sqlite") as journal:
        game_id = _game_with_meta(journal, "run/1", {"success": True})
        assert journal.game(game_id).meta == {
            "run_key": "run/1",
            "policies": ["explorer"],
            "temperature": 0.0,
        }
        assert journal.games()[0].meta == journal.game(game_id).meta


def test_completed_keys_are_those_of_games_that_ended(tmp_path: Path) -> None:
    with Journal(tmp_path / "games.sqlite") as journal:
        _game_with_meta(journal, "done", {"success": False})
        _game_with_meta(journal, "aborted", {"aborted": True})
        _game_with_meta(journal, "running", None)
        _game_with_meta(journal, 17, {"success": True})
        _game_with_meta(journal, ["not", "a", "scalar"], {"success": True})
        plain = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        journal.finish_game(plain, {"success": True})  # no meta at all
        assert journal.completed_keys() == {"done", 17}
        assert journal.completed_keys("temperature") == {0.0}
        assert journal.completed_keys("absent") == set()


def test_copy_game_is_verbatim_and_verifies(tmp_path: Path) -> None:
    shard, run = tmp_path / "shard.sqlite", tmp_path / "run.sqlite"
    with Journal(shard) as source:
        source.start_game(env_id="toy-v0", config={}, seed=9, library_version="t")  # id 1
        game_id = play(source, 3, MOVES, decisions=decisions_for(5))  # id 2
    with Journal(run) as target, Journal(shard, readonly=True) as source:
        _game_with_meta(target, "first", {"success": True})  # the copy gets a new id
        new_id = target.copy_game(source, game_id)
        assert new_id == 2 and game_id == 2
        again = target.copy_game(source, game_id)
        assert again == 3
        original, copied = source.game(game_id), target.game(new_id)
        assert (copied.env_id, copied.config, copied.seed, copied.outcome, copied.created) == (
            original.env_id,
            original.config,
            original.seed,
            original.outcome,
            original.created,
        )
        assert list(target.raw_turns(new_id)) == list(source.raw_turns(game_id))
        report = verify_game(target, new_id, ToyReplayer)
        assert (report.status, report.turns_verified) == ("ok", 6)
        assert target.resolve(next(iter(target.turns(new_id))).decisions) == {}
        assert target.blob(Blob(SYSTEM).key) == SYSTEM
        with pytest.raises(JournalError, match="no game 7"):
            target.copy_game(source, 7)
    # blobs are stored once even when several copies reference them
    assert cell(run, "SELECT COUNT(*) FROM blobs") == 1 + 5


def test_a_failed_copy_leaves_nothing(tmp_path: Path) -> None:
    shard, run = tmp_path / "shard.sqlite", tmp_path / "run.sqlite"
    with Journal(shard) as source:
        game_id = play(source, 3, MOVES)
    with Journal(run) as target, Journal(shard, readonly=True) as source:
        target._db.execute("PRAGMA busy_timeout=50")
        locker = sqlite3.connect(run, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        with pytest.raises(JournalError, match=r"cannot copy game 1 .*locked"):
            target.copy_game(source, game_id)
        locker.execute("ROLLBACK")
        locker.close()
        assert target.game_ids() == []
        assert target.copy_game(source, game_id) == 1
        assert verify_game(target, 1, ToyReplayer).ok


def test_a_games_rows_travel_as_bytes_and_are_stored_whole(tmp_path: Path) -> None:
    """What a Ray worker sends back: the rows of a game, pickled (the object store) and stored
    in another journal, verbatim; it verifies there as where it was recorded."""
    with Journal(tmp_path / "worker.sqlite") as source:
        game_id = play(source, 3, MOVES, decisions=decisions_for(5))
        rows = source.stored_game(game_id)
        recorded = list(source.raw_turns(game_id))
    travelled = pickle.loads(pickle.dumps(rows))
    (tmp_path / "worker.sqlite").unlink()  # the worker's journal is gone: the rows suffice
    with Journal(tmp_path / "run.sqlite") as target:
        new_id = target.add_stored_game(travelled)
        assert list(target.raw_turns(new_id)) == recorded
        assert verify_game(target, new_id, ToyReplayer).ok
        assert target.blob(Blob(SYSTEM).key) == SYSTEM
        other = dataclasses.replace(travelled, schema_version=travelled.schema_version - 1)
        with pytest.raises(JournalError, match="both files must be of the same version"):
            target.add_stored_game(other)
        assert target.game_ids() == [new_id]
    readonly = Journal(tmp_path / "run.sqlite", readonly=True)
    with readonly, pytest.raises(JournalError, match="is open read-only"):
        readonly.add_stored_game(travelled)
