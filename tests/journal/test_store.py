"""The Journal on its own: writing, reading, the file format, encoding, failures."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from maze_envs.journal import (
    APPLICATION_ID,
    GENESIS_HASH,
    SCHEMA_VERSION,
    Blob,
    Journal,
    JournalError,
    verify_game,
)
from maze_envs.journal.format import chain_body_hash
from tests.journal.tamper import edit_turn, stored_turns
from tests.journal.toy import MOVES, ToyGame, ToyReplayer, cell, play


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


def test_round_trip_and_hash_chain(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        first = play(journal, 3, MOVES)
        second = play(journal, 4, MOVES[:2], finish=False)
    with Journal(journal_path, readonly=True) as journal:
        assert journal.game_ids() == [first, second]
        record = journal.load_game(first)
        assert record.info.seed == 3 and record.info.config == {"n": 2}
        assert record.info.outcome == {"final": {"A": 5, "B": 2}, "turns": 5}
        assert record.info.meta is None
        assert record.info.turn_count == 6 and journal.game(second).outcome is None
        assert record.info.finished and not record.info.aborted
        assert [t.turn for t in record.turns] == list(range(6))
        # numpy values are stored as plain JSON; actions exactly as received
        assert record.turns[0].observations["A"] == {"pos": 3, "seen": [3, 0]}
        assert record.turns[3].actions == {"A": "jump", "B": 1}
        assert record.turns[3].events == {"A": "rejected", "B": "moved"}
        assert record.turns[3].decisions == {}
        # the documented chains: sha256(previous + digest) from 32 zero bytes, and the record
        # hash over the stored bytes of the row (its state hash and its body, which holds the
        # decisions too)
        game = ToyGame(3)
        previous = hashlib.sha256(GENESIS_HASH + game.digest()).digest()
        assert record.turns[0].state_hash == previous.hex()
        game.step(MOVES[0])
        assert record.turns[1].state_hash == hashlib.sha256(previous + game.digest()).hexdigest()
        turn, body, state_hash, record_hash = next(iter(journal.raw_turns(first)))
        expected = hashlib.sha256(GENESIS_HASH + state_hash + body).digest()
        assert (turn, record_hash, record.turns[0].record_hash) == (0, expected, expected.hex())
        assert chain_body_hash(GENESIS_HASH, state_hash, body) == expected


def test_record_turn_returns_the_stored_hash_and_enforces_order(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=None, library_version="t")
        with pytest.raises(JournalError, match="out of order; the next turn is 0"):
            journal.record_turn(
                game_id, 1, observations={}, actions={}, events={}, state_digest=b""
            )
        stored = journal.record_turn(
            game_id, 0, observations={}, actions={}, events={}, state_digest=b"x"
        )
        assert stored == hashlib.sha256(GENESIS_HASH + b"x").hexdigest()
        journal.finish_game(game_id, {"done": True})
        with pytest.raises(JournalError, match="already finished"):
            journal.finish_game(game_id, {})
    with Journal(journal_path) as journal, pytest.raises(JournalError, match="is finished"):
        journal.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")


def test_every_recorded_turn_is_committed_when_record_turn_returns(journal_path: Path) -> None:
    with Journal(journal_path, durability="turn") as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        assert journal.committed_turn(game_id) is None
        for turn in range(6):
            journal.record_turn(
                game_id,
                turn,
                observations={"A": turn},
                actions={},
                events={},
                state_digest=b"%d" % turn,
            )
            assert journal.committed_turn(game_id) == turn
            # another connection sees exactly the turns recorded so far, at once
            assert cell(journal_path, "SELECT COUNT(*) FROM turns") == turn + 1
            assert cell(journal_path, "SELECT MAX(turn) FROM turns") == turn


def test_group_commit_writes_64_turns_at_a_time_and_at_every_flush(journal_path: Path) -> None:
    with Journal(journal_path) as journal:  # durability="batch", the default
        assert journal.durability == "batch"
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        for turn in range(70):
            journal.record_turn(
                game_id, turn, observations={"A": turn}, actions={}, events={}, state_digest=b""
            )
            committed = None if turn < 63 else 63  # the 64th pending row commits the batch
            assert journal.committed_turn(game_id) == committed
            assert journal.pending_turns() == turn + 1 - (0 if turn < 63 else 64)
            # another connection sees exactly the committed turns
            assert cell(journal_path, "SELECT COUNT(*) FROM turns") == (committed or -1) + 1
        journal.flush()
        assert journal.committed_turn(game_id) == 69 and journal.pending_turns() == 0
        assert cell(journal_path, "SELECT COUNT(*) FROM turns") == 70
        journal.record_turn(game_id, 70, observations={}, actions={}, events={}, state_digest=b"")
        assert journal.game(game_id).turn_count == 71  # this journal's own reads commit first
        journal.record_turn(game_id, 71, observations={}, actions={}, events={}, state_digest=b"")
        journal.finish_game(game_id, {"turns": 71})  # the outcome commits the turns first
        assert cell(journal_path, "SELECT COUNT(*) FROM turns") == 72
        journal.start_game(env_id="toy-v0", config={}, seed=2, library_version="t")
        journal.record_turn(2, 0, observations={}, actions={}, events={}, state_digest=b"")
    assert cell(journal_path, "SELECT COUNT(*) FROM turns WHERE game_id = 2") == 1  # at close


def test_an_unclosed_journal_commits_its_batch_when_collected(journal_path: Path) -> None:
    journal = Journal(journal_path)
    game_id = play(journal, 3, MOVES[:2], finish=False)
    assert cell(journal_path, "SELECT COUNT(*) FROM turns") == 0
    del journal  # never closed
    assert cell(journal_path, "SELECT COUNT(*) FROM turns WHERE game_id = ?", game_id) == 3


def test_both_durabilities_store_identical_rows(tmp_path: Path) -> None:
    decisions = [{"A": {"prompt": Blob("a long prompt"), "n": k}} for k in range(len(MOVES))]
    rows = {}
    for durability in ("turn", "batch"):
        path = tmp_path / f"{durability}.sqlite"
        with Journal(path, durability=durability) as journal:
            for seed in (3, 4):
                play(journal, seed, MOVES, decisions=decisions)
            play(journal, 5, MOVES[:3], finish=False)
        db = sqlite3.connect(path)
        try:
            rows[durability] = (
                db.execute("SELECT * FROM turns ORDER BY game_id, turn").fetchall(),
                db.execute("SELECT * FROM blobs ORDER BY key").fetchall(),
                db.execute("SELECT id, outcome FROM games ORDER BY id").fetchall(),
            )
        finally:
            db.close()
    assert len(rows["turn"][0]) == 6 + 6 + 4 and rows["turn"][1]
    assert rows["batch"] == rows["turn"]  # every byte of every row, hashes included


def test_durability_must_be_batch_or_turn(journal_path: Path) -> None:
    with pytest.raises(ValueError, match=r"durability must be 'batch' .* or 'turn' .*'each'"):
        Journal(journal_path, durability="each")
    assert not journal_path.exists()


def test_a_reopened_journal_continues_the_chain(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 5, MOVES[:2], finish=False)
    with Journal(journal_path) as journal:
        game = ToyGame(5)
        for actions in MOVES[:3]:
            game.step(actions)
        journal.record_turn(
            game_id,
            3,
            observations=game.observations(),
            actions=MOVES[2],
            events={"A": "rejected", "B": "moved"},
            state_digest=game.digest(),
        )
        report = verify_game(journal, game_id, ToyReplayer)
        assert (report.status, report.turns_verified) == ("unfinished", 4)


class Custom(Mapping[str, Any]):
    """A read-only mapping that is not a dict."""

    def __init__(self, **items: Any) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def test_actions_of_any_mapping_and_numpy_scalars_are_stored_as_plain_json(
    journal_path: Path,
) -> None:
    actions = {
        "A": MappingProxyType({"move": np.int64(2), "notebook": Custom(edit=np.int8(1), text="x")}),
        "B": Custom(move=np.array(3), notebook=MappingProxyType({"append": "hi"})),
        "C": (np.float32(0.5), [np.bool_(True)]),
    }
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        journal.record_turn(
            game_id, 0, observations={}, actions=actions, events={}, state_digest=b""
        )
        (turn,) = journal.turns(game_id)
    assert turn.actions == {
        "A": {"move": 2, "notebook": {"edit": 1, "text": "x"}},
        "B": {"move": 3, "notebook": {"append": "hi"}},
        "C": [0.5, [True]],
    }
    (stored,) = stored_turns(journal_path, game_id)
    assert "unencodable" not in stored.parts["actions"]


def test_actions_json_cannot_hold_are_refused_not_stored_opaquely(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        for bad, culprit in (({"A": "N", "B": object()}, "'B'"), ({"A": {(1, 2): 3}}, "'A'")):
            with pytest.raises(JournalError, match=f"cannot record the actions.*{culprit}"):
                journal.record_turn(
                    game_id, 0, observations={}, actions=bad, events={}, state_digest=b""
                )
        assert journal.game(game_id).turn_count == 0  # nothing of those turns was stored
        journal.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
        assert journal.game(game_id).turn_count == 1


def test_big_seeds_are_kept_exactly(journal_path: Path) -> None:
    seed = 2**100 + 7
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=seed, library_version="t")
        assert journal.game(game_id).seed == seed


def test_an_outcome_never_claims_turns_the_file_lacks(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES[:2], finish=False)  # turns 0, 1, 2
        with pytest.raises(
            JournalError, match="claims 3 turns but the journal holds turns up to 2"
        ):
            journal.finish_game(game_id, {"turns": 3, "aborted": True})
        assert journal.game(game_id).outcome is None  # nothing stored
        journal.finish_game(game_id, {"turns": 2, "aborted": True})
        assert journal.game(game_id).outcome == {"turns": 2, "aborted": True}
        empty = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        with pytest.raises(JournalError, match="claims 0 turns but the journal holds no turn"):
            journal.finish_game(empty, {"turns": 0})


def test_not_a_journal_gives_clear_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database" * 100)
    for readonly in (False, True):
        with pytest.raises(JournalError, match="not a readable maze-envs journal"):
            Journal(text, readonly=readonly)
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(JournalError, match="not a maze-envs journal"):
        Journal(other)
    newer = tmp_path / "newer.sqlite"
    Journal(newer).close()
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(
        JournalError, match="schema version 99; this library reads versions 3, 4 and 5"
    ):
        Journal(newer)
    with pytest.raises(JournalError, match="no journal"):
        Journal(tmp_path / "absent.sqlite", create=False)
    with pytest.raises(JournalError, match="no journal"):
        Journal(tmp_path / "absent.sqlite", readonly=True)
    assert not (tmp_path / "absent.sqlite").exists()
    with pytest.raises(JournalError, match="not a file"):
        Journal(tmp_path, readonly=True)
    with Journal(tmp_path / "new.sqlite") as journal, pytest.raises(JournalError, match="no game"):
        journal.game(1)


def test_an_empty_file_is_refused_untouched_unless_creating(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for kwargs in ({"create": False}, {"readonly": True}):
        with pytest.raises(JournalError, match="is an empty file, not a maze-envs journal"):
            Journal(empty, **kwargs)  # type: ignore[arg-type]
        assert empty.stat().st_size == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]
    with Journal(empty) as journal:  # creating: an empty file becomes a journal
        assert journal.game_ids() == []
    assert empty.stat().st_size > 0


def _version_2_file(path: Path) -> None:
    """A journal as schema version 2 wrote it (no meta, no decisions, no blobs)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE games (id INTEGER PRIMARY KEY, env_id TEXT NOT NULL, config TEXT NOT NULL,"
        " generator TEXT, seed, library_version TEXT NOT NULL, created TEXT NOT NULL, outcome "
        "TEXT)"
    )
    db.execute(
        "CREATE TABLE turns (game_id INTEGER NOT NULL, turn INTEGER NOT NULL, observations TEXT "
        "NOT NULL, actions TEXT NOT NULL, events TEXT NOT NULL, state_hash TEXT NOT NULL, "
        "record_hash TEXT NOT NULL, UNIQUE (game_id, turn))"
    )
    db.execute(
        "INSERT INTO games (env_id, config, seed, library_version, created) VALUES "
        "('maze_envs/MazeEscape-v0', '{}', 1, '0.0.9', 'then')"
    )
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()


