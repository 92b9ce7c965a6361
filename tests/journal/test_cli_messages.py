"""Clear messages, never tracebacks (issue 13): ``view`` of a game that fails verification and
``bench --resume`` on a damaged journal, through the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from maze_envs import maze_escape_v1
from maze_envs.cli import main as cli_main
from maze_envs.journal import Journal, JournalError
from tests.journal.tamper import edit_turn
from tests.journal.toy import MOVES, play


def escape_journal(path: Path, games: int = 2) -> None:
    env = maze_escape_v1.parallel_env(width=6, height=6, max_turns=12, journal=path)
    for seed in range(games):
        env.reset(seed=seed)
        while env.agents:
            env.step({a: {"move": 1, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""},
                          "radio": ""} for a in env.agents})  # fmt: skip
    env.close()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "maze_envs", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def test_view_of_a_game_that_fails_verification_warns_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    escape_journal(path)
    # an action changed after the game was recorded (the hash chain no longer matches)
    edit_turn(path, 2, 5, "actions", lambda text: text.replace('"move":1', '"move":3'))
    done = run_cli("view", str(path), "--out", str(tmp_path / "pages"))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "warning: game 2 does not verify: game 2: FAILED at turn 5" in done.stderr
    assert "1 of 2 game(s) do not verify (2)" in done.stderr
    # both pages are written; the failing one shows its verdict and stops before turn 5
    pages = sorted(p.name for p in (tmp_path / "pages").iterdir())
    assert pages == ["games-game1.html", "games-game2.html"]
    assert "wrote" in done.stdout
    # a game that verifies alone: exit 0, no warning
    assert cli_main(["view", str(path), "--game", "1", "--out", str(tmp_path / "one")]) == 0


def test_view_of_a_game_with_lost_turns_and_of_a_generic_game_with_a_bad_row_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path) as journal:
        play(journal, 3, MOVES)  # a foreign env: rows only
        play(journal, 4, MOVES)
    edit_turn(path, 2, 2, "actions", lambda _: '{"A":9,"B":9}')
    assert cli_main(["view", str(path), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "warning: game 2 does not verify" in err and "FAILED at turn 2 (edited)" in err
    assert "game 1 does not verify" not in err


def test_bench_resume_on_a_damaged_journal_is_a_message_and_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["bench", "--env", "escape", "--policy", "explorer", "--size", "7", "--max-turns",
            "20", "--out", str(out), "--quiet", "--no-plots", "--no-pages"]  # fmt: skip
    assert cli_main([*args, "--seeds", "0-2"]) == 0
    journal = out / "games.sqlite"
    assert journal.exists()
    data = bytearray(journal.read_bytes())
    data[3 * 4096 : 4 * 4096 - 100] = b"A" * (4096 - 100)  # a page in the middle is garbage
    journal.write_bytes(bytes(data))
    done = run_cli(*args, "--seeds", "0-5", "--resume")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"journal {journal} is damaged (SQLite's quick_check:" in done.stderr
    assert f"the run in {out} cannot be continued; --fresh starts it over" in done.stderr
    # not a journal at all: the same
    journal.write_bytes(b"x" * 8192)
    done = run_cli(*args, "--seeds", "0-5", "--resume")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "is not a readable maze-envs journal" in done.stderr
    # --fresh starts over
    assert cli_main([*args, "--seeds", "0-1", "--fresh"]) == 0


def test_check_integrity_passes_an_intact_journal_and_names_a_damaged_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "games.sqlite"
    escape_journal(path, games=3)
    with Journal(path) as journal:
        journal.check_integrity()
    data = bytearray(path.read_bytes())
    data[2 * 4096 : 3 * 4096 - 64] = bytes(4096 - 64)
    path.write_bytes(bytes(data))
    with Journal(path) as journal, pytest.raises(JournalError, match="is damaged"):
        journal.check_integrity()


def test_bench_resume_on_a_version_3_run_is_a_message_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gzip

    from tests.journal.test_versions import FIXTURE

    out = tmp_path / "run"
    out.mkdir()
    (out / "games.sqlite").write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    args = ["bench", "--env", "escape", "--policy", "explorer", "--size", "7", "--max-turns",
            "20", "--out", str(out), "--quiet", "--no-plots", "--no-pages", "--resume"]  # fmt: skip
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert "schema version 3" in err and "cannot add to it" in err
    assert f"the run in {out} cannot be continued; --fresh starts it over" in err
