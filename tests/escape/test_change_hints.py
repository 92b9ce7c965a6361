"""Maze Escape's change hints (what the observer tells the journal changed in a turn) are right in
every situation a game reaches: the test run checks each hint against a whole walk of the
observations (``MAZE_ENVS_CHECK_HINTS``, set for every test), so a key that changed without
being hinted fails here; and the journaled games verify."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.journal.delta import checking_hints
from maze_envs.verify import verify_journal


def _action(
    rng: np.random.Generator, splice: bool, turn: int, agent: str, notes: bool
) -> dict[str, Any]:
    """Random moves, staying often (agents gather and swap places on a shared cell); notes
    only when ``notes``, so that in the other games every notebook shown is the same text."""
    text = f"t{turn} {agent}" if notes and rng.random() < 0.3 else ""
    if splice:
        notebook: dict[str, Any] = {"edit": int(bool(text)), "start": 0, "end": 0, "text": text}
    else:
        notebook = {"append": text}
    radio = f"{agent} here" if rng.random() < 0.2 else ""
    move = int(rng.integers(5)) if rng.random() < 0.6 else 4
    return {"move": move, "notebook": notebook, "radio": radio}


@pytest.mark.parametrize("module", [maze_escape_v0, maze_escape_v1])
@pytest.mark.parametrize("preset", ["navigator", "full", "sparse", "shared_frame"])
def test_hints_hold_in_crowded_games(tmp_path: Path, module: Any, preset: str) -> None:
    assert checking_hints()
    path = tmp_path / "games.sqlite"
    env = module.parallel_env(
        preset=preset, width=5, height=5, num_agents=4, max_turns=40, journal=path
    )
    splice = env.config.notebook_mode == "splice"
    rng = np.random.default_rng(3)
    for seed in range(16):
        env.reset(seed=seed)
        turn = 0
        while env.agents:
            turn += 1
            env.step({a: _action(rng, splice, turn, a, seed % 2 == 1) for a in env.agents})
    env.close()
    reports = verify_journal(path)
    assert [r.status for r in reports] == ["ok"] * 16
