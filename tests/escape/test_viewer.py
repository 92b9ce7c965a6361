"""Spectator pictures: the text map and the rgb image show what they promise."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest

from maze_envs import maze_escape_v0
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import FixedGenerator
from maze_envs.escape.types import Config
from maze_envs.escape.viewer import (
    AGENT_COLOURS,
    CELL,
    CORAL,
    HEADER,
    LANDMARK,
    LEGEND_LINE,
    LEGEND_WIDTH,
    MARGIN,
    WALL,
    caption,
    cell_origin,
    crowd_offsets,
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
    # the caption band, the maze, then the landmark legend to its right
    assert image.shape == (HEADER + 5 * CELL + 2 * MARGIN, 5 * CELL + 2 * MARGIN + LEGEND_WIDTH, 3)
    colours = {tuple(int(v) for v in px) for px in image.reshape(-1, 3)}
    assert WALL in colours and CORAL in colours
    for colour in AGENT_COLOURS[:3]:
        assert colour in colours
    # The coral doorway sits in the south wall of the exit cell (row 4, column 0).
    y = HEADER + MARGIN + 5 * CELL
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
    assert image.shape[0] >= HEADER + MARGIN + 20 * LEGEND_LINE
    legend_x = 5 * CELL + 2 * MARGIN
    starts = set(env.layout.starts)  # at turn 0 agents cover only their start cells
    for number, _, (r, c) in legend:  # a gold marker in the legend row and on the cell
        row_y = HEADER + MARGIN + (number - 1) * LEGEND_LINE + 10
        assert tuple(image[row_y, legend_x + 12]) == LANDMARK
        if (r, c) not in starts:
            x, y = cell_origin(env._board, r, c)
            assert tuple(image[y + 13, x + 15]) == LANDMARK


def test_rendering_does_not_change_the_game() -> None:
    env = maze_escape_v0.parallel_env(preset="full", render_mode="rgb_array", width=9, height=7)
    env.reset(seed=2)
    digest = env.state_digest()
    env.render()
    assert env.state_digest() == digest
    assert maze_escape_v0.parallel_env().render() is None  # no render mode: nothing drawn


def _colours_in_cell(image: np.ndarray, x: int, y: int) -> set[tuple[int, ...]]:
    patch = image[y : y + CELL, x : x + CELL].reshape(-1, 3)
    return {tuple(int(v) for v in px) for px in patch}


def test_agents_on_one_cell_stay_visible() -> None:
    env = _env("rgb_array")
    env.reset(seed=0)
    # C walks east along the top corridor, B north up its column: both reach (0, 2) at turn 2/4
    step(env, B=act(N), C=act(1))
    step(env, B=act(N), C=act(1))
    step(env, B=act(N))
    step(env, B=act(N))
    assert env._state is not None and env._state.positions[1] == env._state.positions[2] == 2
    image = env.render()
    assert env._board is not None
    x, y = cell_origin(env._board, 0, 2)
    colours = _colours_in_cell(image, x, y)
    assert AGENT_COLOURS[1] in colours and AGENT_COLOURS[2] in colours  # B and C, side by side
    (left, right), radius = crowd_offsets(2)
    centre = (x + CELL // 2, y + CELL // 2)
    # left of each disc's letter: the disc's own colour
    assert tuple(image[centre[1], centre[0] + left[0] - 4]) == AGENT_COLOURS[1]
    assert tuple(image[centre[1], centre[0] + right[0] - 4]) == AGENT_COLOURS[2]
    assert radius * 2 <= right[0] - left[0]  # the two discs do not overlap


def test_crowds_of_any_size_fit_in_a_cell() -> None:
    for count in range(1, 27):
        offsets, radius = crowd_offsets(count)
        assert len(offsets) == min(count, 9)
        for dx, dy in offsets:  # every disc lies inside the cell
            assert abs(dx) + radius <= CELL // 2 and abs(dy) + radius <= CELL // 2
        centres = set(offsets)
        assert len(centres) == len(offsets)


def test_caption_says_title_turn_and_outcome() -> None:
    env = _env("rgb_array")
    env.reset(seed=0)
    board, state = env._board, env._state
    assert board is not None and state is not None
    assert caption(board, state, 120, None) == [
        "Maze Escape 5x5",
        "turn 0/120 · 0 of 3 reached the exit",
    ]
    for _ in range(4):  # C walks down its column onto the exit
        step(env, C=act(S))
    assert caption(board, state, 120, "game 3") == [
        "game 3",
        "turn 4/120 · 1 of 3 reached the exit",
    ]
    state.success = True
    assert caption(board, state, None, None)[1] == "turn 4 · team escaped at turn 4"
    state.success = False
    state.turn = 120
    assert (
        caption(board, state, 120, None)[1] == "turn 120/120 · time limit: 1 of 3 reached the exit"
    )


def test_caption_changes_the_picture_with_the_turn() -> None:
    env = _env("rgb_array")
    env.reset(seed=0)
    first = env.render()[:HEADER]
    step(env)
    second = env.render()[:HEADER]
    assert not np.array_equal(first, second)  # "turn 0/120" became "turn 1/120"
    assert (second != np.array(BACKGROUND_RGB, dtype=np.uint8)).any()


BACKGROUND_RGB = (250, 246, 234)


class _TeamEnv(gym.Env[Any, Any]):
    """A Maze Escape game as a Gymnasium env stepping every agent at once (for RecordVideo)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self) -> None:
        self.game = maze_escape_v0.parallel_env(
            preset="full", width=7, height=6, max_turns=9, render_mode="rgb_array"
        )
        self.render_mode = "rgb_array"
        self.action_space = gym.spaces.Dict(
            {a: self.game.action_space(a) for a in self.game.possible_agents}
        )
        self.observation_space = gym.spaces.Dict(
            {a: self.game.observation_space(a) for a in self.game.possible_agents}
        )

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        observations, _ = self.game.reset(seed=seed)
        return observations, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observations, rewards, terms, truncs, _ = self.game.step(dict(action))
        return observations, sum(rewards.values()), all(terms.values()), all(truncs.values()), {}

    def render(self) -> Any:
        return self.game.render()


def test_record_video_writes_a_video_of_a_game(tmp_path: Path) -> None:
    pytest.importorskip(
        "moviepy", reason="RecordVideo needs moviepy: pip install 'maze-envs[render]'"
    )
    env = gym.wrappers.RecordVideo(
        _TeamEnv(), str(tmp_path / "videos"), episode_trigger=lambda _: True
    )
    env.reset(seed=3)
    done = False
    frames = 1
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        frames += 1
        done = terminated or truncated
    env.close()
    videos = sorted((tmp_path / "videos").glob("*.mp4"))
    assert [v.name for v in videos] == ["rl-video-episode-0.mp4"]
    assert videos[0].stat().st_size > 1000
    assert frames == 10  # reset + 9 turns: every frame had the same size, or moviepy would fail
