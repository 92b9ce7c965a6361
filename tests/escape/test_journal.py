"""The journal format on its own, driven by a tiny deterministic toy game and its replayer."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from maze_envs.journal import (
    APPLICATION_ID,
    GENESIS_HASH,
    CorruptTurnError,
    GameInfo,
    Journal,
    JournalError,
    ReplayStep,
    verify_game,
)


class ToyGame:
    """Agents on a line; each turn every agent adds its action to its position. Ends at turn 5."""

    LENGTH = 5

    def __init__(self, seed: int) -> None:
        self.positions = {"A": seed % 7, "B": seed % 3}
        self.turn = 0

    def digest(self) -> bytes:
        return json.dumps([self.turn, self.positions], sort_keys=True).encode()

    def observations(self) -> dict[str, Any]:
        return {
            a: {"pos": np.int64(p), "seen": np.array([p, self.turn])}
            for a, p in self.positions.items()
        }

    def step(self, actions: Mapping[str, Any]) -> dict[str, Any]:
        events: dict[str, Any] = {}
        for agent, move in actions.items():
            if isinstance(move, int) and move in (-1, 0, 1):
                self.positions[agent] += move
                events[agent] = "moved"
            else:
                events[agent] = "rejected"
        self.turn += 1
        return events

    @property
    def done(self) -> bool:
        return self.turn >= self.LENGTH

    def outcome(self) -> dict[str, Any]:
        return {"final": dict(self.positions)}


class ToyReplayer:
    def reset(self, game: GameInfo) -> ReplayStep:
        assert game.seed is not None
        self.game = ToyGame(game.seed)
        return ReplayStep(self.game.observations(), {}, self.game.digest(), False)

    def step(self, actions: Mapping[str, Any]) -> ReplayStep:
        events = self.game.step(actions)
        done = self.game.done
        outcome = self.game.outcome() if done else None
        return ReplayStep(self.game.observations(), events, self.game.digest(), done, outcome)


def play(journal: Journal, seed: int, moves: list[dict[str, Any]], finish: bool = True) -> int:
    game = ToyGame(seed)
    game_id = journal.start_game(env_id="toy-v0", config={"n": 2}, seed=seed, library_version="t")
    journal.record_turn(
        game_id,
        0,
        observations=game.observations(),
        actions={},
        events={},
        state_digest=game.digest(),
    )
    for turn, actions in enumerate(moves, start=1):
        events = game.step(actions)
        journal.record_turn(
            game_id,
            turn,
            observations=game.observations(),
            actions=actions,
            events=events,
            state_digest=game.digest(),
        )
        if game.done:
            break
    if finish:
        journal.finish_game(game_id, game.outcome())
    return game_id


MOVES: list[dict[str, Any]] = [{"A": 1, "B": -1}, {"A": 1, "B": 0}, {"A": "jump", "B": 1}] + [
    {"A": 0, "B": 1}
] * 2


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


def test_round_trip_and_hash_chain(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        first = play(journal, 3, MOVES)
        second = play(journal, 4, MOVES[:2], finish=False)
    with Journal(journal_path, create=False) as journal:
        assert journal.game_ids() == [first, second]
        record = journal.load_game(first)
        assert record.info.seed == 3 and record.info.config == {"n": 2}
        assert record.info.outcome == {"final": {"A": 5, "B": 2}}
        assert record.info.turn_count == 6 and journal.game(second).outcome is None
        assert [t.turn for t in record.turns] == list(range(6))
        # numpy values are stored as plain JSON; actions exactly as received
        assert record.turns[0].observations["A"] == {"pos": 3, "seen": [3, 0]}
        assert record.turns[3].actions == {"A": "jump", "B": 1}
        assert record.turns[3].events == {"A": "rejected", "B": "moved"}
        # the documented chain: sha256(previous + digest), starting from 32 zero bytes
        game = ToyGame(3)
        previous = hashlib.sha256(GENESIS_HASH + game.digest()).digest()
        assert record.turns[0].state_hash == previous.hex()
        game.step(MOVES[0])
        assert record.turns[1].state_hash == hashlib.sha256(previous + game.digest()).hexdigest()


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
        assert verify_game(journal, game_id, ToyReplayer).status == "truncated"


def test_unencodable_actions_are_recorded_not_fatal(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        journal.record_turn(
            game_id,
            0,
            observations={},
            actions={"A": object(), "B": {(1, 2): 3}, "C": "N"},
            events={},
            state_digest=b"",
        )
        actions = next(journal.turns(game_id)).actions
    assert actions["C"] == "N"
    assert set(actions["A"]) == {"unencodable"} and "object" in actions["A"]["unencodable"]
    assert "(1, 2)" in actions["B"]["unencodable"]


def test_big_seeds_are_kept_exactly(journal_path: Path) -> None:
    seed = 2**100 + 7
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=seed, library_version="t")
        assert journal.game(game_id).seed == seed


def test_replay_verifies_finished_and_truncated_games(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        done = play(journal, 3, MOVES)
        cut = play(journal, 3, MOVES[:2], finish=False)
        ok = verify_game(journal, done, ToyReplayer)
        assert ok.ok and ok.turns_verified == 6 and ok.problem is None
        truncated = verify_game(journal, cut, ToyReplayer)
        assert truncated.status == "truncated" and truncated.turns_verified == 3
        assert "TRUNCATED" in truncated.describe()
        # integrity only, without a replayer
        assert verify_game(journal, done).ok


def _tamper(path: Path, sql: str, *params: Any) -> None:
    db = sqlite3.connect(path)
    with db:
        db.execute(sql, params)
    db.close()


@pytest.mark.parametrize("turn", [0, 2, 5])
@pytest.mark.parametrize("column", ["observations", "actions", "events", "state_hash"])
def test_tampering_is_reported_at_its_turn(journal_path: Path, column: str, turn: int) -> None:
    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
    db = sqlite3.connect(journal_path)
    (text,) = db.execute(
        f"SELECT {column} FROM turns WHERE game_id = ? AND turn = ?", (game_id, turn)
    ).fetchone()
    db.close()
    if column == "state_hash":
        edited = ("0" if text[0] != "0" else "1") + text[1:]
    else:
        value = json.loads(text)
        value["A"] = 99  # a plausible, well-formed edit
        edited = json.dumps(value, separators=(",", ":"))
    _tamper(
        journal_path,
        f"UPDATE turns SET {column} = ? WHERE game_id = ? AND turn = ?",
        edited,
        game_id,
        turn,
    )
    with Journal(journal_path) as journal:
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
    from maze_envs.journal import chain_record_hash

    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
    db = sqlite3.connect(journal_path)
    rows = db.execute(
        "SELECT turn, observations, actions, events, state_hash FROM turns "
        "WHERE game_id = ? ORDER BY turn",
        (game_id,),
    ).fetchall()
    previous = GENESIS_HASH
    with db:
        for turn, obs, actions, events, state_hash in rows:
            if turn == 4:
                actions = '{"A":1,"B":1}'
            previous = chain_record_hash(previous, state_hash, obs, actions, events)
            db.execute(
                "UPDATE turns SET actions = ?, record_hash = ? WHERE game_id = ? AND turn = ?",
                (actions, previous.hex(), game_id, turn),
            )
    db.close()
    with Journal(journal_path) as journal:
        assert verify_game(journal, game_id).ok  # the rows are consistent with each other...
        report = verify_game(journal, game_id, ToyReplayer)  # ...but not with the game
        assert report.problem is not None and report.problem.turn == 4
        assert report.problem.kind == "mismatch" and "state hash" in report.problem.reason


def test_gaps_broken_json_and_missing_tail(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        gap = play(journal, 3, MOVES)
        broken = play(journal, 3, MOVES)
        tail = play(journal, 3, MOVES)
    _tamper(journal_path, "DELETE FROM turns WHERE game_id = ? AND turn = 3", gap)
    _tamper(
        journal_path,
        "UPDATE turns SET observations = '{\"A\": [1,' WHERE game_id = ? AND turn = 2",
        broken,
    )
    _tamper(journal_path, "DELETE FROM turns WHERE game_id = ? AND turn = 5", tail)
    with Journal(journal_path) as journal:
        report = verify_game(journal, gap, ToyReplayer)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (3, "missing")
        report = verify_game(journal, broken, ToyReplayer)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (2, "unreadable")
        assert "not valid JSON" in report.problem.reason
        report = verify_game(journal, tail, ToyReplayer)
        assert report.problem is not None
        assert (report.problem.turn, report.problem.kind) == (5, "missing")
        assert report.turns_verified == 5


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
        journal.finish_game(liar, {"final": {"A": 0, "B": 0}})
        report = verify_game(journal, liar, ToyReplayer)
        assert report.problem is not None and "outcome differs" in report.problem.reason


def test_a_replayer_that_raises_is_reported(journal_path: Path) -> None:
    class Broken(ToyReplayer):
        def step(self, actions: Mapping[str, Any]) -> ReplayStep:
            raise RuntimeError("boom")

    with Journal(journal_path) as journal:
        game_id = play(journal, 3, MOVES)
        report = verify_game(journal, game_id, Broken)
    assert report.problem is not None and report.problem.turn == 1
    assert report.problem.kind == "replay_error" and "boom" in report.problem.reason


def test_not_a_journal_gives_clear_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database" * 100)
    with pytest.raises(JournalError, match="not a readable maze-envs journal"):
        Journal(text)
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
    with pytest.raises(JournalError, match="schema version 99"):
        Journal(newer)
    with pytest.raises(JournalError, match="no journal"):
        Journal(tmp_path / "absent.sqlite", create=False)
    assert not (tmp_path / "absent.sqlite").exists()
    with Journal(tmp_path / "new.sqlite") as journal, pytest.raises(JournalError, match="no game"):
        journal.game(1)


def test_a_truncated_file_is_reported_not_crashed(journal_path: Path, tmp_path: Path) -> None:
    with Journal(journal_path) as journal:
        for seed in range(20):
            play(journal, seed, MOVES)
    db = sqlite3.connect(journal_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = journal_path.read_bytes()
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(data[: len(data) // 2])
    try:
        journal = Journal(cut)
    except JournalError:
        return  # refused at open: a clear error
    with journal:
        try:
            ids = journal.game_ids()
        except JournalError:
            return
        for game_id in ids:
            report = verify_game(journal, game_id, ToyReplayer)
            assert report.status in {"ok", "failed", "truncated"}


def test_file_format_markers(journal_path: Path) -> None:
    Journal(journal_path).close()
    db = sqlite3.connect(journal_path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_durability_setting(tmp_path: Path) -> None:
    for durable, expected in ((True, 1), (False, 0)):  # synchronous NORMAL = 1, OFF = 0
        with Journal(tmp_path / f"{durable}.sqlite", durable=durable) as journal:
            assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == expected


def test_a_conflicting_writer_gets_a_clear_error(journal_path: Path) -> None:
    with Journal(journal_path) as first, Journal(journal_path) as second:
        game_id = first.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        first.record_turn(game_id, 0, observations={}, actions={}, events={}, state_digest=b"")
        first.settle()  # another connection sees a turn once it is committed
        second.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")
        second.settle()
        # the commit runs on the writer thread: its failure is raised by the next call
        first.record_turn(game_id, 1, observations={}, actions={}, events={}, state_digest=b"")
        with pytest.raises(JournalError, match=r"cannot write to journal .*turn 1 .*UNIQUE"):
            first.settle()
        assert verify_game(first, game_id).status == "truncated"


def test_garbage_hashes_and_types_are_reported(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        games = [play(journal, 3, MOVES) for _ in range(3)]
    _tamper(
        journal_path, "UPDATE turns SET record_hash = 'zz' WHERE game_id = ? AND turn = 1", games[0]
    )
    _tamper(
        journal_path, "UPDATE turns SET state_hash = 7 WHERE game_id = ? AND turn = 2", games[1]
    )
    _tamper(
        journal_path, "UPDATE turns SET events = '[1]' WHERE game_id = ? AND turn = 4", games[2]
    )
    with Journal(journal_path) as journal:
        problems = [verify_game(journal, g, ToyReplayer).problem for g in games]
    assert [(p.turn, p.kind) for p in problems if p] == [
        (1, "edited"),
        (2, "mismatch"),  # the column is TEXT: 7 is stored as '7', which is not the hash
        (4, "unreadable"),
    ]


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
        journal.settle()
        # a reader sees every committed turn while checkpoints come and go
        with Journal(journal_path, create=False) as reader:
            assert reader.game(game_id).turn_count == 400
    # 400 turns of 4 KB rows are 1.6 MB; the WAL started over instead of holding them all
    # (a WAL file never shrinks while open: a restart overwrites it from its start)
    assert max(sizes) < 800 * 1024, max(sizes)
    assert not wal.exists() or wal.stat().st_size == 0  # closing checkpointed everything
    with Journal(journal_path, create=False) as journal:
        assert verify_game(journal, game_id).status == "truncated"
        assert journal.game(game_id).turn_count == 400


def _toy_turn(journal: Journal, game_id: int, turn: int) -> None:
    journal.record_turn(
        game_id, turn, observations={"A": turn}, actions={}, events={}, state_digest=b"%d" % turn
    )


def test_turns_are_committed_one_at_a_time_and_confirmed(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        assert journal.committed_turn(game_id) is None
        for turn in range(5):
            _toy_turn(journal, game_id, turn)
            # recording a turn waited for the previous one: at most one is uncommitted
            confirmed = journal.committed_turn(game_id)
            assert (turn - 1 if confirmed is None else confirmed) in (turn - 1, turn)
            with Journal(journal_path, create=False) as reader:  # another connection
                assert reader.game(game_id).turn_count - 1 >= turn - 1
        journal.settle()
        assert journal.committed_turn(game_id) == 4
        assert journal.game(game_id).turn_count == 5  # reads wait for the last commit


def test_a_writer_that_died_is_reported_at_the_next_call(journal_path: Path) -> None:
    with Journal(journal_path) as journal:
        game_id = journal.start_game(env_id="toy-v0", config={}, seed=1, library_version="t")
        _toy_turn(journal, game_id, 0)
        journal.settle()
        writer = journal._writer._process
        assert writer is not None
        writer.kill()
        writer.wait()
        with pytest.raises(JournalError, match="writer process ended"):
            _toy_turn(journal, game_id, 1)
            journal.settle()
        # nothing confirmed was lost; recording goes on with a new writer process
        assert journal.game(game_id).turn_count == 1
        _toy_turn(journal, game_id, 1)
        journal.finish_game(game_id, {"done": True})
        assert [t.turn for t in journal.turns(game_id)] == [0, 1]
