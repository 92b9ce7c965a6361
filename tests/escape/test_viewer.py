"""Spectator pictures: the text map and the rgb image show what they promise."""

from __future__ import annotations

import numpy as np

from maze_envs import maze_escape_v0
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator
from maze_envs.escape.types import Config
from maze_envs.escape.viewer import (
    AGENT_COLOURS,
    CELL,
    CORAL,
    LANDMARK,
    LEGEND_LINE,
    LEGEND_WIDTH,
    MARGIN,
    WALL,
    landmark_legend,
)
from tests.escape.boards import N, S, act, comb_layout, step


def _env(mode: str) -> MazeEscapeEnv:
    config = Config(width=5, height=5, coordinates="own", trail_length=10)
    return MazeEscapeEnv(config, render_mode=mode, generator=FixedGenerator(comb_layout()))


def test_ansi_map_shows_walls_doorway_landmarks_agents_and_trails() -> None:
    env = _env("ansi")
    env.reset(seed=0)
    step(env, A=act(N), C=act(S))
    text = env.render()
    assert isinstance(text, str)
    lines = text.splitlines()
    assert lines[0] == "+---+---+---+---+---+"
    assert lines[10] == "+EEE+---+---+---+---+"  # the doorway in the south wall under the exit
    assert lines[1] == "| c      tre        |"  # C's trail at its start, the tree landmark
    assert lines[5].endswith("|pia|")
    assert lines[7].endswith("| A |") and lines[9].endswith("| a |")
    assert "| C " in lines[3] and " B " in lines[9]
    assert "landmarks: pia=piano, tre=tree" in text


def test_rgb_picture_has_walls_coral_doorway_and_agent_colours() -> None:
    env = _env("rgb_array")
    env.reset(seed=0)
    for _ in range(3):
        step(env, A=act(N), C=act(S))
    image = env.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8
    # the maze, then the landmark legend to its right
    assert image.shape == (5 * CELL + 2 * MARGIN, 5 * CELL + 2 * MARGIN + LEGEND_WIDTH, 3)
    colours = {tuple(int(v) for v in px) for px in image.reshape(-1, 3)}
    assert WALL in colours and CORAL in colours
    for colour in AGENT_COLOURS[:3]:
        assert colour in colours
    # The coral doorway sits in the south wall of the exit cell (row 4, column 0).
    y = MARGIN + 5 * CELL
    assert tuple(image[y, MARGIN + CELL // 2]) == CORAL


def test_rgb_legend_names_every_landmark_in_full() -> None:
    env = maze_escape_v0.parallel_env(
        preset="full", render_mode="rgb_array", width=5, height=5, landmark_count=20
    )
    env.reset(seed=4)
    assert env._board is not None
    legend = landmark_legend(env._board)
    # full names, numbered 1.. in reading order of their cells
    assert sorted(name for _, name, _ in legend) == sorted(n for _, n in env.layout.landmarks)
    assert [n for n, _, _ in legend] == list(range(1, 21))
    assert [cell for _, _, cell in legend] == sorted(cell for cell, _ in env.layout.landmarks)
    image = env.render()
    # 20 legend lines do not fit beside a 5x5 maze: the picture grows to hold them
    assert image.shape[0] >= MARGIN + 20 * LEGEND_LINE
    legend_x = 5 * CELL + 2 * MARGIN
    starts = set(env.layout.starts)  # at turn 0 agents cover only their start cells
    for number, _, (r, c) in legend:  # a gold marker in the legend row and on the cell
        assert tuple(image[MARGIN + (number - 1) * LEGEND_LINE + 10, legend_x + 12]) == LANDMARK
        if (r, c) not in starts:
            assert tuple(image[MARGIN + r * CELL + 13, MARGIN + c * CELL + 15]) == LANDMARK


def test_rendering_does_not_change_the_game() -> None:
    env = maze_escape_v0.parallel_env(preset="full", render_mode="rgb_array", width=9, height=7)
    env.reset(seed=2)
    digest = env.state_digest()
    env.render()
    assert env.state_digest() == digest
    assert maze_escape_v0.parallel_env().render() is None  # no render mode: nothing drawn
