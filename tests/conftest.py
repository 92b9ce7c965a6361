"""Fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_root() -> Path | None:
    """The workplace's ``shared/`` folder (beside the checkout), or ``MAZE_ENVS_SHARED``."""
    override = os.environ.get("MAZE_ENVS_SHARED")
    candidate = Path(override) if override else REPO_ROOT.parent / "shared"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """Path to ../shared; skips the test with a clear reason when it is absent."""
    root = shared_root()
    if root is None:
        pytest.skip(
            "../shared is not present (AGI Maze recordings live outside the project); "
            "set MAZE_ENVS_SHARED to its path to run this test"
        )
    return root
