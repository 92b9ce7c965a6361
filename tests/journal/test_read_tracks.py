"""Trajectories rebuilt from journal rows (maze_envs.reading.tracks), on a hand-made board."""

from __future__ import annotations

from pathlib import Path

from maze_envs.escape.env import ENV_ID, MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator, describe_generator
from maze_envs.escape.types import Config
from maze_envs.journal import Journal
from maze_envs.reading.tracks import escape_track, stored_move
from tests.escape.boards import E, N, S, W, act, comb_layout


def comb_game(path: Path) -> None:
    """A walks north 4, west, east; B bumps west, goes north and back; C walks to the exit."""
    config = Config(width=5, height=5, max_turns=6)
    env = MazeEscapeEnv(config, generator=FixedGenerator(comb_layout()), journal=path)
    env.reset(seed=0)
    script = [
        {"A": act(N), "B": act(W), "C": act(S)},
        {"A": act(N), "B": act(), "C": act(S)},
        {"A": act(N), "B": act(N), "C": act(S)},
        {"A": act(N), "B": act(S), "C": act(S)},
        {"A": act(W), "B": act(), "C": act()},
        {"A": act(E), "B": act(), "C": act(N)},
    ]
    for actions in script:
        env.step(actions)
    env.close()


def test_track_follows_every_agent(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    comb_game(path)
    with Journal.open_readonly(path) as journal:
        track = escape_track(journal, 1)
    assert track.problem is None and track.length == 7
    cells = {a: [track.board.cells[c] for c in track.cells[a]] for a in track.agents}
    assert cells["A"] == [(4, 4), (3, 4), (2, 4), (1, 4), (0, 4), (0, 3), (0, 4)]
    assert cells["B"] == [(4, 2), (4, 2), (4, 2), (3, 2), (4, 2), (4, 2), (4, 2)]
    assert cells["C"] == [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (4, 0), (3, 0)]
    assert track.moves["B"] == [None, "W", "STAY", "N", "S", "STAY", "STAY"]
    assert track.results["B"] == [
        None,
        "bumped_interior_wall",
        "stayed",
        "moved",
        "moved",
        "stayed",
        "stayed",
    ]
    assert [track.path_distance("C", t) for t in range(7)] == [4, 3, 2, 1, 0, 0, 1]
    assert track.rewards("C") == [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert track.row_col("A", 5) == (0, 3)


def test_a_recorded_move_through_a_wall_stops_the_track(tmp_path: Path) -> None:
    config = Config(width=5, height=5)
    generator = FixedGenerator(comb_layout())
    path = tmp_path / "forged.sqlite"
    with Journal(path) as journal:
        game = journal.start_game(
            env_id=ENV_ID,
            config=config.model_dump(mode="json"),
            seed=0,
            library_version="test",
            generator=describe_generator(generator, config),
        )
        still = {"move": "stayed"}
        journal.record_turn(game, 0, observations={}, actions={}, events={}, state_digest=b"0")
        moves = {"A": act(N), "B": act(), "C": act()}
        events = {"A": {"move": "moved"}, "B": still, "C": still}
        journal.record_turn(
            game, 1, observations={}, actions=moves, events=events, state_digest=b"1"
        )
        wall = {"A": act(E), "B": act(), "C": act()}  # (3,4) east is the outer brick
        journal.record_turn(
            game, 2, observations={}, actions=wall, events=events, state_digest=b"2"
        )
    with Journal.open_readonly(path) as journal:
        track = escape_track(journal, game)
    assert track.problem == "turn 2: A is recorded as moving E into a wall"
    assert track.length == 2 and [len(track.cells[a]) for a in "ABC"] == [2, 2, 2]


def test_stored_moves() -> None:
    assert [stored_move({"move": m}) for m in range(5)] == ["N", "E", "S", "W", "STAY"]
    assert stored_move({"move": "STAY"}) == "STAY"
    assert stored_move({"move": 7}) is None and stored_move({"move": True}) is None
    assert stored_move({"move": "north"}) is None and stored_move(None) is None
