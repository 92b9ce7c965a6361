"""An environment-agnostic agent that plays only through the contract's files and commands.

It knows nothing of mazes: it reads ``observations/status.json`` (terminal flag, available
actions) and ``state.txt`` / ``message.md``, and sends ``{"id": ...}`` actions. Its policy is a
seeded random explorer that avoids repeating an action after which the observation did not
change. The same code plays an AGI Maze tutorial, a labyrinth set and a Maze Escape agent.

Run: ``.venv/bin/python examples/contract_client.py [--max-actions 60] [--subprocess]``
(``--subprocess`` sends every action through ``python -m maze_envs contract ...``, as a coding
agent would).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def contract(args: list[str], use_subprocess: bool) -> int:
    """Run ``maze-envs contract ARGS`` (in this process, or as a command)."""
    if use_subprocess:
        command = [sys.executable, "-m", "maze_envs", "contract", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False).returncode
    from wrappers.contract.cli import move_main, start_main

    mains = {"start": start_main, "move": move_main}
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # the commands print their status
        return mains[args[0]](args[1:])


def _shape(text: str) -> str:
    """The observation without its numbers (a step counter alone is no change)."""
    return re.sub(r"\d+", "#", text)


def play(workspace: Path, max_actions: int, seed: int, use_subprocess: bool) -> dict[str, object]:
    """Play the session in ``workspace`` until it is terminal or ``max_actions`` were sent."""
    rng = random.Random(seed)
    observations = workspace / "observations"
    stale: set[tuple[str, str]] = set()  # (observation shape, action) that changed nothing
    sent = 0
    while True:
        status = json.loads((observations / "status.json").read_text())
        if status["terminal"] or sent >= max_actions:
            return status
        state_file = observations / "state.txt"
        before = state_file.read_text() if state_file.exists() else ""
        choices = [a for a in status["available_actions"] if (_shape(before), a) not in stale]
        action = rng.choice(choices or status["available_actions"])
        code = contract(["move", "--workspace", str(workspace), json.dumps({"id": action})],
                        use_subprocess)  # fmt: skip
        if code != 0:
            raise SystemExit(f"the environment refused {action!r} (exit {code})")
        sent += 1
        after = state_file.read_text() if state_file.exists() else ""
        if _shape(after) == _shape(before) and "blocked" in after:
            stale.add((_shape(before), action))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-actions", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--subprocess", action="store_true", help="use the installed CLI")
    args = parser.parse_args()
    sessions = {
        "AGI Maze tutorial": ["--env", "agimaze", "--path", "TUTORIAL/STAGE-01/0000.json"],
        "AGI Maze set": ["--env", "agimaze-set", "--paths", "TUTORIAL/STAGE-01/0000.json"],
        "Maze Escape (agent A)": ["--env", "escape", "--width", "5", "--height", "5"],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, options) in enumerate(sessions.items()):
            workspace = Path(tmp) / f"session{number}"
            start = ["start", "--workspace", str(workspace), "--seed", str(args.seed), *options]
            if contract(start, args.subprocess) != 0:
                raise SystemExit(f"could not start {name}")
            if name == "AGI Maze set":  # the set waits for start: the message says so
                message = (workspace / "observations" / "message.md").read_text()
                assert '{"id":"start"}' in message
            status = play(workspace, args.max_actions, args.seed, args.subprocess)
            history = len(list((workspace / "history").iterdir()))
            print(
                f"{name:<22} terminal={status['terminal']!s:<5} solved={status['solved']!s:<5} "
                f"steps={status['steps']:<3} responses kept={history}"
            )


if __name__ == "__main__":
    main()
