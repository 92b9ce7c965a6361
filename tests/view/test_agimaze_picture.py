"""AGI Maze spectator pictures (rgb_array) and RecordVideo on both AGI Maze environments."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.mapfmt import read_board, render_map
from maze_envs.agimaze.set_env import AgiMazeSetEnv
from maze_envs.agimaze.types import ExitGap, Labyrinth
from maze_envs.agimaze.viewer import (
    CELL,
    CORAL,
    HEADER,
    ITEM_COLOURS,
    MARGIN,
    MIN_WIDTH,
    PLAYER_COLOUR,
    WALL,
    backend_picture,
    blank_map,
    caption,
    image_size,
    render_rgb,
)
from maze_envs.grid import EAST, SOUTH


def corridor() -> Labyrinth:
    """``S K T`` in a row, the exit on the right of T: right, right, right wins."""
    return Labyrinth(
        rows=1,
        cols=3,
        open_edges=[[2, 10, 8]],
        exit=ExitGap(cell=(0, 2), side="right"),
        start=(0, 0),
        key=(0, 1),
        chest=(0, 2),
        max_steps=4,
    )


def square() -> Labyrinth:
    """A 2x2 board with one interior wall (between the two top cells) and the exit up at (0, 1)."""
    return Labyrinth(
        rows=2,
        cols=2,
        open_edges=[[4, 4], [3, 9]],
        exit=ExitGap(cell=(0, 1), side="up"),
        start=(0, 0),
        chest=(1, 1),
        key=(1, 0),
    )


def centre(r: int, c: int) -> tuple[int, int]:
    """(y, x) of a cell centre in the picture."""
    return HEADER + MARGIN + r * CELL + CELL // 2, MARGIN + c * CELL + CELL // 2


def test_read_board_recovers_walls_gap_and_glyphs() -> None:
    lab = square()
    board = read_board(render_map(lab))
    assert (board.rows, board.cols) == (2, 2)
    for r in range(2):
        for c in range(2):
            mask = lab.open_edges[r][c]
            if c < 1:
                assert board.east_open[(r, c)] == bool(mask & EAST)
            if r < 1:
                assert board.south_open[(r, c)] == bool(mask & SOUTH)
    assert board.east_open == {(0, 0): False, (1, 0): True}
    assert board.south_open == {(0, 0): True, (0, 1): True}
    assert board.gap == (0, 1, "up")
    assert board.glyphs == {(0, 0): "S", (1, 0): "K", (1, 1): "T"}
    with pytest.raises(ValueError, match="not an AGI Maze map"):
        read_board("+--+\n|  |")


def test_picture_shows_walls_gap_items_and_player() -> None:
    image = render_rgb(render_map(square()), ["square", "step 0"])
    assert image.shape == (HEADER + 2 * CELL + 2 * MARGIN, MIN_WIDTH, 3)
    assert image.dtype == np.uint8
    y, x = centre(0, 0)
    assert tuple(image[y, x]) == PLAYER_COLOUR
    y, x = centre(1, 0)
    assert tuple(image[y - 8, x - 8]) == ITEM_COLOURS["K"]  # the key's tile, beside its letter
    y, x = centre(1, 1)
    assert tuple(image[y - 8, x - 8]) == ITEM_COLOURS["T"]
    # the interior wall between (0, 0) and (0, 1), and the exit gap in the top frame above (0, 1)
    y, x = centre(0, 0)
    assert tuple(image[y, MARGIN + CELL]) == WALL
    assert tuple(image[HEADER + MARGIN - 1, MARGIN + CELL + CELL // 2]) == CORAL
    # the open edge between (1, 0) and (1, 1) is not drawn
    y, _ = centre(1, 0)
    assert tuple(image[y - 12, MARGIN + CELL]) != WALL


def test_caption_lines() -> None:
    assert caption("lab", 4, 20, {}, "playing") == ["lab", "step 4/20 · holds nothing · playing"]
    assert caption("lab", 4, None, None, "solved") == ["lab", "step 4 · solved"]
    assert caption("", 0, 5, {"exit_key": True, "grenades": 0}, "x")[1] == (
        "step 0/5 · holds exit key, 0 grenades · x"
    )


def test_canvas_fixes_the_size_and_refuses_a_smaller_one() -> None:
    text = render_map(corridor())
    assert render_rgb(text, ["a"], canvas=(6, 12)).shape == (*image_size(6, 12)[::-1], 3)
    with pytest.raises(ValueError, match="smaller"):
        render_rgb(text, ["a"], canvas=(1, 2))
    assert read_board(blank_map(3, 4)).glyphs == {}


def test_env_picture_follows_the_game_and_drops_collected_items() -> None:
    env = AgiMazeEnv(labyrinth=corridor(), render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert tuple(first[centre(0, 0)]) == PLAYER_COLOUR
    key_y, key_x = centre(0, 1)
    assert tuple(first[key_y - 8, key_x - 8]) == ITEM_COLOURS["K"]
    env.step_name("right")  # picks up the key
    second = env.render()
    assert tuple(second[centre(0, 1)]) == PLAYER_COLOUR
    assert tuple(second[centre(0, 0)]) != PLAYER_COLOUR
    assert not (second[HEADER:] == np.array(ITEM_COLOURS["K"], np.uint8)).all(axis=2).any()
    assert not np.array_equal(first[:HEADER], second[:HEADER])  # the caption moved on
    state = env.backend.state
    env.render()
    assert env.backend.state == state  # drawing changes nothing


def test_check_env_renders_both_envs() -> None:
    for env_id, kwargs in (
        ("maze_envs/AgiMaze-v0", {"labyrinth": corridor()}),
        ("maze_envs/AgiMazeSet-v0", {"labyrinths": [corridor(), square()]}),
    ):
        env = gym.make(env_id, render_mode="rgb_array", **kwargs)
        check_env(env.unwrapped, skip_render_check=False)


def test_set_frames_have_one_size_across_labyrinths() -> None:
    env = AgiMazeSetEnv(labyrinths=[corridor(), square()], render_mode="rgb_array")
    env.reset(seed=0)
    sizes = {env.render().shape}
    env.step_name("start")
    for _ in range(3):
        env.step_name("right")
        sizes.add(env.render().shape)
    env.step_name("start")  # the 2x2 board now
    sizes.add(env.render().shape)
    assert sizes == {(HEADER + 2 * CELL + 2 * MARGIN, MIN_WIDTH, 3)}


class _RemoteBackend:
    """Stands for an HTTP backend: only the server's map text is known."""

    def render(self) -> str:
        return "+---+---+\n| S     |\n+---+---+"


