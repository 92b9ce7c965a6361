"""The command-line router: every command and group answers --help under its own name."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from maze_envs import __version__
from maze_envs.cli import COMMANDS, GROUPS, main


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for words in COMMANDS:
        assert words[0] in out
    assert out.startswith("usage: maze-envs ")


def test_version_prints_the_library_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"maze-envs {__version__}"


@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_every_command_answers_help_under_its_own_name(
    words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*words, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: maze-envs {' '.join(words)} "), out[:200]


@pytest.mark.parametrize("group", sorted({w[:1] for w in COMMANDS if len(w) > 1}))
def test_every_command_group_lists_its_commands(
    group: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    assert group in GROUPS
    for argv in ([*group], [*group, "--help"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"usage: maze-envs {' '.join(group)} ")
        for words in COMMANDS:
            if words[: len(group)] == group:
                assert words[len(group)] in out


def test_unknown_command_is_an_error_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fly"]) == 2
    assert "unknown command 'fly'" in capsys.readouterr().err
    assert main(["veify"]) == 2
    assert "did you mean 'verify'?" in capsys.readouterr().err
    group = next(iter(GROUPS))
    assert main([*group, "fly"]) == 2
    assert f"unknown command '{' '.join((*group, 'fly'))}'" in capsys.readouterr().err


def test_every_command_target_exists() -> None:
    for target, _ in COMMANDS.values():
        module_name, function_name = target.split(":")
        assert callable(getattr(importlib.import_module(module_name), function_name))


def test_the_installed_script_and_python_m_agree() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "maze_envs", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"maze-envs {__version__}"


def test_a_reader_leaving_early_is_no_traceback() -> None:
    """`maze-envs study list | head -1`: the reader is gone; the command stops quietly."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "maze_envs", "study", "list"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141  # 128 + SIGPIPE, as a shell pipeline reports it
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
