"""The main job: ``maze-envs demo`` plays, journals, renders and verifies its games."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maze_envs.cli import main as cli_main
from maze_envs.escape.demo import main
from maze_envs.escape.replay import verify_journal
from maze_envs.journal import Journal

Image = pytest.importorskip("PIL.Image")
CORAL = (255, 127, 80)


def test_demo_writes_a_verified_journal_pictures_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    journal_path = tmp_path / "demo.sqlite"
    with Journal(journal_path, create=False) as journal:
        games = journal.games()
    assert [g.seed for g in games] == [0, 1, 2]
    assert all(g.outcome is not None for g in games)
    assert all(r.status == "ok" for r in verify_journal(journal_path))

    header = next(line for line in out.splitlines() if line.startswith("game  seed"))
    for column in ("turns", "success", "exit turn per agent", "wall bumps", "fastest", "verified"):
        assert column in header
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    assert len(rows) == 3
    for row, game in zip(rows, games, strict=True):
        assert game.outcome is not None
        assert row[0] == str(game.id) and row[1] == str(game.seed)
        assert row[4] == str(game.outcome["turns"]) and row[-1] == "yes"
        assert row[-2] == str(game.outcome["fastest_possible_finish"])

    assert len(sorted(tmp_path.glob("game*_seed*.html"))) == 3  # one viewer page per game
    pictures = sorted(tmp_path.glob("*.png"))
    assert len(pictures) == 3
    for picture in pictures:
        pixels = np.asarray(Image.open(picture).convert("RGB"))
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100
        assert np.any(np.all(pixels == CORAL, axis=-1)), f"{picture.name}: no exit doorway drawn"


def test_a_second_run_replaces_the_journal(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path), "--seeds", "7", "--quiet"]) == 0
    assert main(["--out", str(tmp_path), "--seeds", "8", "9", "--policy", "random", "--quiet"]) == 0
    with Journal(tmp_path / "demo.sqlite", create=False) as journal:
        assert [g.seed for g in journal.games()] == [8, 9]


def test_bad_arguments_are_refused_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--out", str(tmp_path), "--seeds", "-3"])
    assert exited.value.code == 2
    assert "a seed is a whole number >= 0, got '-3'" in capsys.readouterr().err
    a_file = tmp_path / "taken"
    a_file.write_text("")
    assert main(["--out", str(a_file)]) == 2
    assert "cannot use" in capsys.readouterr().out
