"""Games of 16-byte hashes (``Journal(path, hash_size=16)``, what ``maze-envs bench`` writes):
the chains as documented, every kind of tampering found at its turn, and both sizes in one file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from maze_envs.journal import Journal, verify_game
from maze_envs.journal.format import chain_body_hash, chain_state_hash
from tests.journal.tamper import edit_turn, set_hashes, stored_turns
from tests.journal.toy import MOVES, ToyGame, ToyReplayer, play


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


def test_the_chains_are_sha256_cut_to_16_bytes_from_16_zero_bytes(journal_path: Path) -> None:
    with Journal(journal_path, hash_size=16) as journal:
        game_id = play(journal, 3, MOVES)
        record = journal.load_game(game_id)
        rows = list(journal.raw_turns(game_id))
    game = ToyGame(3)
    state = hashlib.sha256(bytes(16) + game.digest()).digest()[:16]
    record_hash = hashlib.sha256(bytes(16) + state + rows[0][1]).digest()[:16]
    assert rows[0][2:] == (state, record_hash)
    assert record.turns[0].state_hash == state.hex() and len(record.turns[0].state_hash) == 32
    game.step(MOVES[0])
    assert rows[1][2] == chain_state_hash(state, game.digest())
    assert rows[1][3] == chain_body_hash(record_hash, rows[1][2], rows[1][1])
    assert all(len(row[2]) == len(row[3]) == 16 for row in rows)


def test_a_game_of_16_byte_hashes_verifies_and_saves_32_bytes_a_turn(tmp_path: Path) -> None:
    sizes = {}
    for size in (32, 16):
        path = tmp_path / f"{size}.sqlite"
        with Journal(path, hash_size=size) as journal:
            game_id = play(journal, 3, MOVES)
            report = verify_game(journal, game_id, ToyReplayer)
            assert (report.status, report.turns_verified) == ("ok", len(MOVES) + 1)
            rows = list(journal.raw_turns(game_id))
        sizes[size] = sum(len(row[2]) + len(row[3]) for row in rows) / len(rows)
    assert sizes == {32: 64, 16: 32}


@pytest.mark.parametrize("turn", [0, 3])
@pytest.mark.parametrize("column", ["actions", "decisions", "state_hash", "record_hash"])
def test_tampering_with_a_game_of_16_byte_hashes_fails_at_its_turn(
    journal_path: Path, column: str, turn: int
) -> None:
    with Journal(journal_path, hash_size=16) as journal:
        game_id = play(journal, 3, MOVES)
    if column.endswith("hash"):
        stored = getattr(stored_turns(journal_path, game_id)[turn], column)
        set_hashes(journal_path, game_id, turn, **{column: bytes([stored[0] ^ 1]) + stored[1:]})
    else:

        def plausible(text: str) -> str:
            return json.dumps({**json.loads(text), "A": 99}, separators=(",", ":"))

        edit_turn(journal_path, game_id, turn, column, plausible)
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id, ToyReplayer)
    assert report.status == "failed" and report.problem is not None
    assert report.problem.turn == turn, report.describe()


def test_a_hash_of_the_other_length_breaks_the_chain(journal_path: Path) -> None:
    """Turning a game of 16-byte hashes into one of 32 (or back) from one row on is an edit."""
    with Journal(journal_path, hash_size=16) as journal:
        game_id = play(journal, 3, MOVES)
    stored = stored_turns(journal_path, game_id)[2].record_hash
    set_hashes(journal_path, game_id, 2, record_hash=stored + bytes(16))
    with Journal(journal_path, readonly=True) as journal:
        report = verify_game(journal, game_id, ToyReplayer)
    assert report.problem is not None and (report.problem.turn, report.problem.kind) == (
        2,
        "edited",
    )


def test_games_of_both_sizes_in_one_file_and_a_game_continued_keeps_its_size(
    journal_path: Path,
) -> None:
    with Journal(journal_path) as journal:  # 32 bytes, left unfinished
        long_game = play(journal, 3, MOVES[:2], finish=False)
    with Journal(journal_path, hash_size=16) as journal:
        short_game = play(journal, 3, MOVES)
        game = ToyGame(3)
        for move in MOVES[:2]:
            game.step(move)
        events = game.step(MOVES[2])
        journal.record_turn(
            long_game,
            3,
            observations=game.observations(),
            actions=MOVES[2],
            events=events,
            state_digest=game.digest(),
        )
        rows = {g: list(journal.raw_turns(g)) for g in (long_game, short_game)}
        assert {len(row[3]) for row in rows[long_game]} == {32}
        assert {len(row[3]) for row in rows[short_game]} == {16}
        assert verify_game(journal, short_game, ToyReplayer).status == "ok"
        assert verify_game(journal, long_game, ToyReplayer).status == "unfinished"
        assert verify_game(journal, long_game, ToyReplayer).turns_verified == 4


def test_a_hash_size_other_than_32_or_16_is_refused(journal_path: Path) -> None:
    with pytest.raises(ValueError, match="32 or 16 bytes"):
        Journal(journal_path, hash_size=20)
