"""Journaled games of injected generators: rebuilt from what the journal stores, or refused."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from maze_envs import maze_escape_v0
from maze_envs.escape.generator import (
    FixedGenerator,
    Layout,
    PerfectMazeGenerator,
    describe_generator,
    generator_from_description,
)
from maze_envs.escape.types import Config
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal
from tests.escape.boards import act, comb_layout


def play(path: Path, seed: int, **kwargs: object) -> None:
    env = maze_escape_v0.parallel_env(journal=path, max_turns=8, **kwargs)  # type: ignore[arg-type]
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while env.agents:
        env.step({a: act(int(rng.integers(0, 5)), radio="hi") for a in env.agents})
    env.close()


def test_a_fixed_board_is_stored_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path, 3, width=5, height=5, generator=FixedGenerator(comb_layout()))
    with Journal(path, create=False) as journal:
        (game,) = journal.games()
    assert game.generator is not None and game.generator["kind"] == "fixed"
    rebuilt = generator_from_description(game.generator)
    assert isinstance(rebuilt, FixedGenerator)
    layout = rebuilt.generate(Config(width=5, height=5), np.random.default_rng(0))
    original = comb_layout()
    assert np.array_equal(layout.maze, original.maze) and layout.maze.dtype == original.maze.dtype
    assert (layout.exit_cell, layout.doorway, layout.landmarks, layout.starts) == (
        original.exit_cell,
        original.doorway,
        original.landmarks,
        original.starts,
    )
    assert [r.describe() for r in verify_journal(path)] == ["game 1: ok, 9 turns verified"]


def test_a_named_algorithm_other_than_the_configs_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path, 4, width=9, height=7, generator=PerfectMazeGenerator("backtracker"))
    play(path, 4, width=9, height=7, generator=PerfectMazeGenerator("wilson"))  # = the config's
    with Journal(path, create=False) as journal:
        first, second = journal.games()
    assert first.generator == {"kind": "perfect_maze", "algorithm": "backtracker"}
    assert second.generator is None  # the config already names it
    assert all(r.ok for r in verify_journal(path))
    # the stored description matters: a replay with the config's algorithm would differ
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE games SET generator = NULL WHERE id = 1")
    db.close()
    report = verify_journal(path)[0]
    assert report.problem is not None and report.problem.turn == 0
    assert report.problem.kind == "mismatch"


@dataclass(frozen=True)
class CustomGenerator:
    layout: Layout

    def generate(self, config: Config, rng: np.random.Generator) -> Layout:
        return self.layout


def test_a_generator_a_replay_cannot_rebuild_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    with pytest.raises(ValueError, match="cannot journal games of an injected CustomGenerator"):
        maze_escape_v0.parallel_env(
            width=5, height=5, generator=CustomGenerator(comb_layout()), journal=path
        )
    assert not path.exists()  # refused before anything was written
    # unjournaled, the same generator is fine
    env = maze_escape_v0.parallel_env(width=5, height=5, generator=CustomGenerator(comb_layout()))
    env.reset(seed=1)


def test_malformed_descriptions_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown generator kind 'magic'"):
        generator_from_description({"kind": "magic"})
    with pytest.raises(ValueError, match="unreadable generator description"):
        generator_from_description({"kind": "fixed", "maze": [[0]]})
    assert describe_generator(PerfectMazeGenerator("wilson"), Config()) is None
