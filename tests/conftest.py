"""Fixtures shared by every test package."""

from __future__ import annotations

import os
import sys
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


def _estimated_tokens(text: str) -> int:
    return max(1, len(text) // 4)


@pytest.fixture(autouse=True)
def _offline_token_estimates() -> None:
    """Inspect's mock model (``mockllm/model``) counts the tokens of outputs that carry no usage
    with tiktoken, whose tables are downloaded on first use: tests never download, so there
    tokens are estimated at 4 characters each (the mock's counts are made up either way).

    Only once Inspect AI is imported (importing it costs seconds: not for every test run).
    """
    module = sys.modules.get("inspect_ai.model._model")  # the counter ModelAPI uses
    if module is not None and module.count_text_tokens is not _estimated_tokens:
        module.count_text_tokens = _estimated_tokens
