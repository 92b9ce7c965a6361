"""Fixtures shared by every test package, and the AGI Maze conformance summary."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agimaze.traces import AGREEMENT

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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand the conformance agreement it measured to the controller,
    which prints the summary (:func:`pytest_terminal_summary`)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["agimaze_agreement"] = {k: list(v) for k, v in AGREEMENT.items()}


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: only there when xdist is
def pytest_testnodedown(node: Any, error: Any) -> None:
    measured = getattr(node, "workeroutput", {}).get("agimaze_agreement", {})
    AGREEMENT.update({label: (ok, n, unit) for label, (ok, n, unit) in measured.items()})


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The AGI Maze conformance agreement per recording file, at the end of the test run."""
    if not AGREEMENT:
        return
    terminalreporter.section("AGI Maze conformance: agreement with the real engine's recordings")
    total_ok = total = 0  # positions and narration lines only; map round trips are extra
    for label, (ok, n, unit) in sorted(AGREEMENT.items()):
        name = label.removesuffix(f" {unit}")
        terminalreporter.write_line(f"{name}: {ok}/{n} {unit} agree")
        if unit != "maps round-trip":
            total_ok, total = total_ok + ok, total + n
    terminalreporter.write_line(
        f"all files: {total_ok}/{total} positions and narration lines agree"
    )
