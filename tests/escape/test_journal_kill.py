"""A process killed mid-game leaves a readable journal that verifies up to its last turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from maze_envs.escape.replay import verify_journal
from maze_envs.journal import Journal

# Plays one endless game (41x41, huge turn limit, random moves with notebook edits and radio)
# and prints, after each env.step, the last turn the journal confirms as committed and the turn
# just handed to it (the journal commits a turn on its writer thread while the game goes on).
PLAYER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from maze_envs import maze_escape_v0
    from maze_envs.journal import Journal

    journal = Journal(sys.argv[1])
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
        print(journal.committed_turn(game_id), turn, flush=True)
    """
)


def test_sigkill_mid_game_loses_at_most_the_turn_in_progress(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    errors_path = tmp_path / "stderr.txt"
    with errors_path.open("w") as errors:
        # stderr goes to a file so that stdout is the only pipe: reading it through the same
        # buffered reader before and after the kill sees every line the child printed.
        child = subprocess.Popen(
            [sys.executable, "-c", PLAYER, str(path)],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            start_new_session=True,  # its own process group: the player and its journal writer
        )
    assert child.stdout is not None
    reported = handed = 0
    try:
        for line in child.stdout:
            reported, handed = map(int, line.split())
            if reported >= 150:
                # Kill the game and the journal's writer process at once, the harshest case
                # (killed alone, the game's writer would still commit the turn it holds).
                os.killpg(child.pid, signal.SIGKILL)
                break
        rest = child.stdout.read()  # turns printed before the kill landed (up to EOF)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
        child.stdout.close()
    assert reported >= 150, f"the player stopped early: {errors_path.read_text()}"
    assert child.returncode == -signal.SIGKILL
    for line in rest.splitlines():
        reported, handed = map(int, line.split())

    with Journal(path, create=False) as journal:
        (game,) = journal.games()
        assert game.outcome is None  # the game never finished
        last_stored = game.turn_count - 1
    # every turn reported as committed is stored; of the turns handed to the journal, at most
    # the one being committed is lost (the game may have handed over the next one meanwhile)
    assert reported <= last_stored
    assert handed - 1 <= last_stored <= handed + 1
    (report,) = verify_journal(path)
    assert report.status == "truncated", report.describe()
    assert report.turns_verified == game.turn_count
