"""The parameter-shared PPO example (SB3 on SuperSuit's vector env) runs with short settings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train_escape_shared_ppo.py"


def test_shared_ppo_example_quick_run() -> None:
    pytest.importorskip("stable_baselines3", reason="needs pip install 'maze-envs[rl]'")
    pytest.importorskip("supersuit", reason="needs pip install 'maze-envs[rl]'")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--max-turns", "40"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {}
    for line in done.stdout.splitlines():
        found = re.match(r"(random|PPO before|PPO after)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", line)
        if found:
            rows[found[1]] = [float(found[i]) for i in (2, 3, 4)]
    assert set(rows) == {"random", "PPO before", "PPO after"}, done.stdout
    for success, finish, out in rows.values():
        assert 0.0 <= success <= 1.0 and 0.0 <= out <= 1.0
        assert 0 < finish <= 40  # --max-turns 40
    assert re.search(r"trained \d+ agent-steps", done.stdout)
