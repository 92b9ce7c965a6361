"""Optional observation features: exact values on the comb board, in every frame.

Absolute coordinates are x = column, y = 4 - row: A starts at abs (4, 0), B at (2, 0), C at
(0, 4); the exit is abs (0, 0).
"""

from __future__ import annotations

import pytest

from maze_envs.escape.types import LANDMARK_NAMES
from tests.escape.boards import N, S, W, act, as_list, comb_env, step

ALL = {"distance_sensor": True, "meeting_alert": True, "used_exits": True}


@pytest.mark.parametrize(
    ("frame", "origins"),
    [
        ("absolute", {"A": (0, 0), "B": (0, 0), "C": (0, 0)}),
        ("own", {"A": (4, 0), "B": (2, 0), "C": (0, 4)}),
        ("shared", {"A": (4, 0), "B": (4, 0), "C": (4, 0)}),
    ],
)
def test_coordinates_and_trail_in_each_frame(
    frame: str, origins: dict[str, tuple[int, int]]
) -> None:
    env = comb_env(coordinates=frame, trail_length=3)
    obs, _ = env.reset(seed=0)
    absolute = {"A": (4, 0), "B": (2, 0), "C": (0, 4)}

    def expect(agent: str, xy: tuple[int, int]) -> list[int]:
        return [xy[0] - origins[agent][0], xy[1] - origins[agent][1]]

    for agent, xy in absolute.items():
        assert as_list(obs[agent]["position"]) == expect(agent, xy)
        assert obs[agent]["trail_length"] == 0
    obs, *_ = step(env, A=act(N), C=act(S))  # N adds 1 to y, S subtracts 1
    assert as_list(obs["A"]["position"]) == expect("A", (4, 1))
    assert as_list(obs["C"]["position"]) == expect("C", (0, 3))
    assert obs["A"]["trail_length"] == 1
    assert as_list(obs["A"]["trail"])[-1] == expect("A", (4, 0))  # last turn's cell
    obs, *_ = step(env, A=act(W))  # a bump: the trail's last entry is where A stayed
    assert as_list(obs["A"]["trail"])[-2:] == [expect("A", (4, 0)), expect("A", (4, 1))]
    assert as_list(obs["A"]["position"]) == expect("A", (4, 1))
    for _ in range(3):
        obs, *_ = step(env, A=act(N))
    # Only the last K=3 turn-end cells, oldest first, never the current cell (4, 4).
    assert obs["A"]["trail_length"] == 3
    assert as_list(obs["A"]["trail"]) == [expect("A", (4, y)) for y in (1, 2, 3)]
    assert as_list(obs["A"]["position"]) == expect("A", (4, 4))


def test_trail_rows_are_padded_before_the_real_entries() -> None:
    env = comb_env(coordinates="absolute", trail_length=4)
    env.reset(seed=0)
    obs, *_ = step(env, A=act(N))
    assert obs["A"]["trail_length"] == 1
    assert as_list(obs["A"]["trail"]) == [[0, 0], [0, 0], [0, 0], [4, 0]]


def test_distance_sensor_in_tenths_ignoring_walls() -> None:
    env = comb_env(**ALL)
    obs, _ = env.reset(seed=0)
    # [exit, teammates in name order]; A-C: sqrt(4^2 + 4^2) = 5.657 -> 57 tenths.
    assert as_list(obs["A"]["distances"]) == [40, 20, 57]
    assert as_list(obs["B"]["distances"]) == [20, 20, 45]  # B-C: sqrt(4 + 16) = 4.47
    assert as_list(obs["C"]["distances"]) == [40, 57, 45]
    obs, *_ = step(env, A=act(N))  # A at abs (4, 1): exit sqrt(17) = 4.12
    assert as_list(obs["A"]["distances"]) == [41, 22, 50]


def test_meeting_alert_names_teammates_on_the_same_cell() -> None:
    env = comb_env(**ALL)
    obs, _ = env.reset(seed=0)
    assert as_list(obs["A"]["colocated_with"]) == [0, 0]
    for _ in range(4):
        obs, *_ = step(env, A=act(N), C=act(1))
    assert as_list(obs["A"]["colocated_with"]) == [0, 1]  # teammates B, C
    assert as_list(obs["C"]["colocated_with"]) == [1, 0]  # teammates A, B
    assert as_list(obs["B"]["colocated_with"]) == [0, 0]


def test_used_exits_mark_edges_crossed_in_either_direction() -> None:
    env = comb_env(**ALL)
    obs, _ = env.reset(seed=0)
    assert as_list(obs["A"]["used_exits"]) == [0, 0, 0, 0]
    obs, *_ = step(env, A=act(N))  # entered (3, 4) through its south edge
    assert as_list(obs["A"]["used_exits"]) == [0, 0, 1, 0]
    obs, *_ = step(env, A=act(S))  # back on the start, which was left through north
    assert as_list(obs["A"]["used_exits"]) == [1, 0, 0, 0]
    obs, *_ = step(env, A=act(W))  # a bump uses nothing
    assert as_list(obs["A"]["used_exits"]) == [1, 0, 0, 0]
    assert as_list(obs["B"]["used_exits"]) == [0, 0, 0, 0]  # per agent


def test_features_switched_off_are_absent() -> None:
    env = comb_env(distance_sensor=False)
    obs, _ = env.reset(seed=0)
    for key in ("distances", "position", "trail", "trail_length", "colocated_with", "used_exits"):
        assert key not in obs["A"]
        assert key not in env.observation_space("A").spaces


def test_landmark_is_shown_only_on_its_cell() -> None:
    env = comb_env()
    obs, _ = env.reset(seed=0)
    assert obs["A"]["landmark"] == 0
    for _ in range(2):
        obs, *_ = step(env, A=act(N), C=act(1))
    assert LANDMARK_NAMES[obs["A"]["landmark"] - 1] == "piano"
    assert LANDMARK_NAMES[obs["C"]["landmark"] - 1] == "tree"


@pytest.mark.parametrize(("width", "height"), [(5, 5), (7, 5), (6, 11)])
def test_the_pair_table_holds_the_straight_line_tenths_of_every_pair(
    width: int, height: int
) -> None:
    from maze_envs.escape.features.distances import pair_tenths
    from maze_envs.grid import straight_line_tenths

    cells = width * height
    table = pair_tenths(width, height)
    assert len(table) == cells * cells
    for a in range(cells):
        ra, ca = divmod(a, width)
        for b in range(cells):
            rb, cb = divmod(b, width)
            assert table[a * cells + b] == straight_line_tenths(abs(ca - cb), abs(ra - rb))
