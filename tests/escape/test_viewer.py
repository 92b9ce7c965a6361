"""Spectator pictures: the text map and the rgb image show what they promise."""

from __future__ import annotations

import numpy as np

from maze_envs import maze_escape_v0
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator
from maze_envs.escape.types import Config
from maze_envs.escape.viewer import AGENT_COLOURS, CELL, CORAL, MARGIN, WALL
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
    assert image.shape == (5 * CELL + 2 * MARGIN, 5 * CELL + 2 * MARGIN, 3)
    colours = {tuple(int(v) for v in px) for px in image.reshape(-1, 3)}
    assert WALL in colours and CORAL in colours
    for colour in AGENT_COLOURS[:3]:
        assert colour in colours
    # The coral doorway sits in the south wall of the exit cell (row 4, column 0).
    y = MARGIN + 5 * CELL
    assert tuple(image[y, MARGIN + CELL // 2]) == CORAL


def test_rendering_does_not_change_the_game() -> None:
    env = maze_escape_v0.parallel_env(preset="full", render_mode="rgb_array", width=9, height=7)
    env.reset(seed=2)
    digest = env.state_digest()
    env.render()
    assert env.state_digest() == digest
    assert maze_escape_v0.parallel_env().render() is None  # no render mode: nothing drawn