def test_a_remote_map_is_drawn_as_sent() -> None:
    image = backend_picture(_RemoteBackend(), "remote", 2, 10, "playing")
    assert tuple(image[centre(0, 0)]) == PLAYER_COLOUR
    assert image.shape == (HEADER + CELL + 2 * MARGIN, MIN_WIDTH, 3)
    assert not (image == np.array(CORAL, np.uint8)).all(axis=2).any()  # public map: frame closed


@pytest.mark.parametrize("env_id", ["maze_envs/AgiMaze-v0", "maze_envs/AgiMazeSet-v0"])
def test_record_video_on_agimaze(env_id: str, tmp_path: Path) -> None:
    pytest.importorskip(
        "moviepy", reason="RecordVideo needs moviepy: pip install 'maze-envs[render]'"
    )
    kwargs = (
        {"path": "TUTORIAL/STAGE-02/0000.json"}
        if env_id.endswith("AgiMaze-v0")
        else {"paths": ["TUTORIAL/STAGE-01/0000.json", "TUTORIAL/STAGE-04/0000.json"]}
    )
    folder = tmp_path / "videos"
    env = gym.wrappers.RecordVideo(
        gym.make(env_id, render_mode="rgb_array", **kwargs),
        str(folder),
        episode_trigger=lambda _: True,
    )
    env.reset(seed=1)
    env.action_space.seed(1)
    for _ in range(60):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            break
    env.close()
    videos = sorted(folder.glob("*.mp4"))
    assert [v.name for v in videos] == ["rl-video-episode-0.mp4"]
    assert videos[0].stat().st_size > 1000
