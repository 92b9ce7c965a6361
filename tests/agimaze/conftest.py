"""Report the conformance agreement per recording file at the end of the test run."""

from __future__ import annotations

from typing import Any

from tests.agimaze.traces import AGREEMENT


def pytest_terminal_summary(terminalreporter: Any) -> None:
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
