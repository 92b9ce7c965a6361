"""``maze-envs verify`` on journals of any environment: routing, replayers, exit statuses."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from maze_envs import maze_escape_v1
from maze_envs.cli import main as cli_main
from maze_envs.journal import Journal
from maze_envs.verify import REPLAYERS, replayer_for, verify_journal
from tests.journal.tamper import update_game
from tests.journal.test_store import _version_2_file
from tests.journal.toy import MOVES, ToyReplayer, play


def test_verify_is_routed_and_answers_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        cli_main(["verify", "--help"])
    assert raised.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: maze-envs verify")
    assert "read-only" in out and "unfinished" in out


def test_every_environment_of_the_library_has_a_replayer() -> None:
    assert sorted(REPLAYERS) == [
        "maze_envs/AgiMaze-v0",
        "maze_envs/AgiMazeSet-v0",
        "maze_envs/MazeEscape-v0",
        "maze_envs/MazeEscape-v1",
    ]
    for env_id in REPLAYERS:
        factory = replayer_for(env_id)
        assert factory is not None
        replayer = factory()
        assert hasattr(replayer, "reset") and hasattr(replayer, "step")
    assert replayer_for("someone/Else-v0") is None


def test_other_env_ids_get_row_checks_or_a_named_replayer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path) as journal:
        play(journal, 3, MOVES)
    assert cli_main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "ok, 6 turns verified (stored rows only: no replayer for this env)" in out
    assert "1 of 1 game(s) verified (1 without a replayer: rows only)" in out
    option = "toy-v0=tests.journal.toy:ToyReplayer"
    assert cli_main(["verify", str(path), "--replayer", option]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^ +1  toy-v0 +3 +6  ok, 6 turns verified$", out, re.M), out
    (report,) = verify_journal(path, replayers={"toy-v0": ToyReplayer})
    assert report.replayed and report.status == "ok"
    # a forgery only the replay can see
    update_game(path, 1, seed=4)
    assert cli_main(["verify", str(path)]) == 0  # the rows are intact
    assert cli_main(["verify", str(path), "--replayer", option]) == 1
    out = capsys.readouterr().out
    assert "FAILED at turn 0 (mismatch)" in out
    with pytest.raises(SystemExit):
        cli_main(["verify", str(path), "--replayer", "no-equals-sign"])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.touch(), "is an empty file, not a maze-envs journal"),
        (lambda p: p.write_text("not sqlite" * 100), "not a readable maze-envs journal"),
        (_version_2_file, "schema version 2, written by maze-envs 0.0.9; this library reads"),
        (lambda p: None, "no journal at"),
        (lambda p: p.mkdir(), "is not a file"),
    ],
    ids=["empty", "not-sqlite", "version-2", "absent", "directory"],
)
def test_unusable_files_exit_2_untouched(
    tmp_path: Path, make: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    make(path)  # type: ignore[operator]
    before = sorted((p.name, p.stat().st_size) for p in tmp_path.iterdir() if p.is_file())
    assert cli_main(["verify", str(path)]) == 2
    assert message in capsys.readouterr().err
    after = sorted((p.name, p.stat().st_size) for p in tmp_path.iterdir() if p.is_file())
    assert after == before


def test_unknown_game_ids_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.sqlite"
    with Journal(path) as journal:
        play(journal, 3, MOVES)
    assert cli_main(["verify", str(path), "--game", "5"]) == 2
    assert "no game [5]" in capsys.readouterr().err


def test_verify_shares_the_games_among_processes_with_the_same_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--workers`` / ``workers=``: the games are replayed in other processes, the reports are
    those of one process, in the same order, a forged game found as well."""
    path = tmp_path / "games.sqlite"
    env = maze_escape_v1.parallel_env(
        preset="navigator", width=5, height=5, max_turns=12, journal=path
    )
    rng = random.Random(0)
    for seed in range(5):
        env.reset(seed=seed)
        while env.agents:
            note = {"append": f"turn {rng.randrange(99)}"}
            env.step(
                {a: {"move": rng.randrange(5), "notebook": note, "radio": ""} for a in env.agents}
            )
    env.close()
    update_game(path, 3, seed=99)  # only a replay finds it
    alone = verify_journal(path, workers=1)
    shared = verify_journal(path, workers=2)
    assert [r.describe() for r in shared] == [r.describe() for r in alone]
    assert [r.ok for r in shared] == [True, True, False, True, True]
    assert [r.game_id for r in verify_journal(path, [5, 1, 3], workers=2)] == [5, 1, 3]
    assert cli_main(["verify", str(path), "--workers", "1"]) == 1
    one = capsys.readouterr().out
    assert cli_main(["verify", str(path), "--workers", "2"]) == 1
    assert capsys.readouterr().out == one
    with pytest.raises(SystemExit) as raised:
        cli_main(["verify", str(path), "--workers", "0"])
    assert raised.value.code == 2
    assert "expected a whole number of processes >= 1, got '0'" in capsys.readouterr().err
