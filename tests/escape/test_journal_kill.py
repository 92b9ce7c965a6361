"""A game process killed mid-game (SIGKILL) leaves a readable journal holding every turn
that ``env.step`` returned for, which verifies up to its last turn.

The journal commits each turn in the game's own thread before ``record_turn`` returns (there is
no separate writer that could die on its own), so killing the game is the one way to lose the
writer, and it loses nothing the game was told was recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from maze_envs.journal import Journal
from maze_envs.verify import verify_journal

# Plays one endless game (41x41, huge turn limit, random moves with notebook edits and radio).
# After each env.step it prints the turn just played and the last turn the journal committed;
# with "--lockstep" it then waits for a line on stdin before the next step.
PLAYER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from maze_envs import maze_escape_v0
    from maze_envs.journal import Journal

    journal = Journal(sys.argv[1])
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
        print(turn, journal.committed_turn(game_id), flush=True)
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


def test_sigkill_between_turns_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    child = _start(path, tmp_path / "stderr.txt", "--lockstep")
    assert child.stdout is not None and child.stdin is not None
    played = committed = 0
    try:
        for line in child.stdout:
            played, committed = map(int, line.split())
            assert committed == played  # committed before env.step returned
            if played == 150:
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
    assert played == 150, (tmp_path / "stderr.txt").read_text()
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        assert game.outcome is None  # the game never finished
        assert game.turn_count == 151  # turns 0..150: exactly what the game played
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("unfinished", 151)


def test_sigkill_mid_game_leaves_a_file_that_verifies(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    child = _start(path, tmp_path / "stderr.txt")
    assert child.stdout is not None
    played = 0
    try:
        for line in child.stdout:
            played = int(line.split()[0])
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
    assert played >= 150, (tmp_path / "stderr.txt").read_text()
    for line in rest.splitlines():
        played = int(line.split()[0])
    with Journal(path, readonly=True) as journal:
        (game,) = journal.games()
        last_stored = game.turn_count - 1
    # every turn env.step returned for is stored, and beyond it at most the turn whose commit
    # finished just before the kill (its step had not returned yet)
    assert last_stored in (played, played + 1)
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("unfinished", game.turn_count)
