"""Reading journals read-only: read-only files and folders, WAL files, empty files, live writers.

Permissions really apply: when the tests run as root, the capabilities that bypass them are
dropped for the block (``tests.journal.readonly.as_unprivileged``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from maze_envs.journal import Journal, JournalError, verify_game
from maze_envs.verify import main as verify_main
from tests.journal.readonly import as_unprivileged, make_readonly, make_writable, snapshot
from tests.journal.toy import MOVES, ToyReplayer, play


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "journals"
    path.mkdir()
    yield path
    make_writable(path, *path.iterdir())  # let pytest clean up


def _assert_cannot_write(path: Path) -> None:
    with pytest.raises(PermissionError):
        path.open("ab")


def _journal_with_games(path: Path) -> tuple[int, int]:
    with Journal(path) as journal:
        done = play(journal, 3, MOVES)
        cut = play(journal, 4, MOVES[:3], finish=False)
    return done, cut


@pytest.mark.parametrize("what", ["file", "directory"])
def test_a_read_only_journal_is_read_and_verified_untouched(
    folder: Path, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = folder / "games.sqlite"
    done, cut = _journal_with_games(path)
    assert [p.name for p in folder.iterdir()] == ["games.sqlite"]  # closed: no -wal left
    make_readonly(path, *([folder] if what == "directory" else []))
    before = snapshot(folder)
    with as_unprivileged():
        _assert_cannot_write(path)
        with Journal(path, readonly=True) as journal:
            assert journal.game_ids() == [done, cut]
            assert journal.game(done).turn_count == 6
            assert [t.turn for t in journal.turns(cut)] == [0, 1, 2, 3]
            report = verify_game(journal, done, ToyReplayer)
            assert (report.status, report.turns_verified) == ("ok", 6)
        assert verify_main([str(path)]) == 1  # game 2 is unfinished
        assert verify_main([str(path), "--game", str(done)]) == 0
        with pytest.raises(JournalError, match=r"cannot write to journal|not a readable"):
            Journal(path)  # writing is refused clearly, not crashed
    assert snapshot(folder) == before  # not a byte written, no file created beside it
    out = capsys.readouterr().out
    assert "1 of 2 game(s) verified" in out and "unfinished (no outcome)" in out


def _crashed_copy(source: Path, target_folder: Path, with_shm: bool) -> Path:
    """The files a killed writer leaves: the journal, its WAL (and its -shm)."""
    with Journal(source) as journal:
        play(journal, 3, MOVES)
        play(journal, 4, MOVES[:3], finish=False)
        journal.flush()  # committed: the last turns are only in the WAL
        target = target_folder / source.name
        for suffix in ("", "-wal", "-shm") if with_shm else ("", "-wal"):
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
    return target


def test_committed_turns_in_the_wal_are_read_in_a_read_only_folder(
    tmp_path: Path, folder: Path
) -> None:
    path = _crashed_copy(tmp_path / "live.sqlite", folder, with_shm=True)
    make_readonly(folder, *folder.iterdir())
    before = snapshot(folder)
    with as_unprivileged():
        _assert_cannot_write(path)
        with Journal(path, readonly=True) as journal:
            first, second = (verify_game(journal, g, ToyReplayer) for g in journal.game_ids())
        assert (first.status, first.turns_verified) == ("ok", 6)
        assert (second.status, second.turns_verified) == ("unfinished", 4)
    assert snapshot(folder) == before


def test_a_wal_without_its_shm_in_a_read_only_folder_is_a_clear_error(
    tmp_path: Path, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _crashed_copy(tmp_path / "live.sqlite", folder, with_shm=False)
    make_readonly(folder, *folder.iterdir())
    before = snapshot(folder)
    with as_unprivileged():
        with pytest.raises(
            JournalError, match=r"its live.sqlite-wal file .* with a live.sqlite-shm file"
        ):
            Journal(path, readonly=True)
        assert verify_main([str(path)]) == 2
    assert snapshot(folder) == before
    assert "copy live.sqlite and live.sqlite-wal" in capsys.readouterr().err
    # where the folder can be written, the same files are read in full
    make_writable(folder)
    with Journal(path, readonly=True) as journal:
        assert [g.turn_count for g in journal.games()] == [6, 4]


def test_a_reader_sees_what_a_live_writer_committed(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path) as writer:
        game_id = play(writer, 3, MOVES[:2], finish=False)
        with Journal(path, readonly=True) as reader:
            assert reader.game(game_id).turn_count == 0  # group commit: turns still pending
            writer.flush()
            assert reader.game(game_id).turn_count == 3
            writer.record_turn(game_id, 3, observations={}, actions={}, events={}, state_digest=b"")
            assert reader.game(game_id).turn_count == 3
            writer.settle()
            assert reader.game(game_id).turn_count == 4  # each read sees the latest commit
        writer.finish_game(game_id, {"aborted": True, "turns": 3})
    with Journal(path, readonly=True) as reader:
        assert reader.game(game_id).outcome == {"aborted": True, "turns": 3}


@pytest.mark.parametrize("what", ["writable folder", "read-only folder"])
def test_verify_of_an_empty_file_exits_2_and_leaves_it_untouched(
    folder: Path, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = folder / "empty.sqlite"
    empty.touch()
    if what == "read-only folder":
        make_readonly(folder, empty)
    with as_unprivileged():
        assert verify_main([str(empty)]) == 2
    assert empty.stat().st_size == 0
    assert [p.name for p in folder.iterdir()] == ["empty.sqlite"]
    assert "is an empty file, not a maze-envs journal" in capsys.readouterr().err
