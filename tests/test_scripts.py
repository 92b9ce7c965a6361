"""The set-up of scripts/demo.sh and scripts/test.sh: pip runs once per pyproject.toml and
extras, not on every run (issue 23: `bash scripts/demo.sh` spent 10-23 s in pip every time)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def install(folder: Path, extras: str) -> list[str]:
    """Run ``install_once EXTRAS`` in ``folder``; the pip calls the fake python logged."""
    subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source {REPO}/scripts/venv.sh; install_once {extras}"],
        cwd=folder,
        check=True,
    )
    return (folder / "calls.log").read_text().splitlines()


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs sha256sum (coreutils)")
def test_pip_runs_only_when_pyproject_or_the_extras_change(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls.log\n')  # a python that logs
    python.chmod(0o755)
    (tmp_path / "calls.log").write_text("")
    assert install(tmp_path, "render,bench") == ["-m pip install -q -e .[render,bench]"]
    assert len(install(tmp_path, "render,bench")) == 1  # nothing changed: no pip
    assert len(install(tmp_path, "dev")) == 2  # other extras: installed once
    assert len(install(tmp_path, "dev")) == 2
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = '2'\n")
    assert len(install(tmp_path, "render,bench")) == 3  # pyproject.toml changed: again
    assert len(install(tmp_path, "render,bench")) == 3


def test_both_scripts_set_up_through_it() -> None:
    for script, extras in (("demo.sh", "render,bench"), ("test.sh", "dev")):
        text = (REPO / "scripts" / script).read_text()
        assert "source scripts/venv.sh" in text and f"install_once {extras}\n" in text
        assert ".venv/bin/python -m pip install -q -e '.[" not in text  # .venv: only through it
