"""The ``maze-envs agimaze`` commands answer --help under their real names; module layering."""

from __future__ import annotations

import subprocess
import sys

import pytest

from maze_envs.agimaze.api.server import main as serve_main
from maze_envs.agimaze.packs.build import main as build_main
from maze_envs.cli import main as cli_main


@pytest.mark.parametrize(
    ("main", "prog"),
    [(serve_main, "maze-envs agimaze serve"), (build_main, "maze-envs agimaze build-packs")],
)
def test_each_command_parser_has_its_full_name(
    main: object, prog: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])  # type: ignore[operator]
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {prog} ")


def test_the_agimaze_group_answers_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["agimaze", "--help"]) == 0
    out = capsys.readouterr().out
    assert "serve" in out and "build-packs" in out
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["agimaze", "serve", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: maze-envs agimaze serve ")
    assert "--body-timeout" in out and "--max-sessions" in out
    assert "--idle-evict SECONDS" in out and "(default 1.0)" in " ".join(out.split())


@pytest.mark.parametrize("idle", ["0", "7200"])
def test_the_idle_limit_is_checked(idle: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        serve_main(["--idle-evict", idle, "--ttl", "3600"])
    assert exit_info.value.code == 2
    assert "--idle-evict must be > 0 and at most --ttl (3600)" in capsys.readouterr().err


def test_the_client_and_the_backends_never_import_the_env() -> None:
    """client.py <-> env.py was an import cycle: both now meet in backends.py."""
    code = (
        "import sys; import maze_envs.agimaze.api.client, maze_envs.agimaze.api.http_backend, "
        "maze_envs.agimaze.backends; "
        "bad = [m for m in ('maze_envs.agimaze.env', 'maze_envs.agimaze.set_env') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
