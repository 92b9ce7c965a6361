"""A game process killed mid-game (SIGKILL) leaves a readable journal that verifies up to its
last stored turn, as unfinished (never ok).

The journal commits in the game's own thread (there is no separate writer that could die on
its own), so killing the game is the one way to lose the writer. With group commit (the
default, ``durability="batch"``) the kill loses at most the uncommitted batch (at most 63
turns); with ``durability="turn"`` it loses nothing ``env.step`` returned for.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maze_envs.journal import Journal
from maze_envs.verify import verify_journal

# Plays one endless game (41x41, huge turn limit, random moves with notebook edits and radio).
# After each env.step it prints the turn just played and the last turn the journal committed
# (-1: none); with "--lockstep" it then waits for a line on stdin before the next step; with
# "--turn" the journal commits every turn (durability="turn"), else in batches (the default).
PLAYER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from maze_envs import maze_escape_v0
    from maze_envs.journal import Journal

    journal = Journal(sys.argv[1], durability="turn" if "--turn" in sys.argv else "batch")
    lockstep = "--lockstep" in sys.argv
    env = maze_escape_v0.parallel_env(
        preset="full", width=41, height=41, max_turns=100_000, journal=journal
    )
    env.reset(seed=11)
    (game_id,) = journal.game_ids()
    rng = np.random.default_rng(11)
    turn = 0
    while True:
        actions = {
            a: {
                "move": int(rng.integers(0, 5)),
                "notebook": {"edit": 1, "start": 0, "end": 0, "text": f"t{turn} "},
                "radio": "here" if rng.random() < 0.3 else "",
            }
            for a in env.agents
        }
        env.step(actions)
        turn += 1
        committed = journal.committed_turn(game_id)
        print(turn, -1 if committed is None else committed, flush=True)
        if lockstep:
            sys.stdin.readline()
    """
)


def _start(path: Path, errors: Path, *flags: str) -> subprocess.Popen[str]:
    with errors.open("w") as stream:
        # stderr goes to a file so that stdout (and stdin) are the only pipes
        return subprocess.Popen(
            [sys.executable, "-c", PLAYER, str(path), *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stream,
            text=True,
            start_new_session=True,
        )


def _kill(child: subprocess.Popen[str]) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


def _play_lockstep(path: Path, errors: Path, turns: int, *flags: str) -> list[tuple[int, int]]:
    """Play ``turns`` turns one by one, kill the game while it waits; (played, committed)s."""
    child = _start(path, errors, "--lockstep", *flags)
    assert child.stdout is not None and child.stdin is not None
    lines: list[tuple[int, int]] = []
    try:
        for line in child.stdout:
            played, committed = map(int, line.split())
            lines.append((played, committed))
            if played == turns:
                break  # the game now waits for stdin: kill it there
            child.stdin.write("\n")
            child.stdin.flush()
        _kill(child)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stdin.close()
    assert lines and lines[-1][0] == turns, errors.read_text()
    return lines


def test_sigkill_between_turns_loses_nothing_with_durability_turn(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    lines = _play_lockstep(path, tmp_path / "stderr.txt", 150, "--turn")
    assert all(committed == played for played, committed in lines)  # before env.step returned
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        assert game.outcome is None  # the game never finished
        assert game.turn_count == 151  # turns 0..150: exactly what the game played
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("unfinished", 151)


def test_sigkill_between_turns_loses_at_most_the_batch(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    lines = _play_lockstep(path, tmp_path / "stderr.txt", 150)
    # turn 0 and the turns played: 151 rows; at most 63 of them wait in the batch at any time
    assert all(0 <= played - committed <= 63 for played, committed in lines)
    assert any(committed < played for played, committed in lines)  # batches really are kept
    committed = lines[-1][1]
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        assert game.outcome is None  # unfinished: never reported ok
        assert game.turn_count == committed + 1  # exactly the committed turns, 0..committed
    (report,) = verify_journal(path)
    assert (report.status, report.ok, report.turns_verified) == (
        "unfinished",
        False,
        committed + 1,
    )


def _kill_while_playing(path: Path, errors: Path, *flags: str) -> tuple[int, int]:
    """Kill a freely running game at about turn 150: (last turn printed, committed then)."""
    child = _start(path, errors, *flags)
    assert child.stdout is not None
    played = committed = 0
    try:
        for line in child.stdout:
            played, committed = map(int, line.split())
            if played >= 150:
                _kill(child)  # most likely while it computes or commits the next turn
                break
        rest = child.stdout.read()  # turns printed before the kill landed
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        if child.stdin is not None:
            child.stdin.close()
    assert played >= 150, errors.read_text()
    for line in rest.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # the kill cut this report mid-write: only whole lines were printed
        played, committed = map(int, line.split())
    return played, committed


@pytest.mark.parametrize("durability", ["turn", "batch"])
def test_sigkill_mid_game_leaves_a_file_that_verifies(tmp_path: Path, durability: str) -> None:
    path = tmp_path / "killed.sqlite"
    flags = ("--turn",) if durability == "turn" else ()
    played, committed = _kill_while_playing(path, tmp_path / "stderr.txt", *flags)
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        last_stored = game.turn_count - 1
    # at most the turn whose step had not returned yet is beyond the last one printed
    assert committed <= last_stored <= played + 1
    if durability == "turn":
        # every turn env.step returned for is stored
        assert last_stored in (played, played + 1)
    else:
        # at most the batch is lost: 63 turns pending, and the turn being played
        assert last_stored >= played + 1 - 64
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("unfinished", game.turn_count)