def test_version_2_files_are_refused_with_both_versions_named(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _version_2_file(path)
    before = path.read_bytes()
    for kwargs in ({}, {"readonly": True}, {"create": False}):
        with pytest.raises(JournalError) as raised:
            Journal(path, **kwargs)  # type: ignore[arg-type]
        message = str(raised.value)
        assert "schema version 2, written by maze-envs 0.0.9" in message
        assert f"reads versions 3, 4 and 5 and writes version {SCHEMA_VERSION}" in message
    assert path.read_bytes() == before


def test_file_format_markers(journal_path: Path) -> None:
    Journal(journal_path).close()
    db = sqlite3.connect(journal_path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = {
        table: [r[1] for r in db.execute(f"PRAGMA table_xinfo({table})")]
        for table in ("games", "turns", "blobs")
    }
    db.close()
    assert columns == {
        "games": [
            "id",
            "env_id",
            "config",
            "generator",
            "seed",
            "library_version",
            "created",
            "outcome",
            "meta",
        ],
        "turns": ["game_turn", "body", "state_hash", "record_hash", "game_id", "turn"],
        "blobs": ["key", "content"],
    }


def test_durability_setting(tmp_path: Path) -> None:
    for durable, expected in ((True, 1), (False, 0)):  # synchronous NORMAL = 1, OFF = 0
        with Journal(tmp_path / f"{durable}.sqlite", durable=durable) as journal:
            assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == expected


def test_a_conflicting_writer_gets_a_clear_error_at_once(journal_path: Path) -> None:
    first, second = (Journal(journal_path, durability="turn") for _ in range(2))
    with first, second:
        game_id = first.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        first.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
        second.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")
        with pytest.raises(JournalError, match=r"cannot write turn 1 of game 1 .*UNIQUE"):
            first.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")
        # the failed turn reloaded the chain's tail from the file: the next turn follows it
        first.record_turn(game_id, 2, observations={}, actions={}, events={}, state_digest=b"")
        report = verify_game(first, game_id)
        assert (report.status, report.turns_verified) == ("unfinished", 3)


def test_a_locked_file_fails_the_turn_and_stores_nothing_of_it(journal_path: Path) -> None:
    with Journal(journal_path, durability="turn") as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        journal.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
        journal._db.execute("PRAGMA busy_timeout=50")
        locker = sqlite3.connect(journal_path, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        with pytest.raises(JournalError, match=r"cannot write turn 1 of game 1 .*locked"):
            journal.record_turn(
                game_id, 1, observations={}, actions={}, events={}, state_digest=b""
            )
        locker.execute("ROLLBACK")
        locker.close()
        assert journal.game(game_id).turn_count == 1
        journal.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")
        assert journal.game(game_id).turn_count == 2


def test_a_locked_file_fails_the_batch_and_stores_nothing_of_it(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        journal.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
        journal.flush()
        for turn in (1, 2):
            journal.record_turn(
                game_id, turn, observations={}, actions={}, events={}, state_digest=b""
            )
        journal._db.execute("PRAGMA busy_timeout=50")
        locker = sqlite3.connect(journal_path, isolation_level=None)
        locker.execute("BEGIN IMMEDIATE")
        with pytest.raises(JournalError, match=r"cannot write turns 1-2 of game 1 .*locked"):
            journal.flush()
        locker.execute("ROLLBACK")
        locker.close()
        assert journal.pending_turns() == 0 and journal.committed_turn(game_id) == 0
        assert journal.game(game_id).turn_count == 1
        # the chain's tail was reloaded from the file: the lost turns can be sent again
        journal.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")
        assert journal.game(game_id).turn_count == 2
        report = verify_game(journal, game_id)
        assert (report.status, report.turns_verified) == ("unfinished", 2)


def test_checkpoints_keep_the_wal_short(
    journal_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from maze_envs.journal import store

    monkeypatch.setattr(store, "CHECKPOINT_ROW_BYTES", 64 * 1024)
    wal = journal_path.with_name(journal_path.name + "-wal")
    note = "x" * 4000
    sizes = []
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        for turn in range(400):
            journal.record_turn(
                game_id,
                turn,
                observations={"A": note, "turn": turn},
                actions={},
                events={},
                state_digest=turn.to_bytes(8, "little"),
            )
            sizes.append(wal.stat().st_size)
        journal.flush()
        # a reader sees every committed turn while checkpoints come and go
        with Journal(journal_path, readonly=True) as reader:
            assert reader.game(game_id).turn_count == 400
    # 400 turns of 4 KB rows are 1.6 MB; the WAL started over instead of holding them all
    # (a WAL file never shrinks while open: a restart overwrites it from its start)
    assert max(sizes) < 800 * 1024, max(sizes)
    assert not wal.exists() or wal.stat().st_size == 0  # closing checkpointed everything
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id)
        assert (report.status, report.turns_verified) == ("unfinished", 400)


def test_a_readonly_journal_refuses_every_write(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES[:1], finish=False)
    before = journal_path.read_bytes()
    with Journal.open_readonly(journal_path) as journal:
        assert journal.readonly
        calls = [
            lambda: journal.start_game(env_id="x", config={}, seed=1, library_version="t"),
            lambda: journal.record_turn(
                game_id, 2, observations={}, actions={}, events={}, state_digest=b""
            ),
            lambda: journal.finish_game(game_id, {}),
            lambda: journal.copy_game(journal, game_id),
        ]
        for call in calls:
            with pytest.raises(JournalError, match="is open read-only"):
                call()
        assert journal.game(game_id).turn_count == 2
    assert journal_path.read_bytes() == before


def test_tampering_is_caught_when_reading(journal_path: Path) -> None:
    from maze_envs.journal import CorruptTurnError

    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
    edit_turn(journal_path, game_id, 3, "events", lambda _: '{"A":"moved"}')
    with Journal(journal_path, readonly=True) as journal:
        with pytest.raises(CorruptTurnError) as raised:
            journal.load_game(game_id)
        assert raised.value.turn == 3
        assert [t.turn for t in itertools.islice(journal.turns(game_id), 3)] == [0, 1, 2]


def test_observations_or_events_json_cannot_hold_are_a_journal_error(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        for observations, events in (({"A": object()}, {}), ({}, {"A": {1: "x"}})):
            with pytest.raises(JournalError, match="cannot record turn 0 of game 1"):
                journal.record_turn(
                    game_id,
                    0,
                    observations=observations,
                    actions={},
                    events=events,
                    state_digest=b"",
                )
        assert journal.game(game_id).turn_count == 0
