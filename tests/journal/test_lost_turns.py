"""Turns an environment returned but the journal failed to store never verify as ok (issue 13).

Every way a returned turn can miss the file is covered, for Maze Escape, AGI Maze and a foreign
environment recorded by the generic recorder: a group commit that waits past the busy timeout
for a write lock another connection holds, a full disk (``PRAGMA max_page_count``), and a write
error when the pending turns are committed by a reset, a close, a flush or the step that ends
the game. In each case the outcome records the last turn played (returned to the caller) and
``maze-envs verify`` fails the game (exit status 1), naming the turns played but never stored.
A game whose failed write lost only the turn that was never returned still verifies (aborted).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from maze_envs import maze_escape_v1
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.journal import Journal, JournalError, batch
from maze_envs.verify import main as verify_main
from maze_envs.verify import verify_journal
from tests.journal.faults import inject
from wrappers.recording import RecordJournal


class Corridor(gym.Env[int, int]):
    """A foreign environment that never ends: the position is the observation."""

    observation_space = gym.spaces.Discrete(10_000)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = 0
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        self.position += int(action)
        return self.position, 0.0, False, False, {"note": f"at {self.position}"}


class Game:
    """One environment kind, journaled: ``reset``, ``step`` (returns when it ended), ``close``."""

    def __init__(self, kind: str, journal: Journal) -> None:
        self.kind = kind
        self.rng = np.random.default_rng(1)
        self.env: Any
        if kind == "escape":
            self.env = maze_escape_v1.parallel_env(
                preset="navigator", width=7, height=7, max_turns=400, journal=journal
            )
        elif kind == "agimaze":
            self.env = AgiMazeEnv(
                path="TRAINING/S1-rivers/STAGE-06/0000.json", budget_factor=50, journal=journal
            )
        else:
            self.env = RecordJournal(Corridor(), journal)
        self.turn = 0

    def reset(self, seed: int = 3) -> None:
        self.env.reset(seed=seed)
        self.turn = 0

    def step(self) -> None:
        """One step; every returned step is counted in ``turn``."""
        if self.kind == "escape":
            actions = {
                agent: {
                    "move": int(self.rng.integers(5)),
                    "notebook": {"append": f"turn {self.turn + 1}: {agent} was here"},
                    "radio": "",
                }
                for agent in self.env.agents
            }
            self.env.step(actions)
            assert self.env.agents, "the game ended: give it more turns"
        else:
            _, _, terminated, truncated, _ = self.env.step(int(self.rng.integers(2)))
            assert not (terminated or truncated), "the game ended: give it more steps"
        self.turn += 1

    def close(self) -> None:
        self.env.close()


KINDS = ["escape", "agimaze", "generic"]


@pytest.fixture
def only_full_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 8 rows, committed when full (never by the clock): deterministic commits."""
    monkeypatch.setattr(batch, "BATCH_ROWS", 8)
    monkeypatch.setattr(batch, "BATCH_SECONDS", float("inf"))


def play_until_it_raises(game: Game, limit: int = 200) -> JournalError:
    for _ in range(limit):
        try:
            game.step()
        except JournalError as exc:
            return exc
    raise AssertionError(f"no JournalError in {limit} steps")


def verify_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = verify_main([str(path)])
    return status, capsys.readouterr().out


def stored_outcome(path: Path) -> tuple[dict[str, Any] | None, int]:
    with Journal(path, readonly=True) as reader:
        (info,) = reader.games()
    return info.outcome, info.turn_count


@pytest.fixture
def write_lock_holder(tmp_path: Path) -> Iterator[Callable[[], sqlite3.Connection]]:
    """Opens a second connection to ``tmp_path / "games.sqlite"`` that takes the write lock."""
    holders: list[sqlite3.Connection] = []

    def hold() -> sqlite3.Connection:
        holder = sqlite3.connect(tmp_path / "games.sqlite", isolation_level=None, timeout=0)
        holder.execute("BEGIN IMMEDIATE")  # the write lock, held until ROLLBACK
        holders.append(holder)
        return holder

    yield hold
    for holder in holders:
        holder.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.usefixtures("only_full_batches")
