"""Every Python example of the README runs as written (training lengths shortened)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code: str, tmp_path: Path) -> None:
    if "sb3_contrib" in code or "stable_baselines3" in code:
        pytest.importorskip("sb3_contrib")
    code = re.sub(r"\.learn\([\d_]+\)", ".learn(64)", code)  # the same code, a short training run
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(README.parent)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
