"""Version 3 beside the version written now: a journal written by the library before version 4
(``data/v3_games.sqlite.gz``, see ``data/make_fixture.py``) stays readable and verifiable, and the
same games recorded now read back with every observation, event and hash equal."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest

from maze_envs.cli import main as cli_main
from maze_envs.journal import SCHEMA_VERSION, Journal, JournalError, TurnRecord
from maze_envs.verify import replayer_for, verify_journal
from tests.journal.tamper import edit_turn

FIXTURE = Path(__file__).parent / "data" / "v3_games.sqlite.gz"


@pytest.fixture
def v3_path(tmp_path: Path) -> Path:
    path = tmp_path / "v3.sqlite"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return path


def all_turns(path: Path) -> dict[int, list[TurnRecord]]:
    with Journal(path, readonly=True) as journal:
        return {game: list(journal.turns(game)) for game in journal.game_ids()}


def test_the_fixture_is_a_version_3_journal_of_every_kind_of_game(v3_path: Path) -> None:
    db = sqlite3.connect(v3_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
    db.close()
    with Journal(v3_path, readonly=True) as journal:
        assert journal.schema_version == 3
        env_ids = [info.env_id for info in journal.games()]
    assert env_ids == [
        "maze_envs/MazeEscape-v1",
        "maze_envs/MazeEscape-v0",
        "maze_envs/MazeEscape-v1",
        "maze_envs/MazeEscape-v1",
        "maze_envs/AgiMaze-v0",
        "maze_envs/AgiMaze-v0",
        "toy-v0",
    ]
    turns = all_turns(v3_path)
    shown = [
        record.observations["A"]["teammate_notebooks"]
        for record in turns[1]
        if any(entry["shown"] for entry in record.observations["A"]["teammate_notebooks"].values())
    ]
    assert shown, "the fixture's first game has agents meeting"
    assert turns[1][0].decisions == {}
    assert turns[1][5].decisions["A"]["prompt"][1] == "turn 5"


def test_a_version_3_journal_verifies_as_before(
    v3_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = verify_journal(v3_path)
    assert [r.status for r in reports] == ["ok", "ok", "aborted", "aborted", "ok", "ok", "ok"]
    assert [r.replayed for r in reports] == [True] * 6 + [False]
    assert cli_main(["verify", str(v3_path)]) == 0
    assert "7 of 7 game(s) verified" in capsys.readouterr().out
    # an edit of a version 3 row is found at its turn, as ever
    edit_turn(v3_path, 1, 9, "observations", lambda text: text.replace('"turn":9', '"turn":8'))
    report = verify_journal(v3_path, [1])[0]
    assert report.status == "failed" and report.problem is not None and report.problem.turn == 9


def test_a_version_3_journal_is_drawn_and_refused_for_writing(
    v3_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["view", str(v3_path), "--out", str(tmp_path / "pages")]) == 0
    assert len(list((tmp_path / "pages").iterdir())) == 7
    for kwargs in ({}, {"create": False}):
        with pytest.raises(JournalError, match=r"schema version 3.*cannot add to it.*readonly"):
            Journal(v3_path, **kwargs)  # type: ignore[arg-type]


def test_the_same_games_recorded_in_the_version_written_now_read_back_identical(
    v3_path: Path, tmp_path: Path
) -> None:
    """Each game is replayed from its recorded actions and recorded again, into a journal of
    the version this library writes (5); reading it gives every turn's observations, events,
    actions, decisions and state hash exactly as the version 3 file holds them (the toy game,
    which has no replayer, is recorded from its stored observations)."""
    v4_path = tmp_path / "v4.sqlite"
    old = all_turns(v3_path)
    with Journal(v3_path, readonly=True) as source, Journal(v4_path) as target:
        assert target.schema_version == SCHEMA_VERSION == 5
        for info in source.games():
            game = target.start_game(
                env_id=info.env_id,
                config=info.config,
                seed=info.seed,
                library_version=info.library_version,
                generator=info.generator,
                meta=info.meta,
            )
            factory = replayer_for(info.env_id)
            replayer = factory() if factory is not None else None
            state = b""
            for record in old[info.id]:
                if replayer is None:
                    observations, events = record.observations, record.events
                    state = record.turn.to_bytes(8, "little")
                else:
                    step = (
                        replayer.reset(info) if record.turn == 0 else replayer.step(record.actions)
                    )
                    observations, events, state = step.observations, step.events, step.state_digest
                target.record_turn(
                    game,
                    record.turn,
                    observations=observations,
                    actions=record.actions,
                    events=events,
                    state_digest=state,
                    decisions=source.resolve(record.decisions) if record.decisions else None,
                )
            target.finish_game(game, info.outcome or {})
    new = all_turns(v4_path)
    for game, records in old.items():
        assert len(new[game]) == len(records)
        for before, after in zip(records, new[game], strict=True):
            assert after.raw_observations == before.raw_observations, (game, before.turn)
            assert after.raw_events == before.raw_events, (game, before.turn)
            assert (after.observations, after.events) == (before.observations, before.events)
            assert after.actions == before.actions
            if game != 7:  # the toy game's states were not recorded: its chain differs
                assert after.state_hash == before.state_hash
    with Journal(v4_path, readonly=True) as journal:
        assert [journal.resolve(t.decisions) for t in new[1]][5]["A"]["prompt"][1] == "turn 5"
    reports = verify_journal(v4_path)
    assert [r.status for r in reports] == ["ok", "ok", "aborted", "aborted", "ok", "ok", "ok"]
    # and version 4 is smaller: most of a turn is what it shares with the turn before
    assert v4_path.stat().st_size < v3_path.stat().st_size / 2