def test_a_commit_that_waits_past_the_busy_timeout_fails_verification(
    tmp_path: Path,
    kind: str,
    write_lock_holder: Callable[[], sqlite3.Connection],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "games.sqlite"
    journal = Journal(path, busy_timeout=0.05)  # durability="batch", the default
    game = Game(kind, journal)
    game.reset()
    for _ in range(7):
        game.step()
    assert journal.committed_turn(1) == 7  # turns 0-7: the first batch of 8 rows
    holder = write_lock_holder()  # another connection takes the write lock and keeps it
    error = play_until_it_raises(game)
    assert "database is locked" in str(error)
    assert game.turn == 14  # steps 8-14 returned (their turns waited in the batch); 15 raised
    # the lock is still held: not even the outcome could be written; the game is unfinished
    status, out = verify_cli(path, capsys)
    assert status == 1 and "unfinished (no outcome)" in out
    holder.execute("ROLLBACK")
    game.close()  # the recorder writes the stopped game's outcome at its next chance
    journal.close()
    outcome, stored = stored_outcome(path)
    assert outcome is not None and stored == 8
    assert (outcome["aborted"], outcome["turns"], outcome["turns_played"]) == (True, 7, 14)
    assert "database is locked" in outcome["journal_error"]
    status, out = verify_cli(path, capsys)
    assert status == 1
    assert "FAILED at turn 8 (missing): turns 8-14 were played but never stored" in out
    assert "ok" not in out.splitlines()[2]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.usefixtures("only_full_batches")
def test_a_full_disk_fails_verification(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    journal = Journal(path)
    game = Game(kind, journal)
    game.reset()
    for _ in range(7):
        game.step()
    # the disk is full: the file cannot take one more page
    pages = journal._db.execute("PRAGMA page_count").fetchone()[0]
    journal._db.execute(f"PRAGMA max_page_count = {pages}")
    error = play_until_it_raises(game)
    assert "full" in str(error)
    played = game.turn
    game.close()
    journal.close()
    outcome, stored = stored_outcome(path)
    assert outcome is not None and outcome["aborted"] is True
    assert outcome["turns_played"] == played > outcome["turns"] == stored - 1
    status, out = verify_cli(path, capsys)
    assert status == 1
    first = outcome["turns"] + 1
    assert f"FAILED at turn {first} (missing): turns {first}-{played} were played but" in out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["reset", "close", "flush"])
def test_a_failed_commit_at_reset_close_or_flush_fails_verification(
    tmp_path: Path, kind: str, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    journal = Journal(path)
    faults = inject(journal)
    game = Game(kind, journal)
    game.reset()
    game.step()
    journal.flush()  # turns 0-1 are in the file
    for _ in range(3):
        game.step()  # turns 2-4 returned, waiting in the batch
    faults.fail["INSERT INTO turns"] = "disk I/O error"
    with pytest.raises(JournalError, match=r"cannot write turns 2-4 of game 1 .*disk I/O error"):
        if where == "reset":
            game.reset(seed=4)
        elif where == "close":
            game.close()
        else:
            game.env.recorder.flush()
    faults.fail.clear()
    if where != "close":
        game.close()
    journal.close()
    with Journal(path, readonly=True) as reader:
        info = reader.game(1)
    assert info.outcome is not None
    assert (info.outcome["turns"], info.outcome["turns_played"]) == (1, 4)
    status, out = verify_cli(path, capsys)
    assert status == 1
    assert "FAILED at turn 2 (missing): turns 2-4 were played but never stored" in out
    (report, *_) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("failed", 2)
    assert report.problem is not None and report.problem.turn == 2


def test_the_step_that_ends_the_game_raises_and_its_turn_is_not_counted_as_returned(
    tmp_path: Path,
) -> None:
    path = tmp_path / "games.sqlite"
    journal = Journal(path)
    faults = inject(journal)
    env = maze_escape_v1.parallel_env(preset="navigator", width=5, height=5, max_turns=4,
                                      journal=journal)  # fmt: skip
    stay = {"move": 4, "notebook": {"append": ""}, "radio": ""}
    env.reset(seed=2)
    for _ in range(3):
        env.step({a: stay for a in env.agents})
    faults.fail["INSERT INTO turns"] = "database or disk is full"
    with pytest.raises(JournalError, match="disk is full"):  # turn 4 ends the game
        env.step({a: stay for a in env.agents})
    faults.fail.clear()
    env.close()
    journal.close()
    with Journal(path, readonly=True) as reader:
        (info,) = reader.games()
    assert info.outcome is not None and info.turn_count == 0
    assert (info.outcome["turns"], info.outcome["turns_played"]) == (-1, 3)
    (report,) = verify_journal(path)
    assert report.status == "failed" and report.problem is not None
    assert report.problem.reason.startswith("turns 0-3 were played but never stored")


def test_a_lost_turn_that_was_never_returned_leaves_an_abandoned_game_that_verifies(
    tmp_path: Path,
) -> None:
    path = tmp_path / "games.sqlite"
    journal = Journal(path, durability="turn")  # each turn committed before step returns
    faults = inject(journal)
    game = Game("escape", journal)
    game.reset()
    for _ in range(3):
        game.step()
    faults.fail["INSERT INTO turns"] = "disk I/O error"
    with pytest.raises(JournalError):
        game.step()  # turn 4 is not stored, and this step raises: it was never returned
    faults.fail.clear()
    game.close()
    journal.close()
    with Journal(path, readonly=True) as reader:
        (info,) = reader.games()
    assert info.outcome is not None
    assert (info.outcome["turns"], info.outcome["turns_played"]) == (3, 3)
    (report,) = verify_journal(path)
    assert (report.status, report.ok, report.turns_verified) == ("aborted", True, 4)
