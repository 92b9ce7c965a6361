"""Write the journal fixture of ``tests/journal/test_versions.py``: a few small games of every kind.

``v3_games.sqlite.gz`` was written by this script with the library at commit 523ff78 (journal
schema version 3, before version 4 stored observations as changes), so the tests can check
that a version 3 file stays readable and verifiable. Run with a later library, the script writes
that library's schema version::

    PYTHONPATH=$PWD python tests/journal/data/make_fixture.py /tmp/games.sqlite

The games: Maze Escape v1 (navigator, rolling-log notes every turn that overflow the notebook,
radio, agents that meet, decision records with a Blob), Maze Escape v0 (full preset, splice
edits, some rejected), a Maze Escape game abandoned by a reset, two AGI Maze episodes (one with
an open map) and a game of the toy environment recorded through the generic Recorder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.journal import Blob, Journal, Recorder


def escape_navigator(journal: Journal) -> None:
    env = maze_escape_v1.parallel_env(
        preset="navigator",
        width=5,
        height=5,
        max_turns=40,
        notebook_max_bytes=300,
        notebook_turn_bytes=100,
        journal=journal,
    )
    moves, words = np.random.default_rng(7), np.random.default_rng(8)
    env.reset(seed=38)  # the agents meet often: teammates' notebooks are shown
    turn = 0
    while env.agents:
        turn += 1
        actions = {}
        for agent in env.agents:
            note = f"t{turn} {agent}: cell {int(words.integers(100))}\n"
            radio = (
                f"{agent} says: heading {'NESW'[int(words.integers(4))]} now"
                if turn % 4 == 0
                else ""
            )
            actions[agent] = {
                "move": int(moves.integers(5)),
                "notebook": {"append": note},
                "radio": radio,
            }
        env.recorder.note(
            "A", {"prompt": [Blob("You are agent A in a maze. " * 8), f"turn {turn}"]}
        )
        env.step(actions)
    env.close()


def escape_splice(journal: Journal) -> None:
    env = maze_escape_v0.parallel_env(
        preset="full", width=6, height=6, max_turns=25, journal=journal
    )
    rng = np.random.default_rng(3)
    env.reset(seed=5)
    turn = 0
    while env.agents:
        turn += 1
        actions = {}
        for index, agent in enumerate(env.agents):
            start = int(rng.integers(0, 12))
            edit = {"edit": 1, "start": start, "end": start + int(rng.integers(0, 4)),
                    "text": f"[{agent}{turn}]"}  # fmt: skip
            if (turn + index) % 5 == 0:
                edit = {"edit": 0, "start": 0, "end": 0, "text": ""}
            radio = f"{agent}: turn {turn}, all well here" if turn % 3 == index else ""
            actions[agent] = {"move": int(rng.integers(5)), "notebook": edit, "radio": radio}
        env.step(actions)
    env.close()


def escape_abandoned(journal: Journal) -> None:
    env = maze_escape_v1.parallel_env(width=5, height=5, max_turns=30, journal=journal)
    env.reset(seed=8)
    for index, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(index)
    for _ in range(6):
        env.step({a: env.action_space(a).sample() for a in env.agents})
    env.reset(seed=9)  # abandons game 8 before its end
    for _ in range(3):
        env.step({a: env.action_space(a).sample() for a in env.agents})
    env.close()


def agimaze(journal: Journal) -> None:
    for path, seed in (
        ("TRAINING/S0-keys/STAGE-01/0005.json", 1),
        ("TUTORIAL/STAGE-07/0000.json", 2),
    ):
        env = AgiMazeEnv(path=path, journal=journal, budget_factor=1, max_steps=12)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(40):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            if terminated or truncated:
                break
        env.close()


def generic(journal: Journal) -> None:
    recorder = Recorder(journal, env_id="toy-v0", config={"n": 2})
    text = "a long observation text that repeats " * 3
    recorder.start(4, {"A": {"pos": 0, "log": text}}, b"0")
    for turn in range(1, 6):
        obs = {"A": {"pos": turn, "log": text + f"turn {turn}\n" * turn}}
        recorder.turn(turn, obs, {"A": 1}, {"A": "moved"}, str(turn).encode())
    recorder.finish({"done": True})


def main(argv: list[str]) -> int:
    path = Path(argv[0])
    with Journal(path) as journal:
        for record in (escape_navigator, escape_splice, escape_abandoned, agimaze, generic):
            record(journal)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
