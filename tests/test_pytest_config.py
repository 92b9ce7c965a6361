"""The project's pytest settings keep a failure readable (issue 13).

pytest's own traceback formatting parses each frame's source with ``ast``; on Python 3.11.7 that
crashed the whole session (``SystemError: AST constructor recursion depth mismatch``, pytest
issue #10763), so no failing test was named. ``--tb=native`` in ``addopts`` prints Python's own
traceback instead; the assertion's explanation (pytest's rewriting) must still be there.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FAILING = """
def test_a_wrong_total():
    counts = {"wall_moves": 2, "moves_tried": 5}
    assert counts == {"wall_moves": 3, "moves_tried": 5}
"""


def test_addopts_ask_for_native_tracebacks() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "--tb=native" in config["tool"]["pytest"]["ini_options"]["addopts"].split()


def test_a_failing_assertion_prints_readably_with_the_projects_settings(tmp_path: Path) -> None:
    (tmp_path / "test_wrong.py").write_text(FAILING, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_wrong.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # one test failed; the session itself did not crash
    assert "INTERNALERROR" not in out
    assert "Traceback (most recent call last)" in out  # Python's own traceback format
    assert "FAILED test_wrong.py::test_a_wrong_total" in out  # the failing test is named
    # the failing line, and the rewritten assertion's explanation: the differing item
    assert f'File "{tmp_path / "test_wrong.py"}", line 4, in test_a_wrong_total' in out
    assert "AssertionError: assert {'wall_moves'" in out
    assert "{'wall_moves': 2} != {'wall_moves': 3}" in out
