"""The command-line router."""

from __future__ import annotations

import pytest

from maze_envs.cli import COMMANDS, main


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for words in COMMANDS:
        assert " ".join(words) in out


def test_unknown_command_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fly"]) == 2
    assert "unknown command 'fly'" in capsys.readouterr().err


def test_every_command_target_exists() -> None:
    import importlib

    for module_name, function_name, _ in COMMANDS.values():
        module = importlib.import_module(module_name)
        assert callable(getattr(module, function_name))
