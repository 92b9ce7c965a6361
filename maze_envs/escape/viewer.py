"""Spectator pictures of a Maze Escape game: a text map (``ansi``) and an image (``rgb_array``).

Spectators see everything the agents do not: the whole maze, the exit, every landmark, every agent
and its trail. Nothing here changes the game.

Text map: walls are ``+---+`` and ``|``; the exit doorway is drawn as ``EEE`` (or ``E``) in the
outer wall. A cell shows the agents on it (``AB``), else its landmark (first three letters), else
the lower-case letter of the agent that most recently left a trail there.

Image: blue walls on cream, the doorway in coral, each landmark a numbered gold square whose full
name stands in a legend to the right of the maze, each agent a disc in its own colour with a line
through its trail. Requires Pillow (``pip install maze-envs[render]``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.engine import Board
from maze_envs.escape.types import LANDMARK_NAMES, State
from maze_envs.grid import EAST, NORTH, SOUTH, WEST

CELL: Final = 28
MARGIN: Final = 12
#: Width of the landmark legend to the right of the maze (numbers and full names).
LEGEND_WIDTH: Final = 96
LEGEND_LINE: Final = 13
BACKGROUND: Final = (250, 246, 234)
WALL: Final = (38, 70, 160)
CORAL: Final = (255, 127, 80)
LANDMARK: Final = (214, 170, 40)
LANDMARK_TEXT: Final = (60, 45, 5)
AGENT_COLOURS: Final = (
    (214, 40, 40),
    (30, 110, 230),
    (40, 160, 70),
    (240, 150, 20),
    (140, 60, 190),
    (20, 170, 170),
    (200, 60, 150),
    (110, 110, 110),
)


def agent_colour(i: int) -> tuple[int, int, int]:
    return AGENT_COLOURS[i % len(AGENT_COLOURS)]


def _trail_cells(board: Board, state: State, i: int) -> list[int]:
    """Agent ``i``'s trail as flat cells, oldest first (padding removed)."""
    cells = board.width * board.height
    return [int(c) for c in state.trail[i] if c < cells]


def _trail_owner(board: Board, state: State) -> dict[int, int]:
    """Cell -> agent whose trail visited it most recently (later agents win ties)."""
    owner: dict[int, tuple[int, int]] = {}
    for i in range(len(state.positions)):
        for age, cell in enumerate(reversed(_trail_cells(board, state, i))):
            if cell not in owner or age <= owner[cell][0]:
                owner[cell] = (age, i)
    return {cell: i for cell, (_, i) in owner.items()}


def render_ansi(board: Board, state: State) -> str:
    """The text map with a legend."""
    w, h = board.width, board.height
    maze = board.layout.maze
    exit_r, exit_c = divmod(board.exit_cell, w)
    door = board.layout.doorway
    names = [chr(ord("A") + i) for i in range(len(state.positions))]
    here: dict[int, str] = {}
    for i, pos in enumerate(state.positions):
        here[pos] = here.get(pos, "") + names[i]
    trails = _trail_owner(board, state)

    def cell_text(flat: int) -> str:
        if flat in here:
            return (here[flat] if len(here[flat]) <= 3 else here[flat][:2] + "+").center(3)
        if board.landmark[flat]:
            return LANDMARK_NAMES[board.landmark[flat] - 1][:3]
        if flat in trails:
            return names[trails[flat]].lower().center(3)
        return "   "

    def is_door(r: int, c: int, bit: int) -> bool:
        return (r, c) == (exit_r, exit_c) and bit == door

    lines = []
    for r in range(h):
        top = "+"
        mid = "E" if is_door(r, 0, WEST) else "|"
        for c in range(w):
            mask = int(maze[r, c])
            top += ("EEE" if is_door(r, c, NORTH) else "   " if mask & NORTH else "---") + "+"
            east = "E" if is_door(r, c, EAST) else " " if mask & EAST else "|"
            mid += cell_text(r * w + c) + east
        lines += [top, mid]
    bottom = "+"
    for c in range(w):
        bottom += ("EEE" if is_door(h - 1, c, SOUTH) else "---") + "+"
    lines.append(bottom)
    lines.append(f"turn {state.turn}; exit at row {exit_r}, column {exit_c}")
    for i, pos in enumerate(state.positions):
        r, c = divmod(pos, w)
        seen = "visited exit" if state.visited_exit[i] else "searching"
        lines.append(f"{names[i]}: row {r}, column {c}, {seen}, {state.wall_bumps[i]} wall bumps")
    marks = ", ".join(
        f"{name[:3]}={name}" for (_, name) in sorted(board.layout.landmarks, key=lambda x: x[1])
    )
    if marks:
        lines.append("landmarks: " + marks)
    return "\n".join(lines)


def landmark_legend(board: Board) -> list[tuple[int, str, tuple[int, int]]]:
    """The picture's legend: (number, full name, cell), numbered row by row from the north-west."""
    marks = sorted(board.layout.landmarks)
    return [(k, name, cell) for k, (cell, name) in enumerate(marks, start=1)]


def image_size(board: Board) -> tuple[int, int]:
    """(width, height) in pixels of the spectator picture: the maze, then the legend."""
    rows = len(board.layout.landmarks)
    height = max(board.height * CELL + 2 * MARGIN, MARGIN + rows * LEGEND_LINE + MARGIN)
    return board.width * CELL + 2 * MARGIN + LEGEND_WIDTH, height


def _centre(board: Board, flat: int) -> tuple[int, int]:
    r, c = divmod(flat, board.width)
    return MARGIN + c * CELL + CELL // 2, MARGIN + r * CELL + CELL // 2


@lru_cache(maxsize=8)
def _background(board: Board) -> Any:
    """The static picture (maze, doorway, landmarks) of a board, drawn once."""
    try:
        from PIL import Image, ImageDraw
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "rgb_array rendering needs Pillow: pip install 'maze-envs[render]'"
        ) from None
    w, h = board.width, board.height
    image = Image.new("RGB", image_size(board), BACKGROUND)
    draw = ImageDraw.Draw(image)
    maze = board.layout.maze
    exit_r, exit_c = divmod(board.exit_cell, w)
    ex, ey = MARGIN + exit_c * CELL, MARGIN + exit_r * CELL
    draw.rectangle([ex + 2, ey + 2, ex + CELL - 2, ey + CELL - 2], fill=(255, 214, 196))
    for r in range(h):
        for c in range(w):
            x0, y0 = MARGIN + c * CELL, MARGIN + r * CELL
            x1, y1 = x0 + CELL, y0 + CELL
            mask = int(maze[r, c])
            if not mask & NORTH:
                draw.line([x0, y0, x1, y0], fill=WALL, width=3)
            if not mask & WEST:
                draw.line([x0, y0, x0, y1], fill=WALL, width=3)
            if r == h - 1:
                draw.line([x0, y1, x1, y1], fill=WALL, width=3)
            if c == w - 1:
                draw.line([x1, y0, x1, y1], fill=WALL, width=3)
    x0, y0 = ex, ey
    door = {
        NORTH: [x0 + 3, y0, x0 + CELL - 3, y0],
        SOUTH: [x0 + 3, y0 + CELL, x0 + CELL - 3, y0 + CELL],
        WEST: [x0, y0 + 3, x0, y0 + CELL - 3],
        EAST: [x0 + CELL, y0 + 3, x0 + CELL, y0 + CELL - 3],
    }[board.layout.doorway]
    draw.line(door, fill=CORAL, width=6)
    legend_x = w * CELL + 2 * MARGIN
    for number, name, (r, c) in landmark_legend(board):
        x0, y0 = MARGIN + c * CELL, MARGIN + r * CELL
        draw.rectangle([x0 + 3, y0 + 3, x0 + 16, y0 + 14], fill=LANDMARK)
        draw.text((x0 + 4, y0 + 3), str(number), fill=LANDMARK_TEXT)
        y = MARGIN + (number - 1) * LEGEND_LINE
        draw.rectangle([legend_x, y, legend_x + 13, y + 11], fill=LANDMARK)
        draw.text((legend_x + 1, y), str(number), fill=LANDMARK_TEXT)
        draw.text((legend_x + 18, y), name, fill=LANDMARK_TEXT)
    return image


def render_rgb(board: Board, state: State) -> NDArray[np.uint8]:
    """The spectator image as an ``(H, W, 3)`` ``uint8`` array."""
    from PIL import ImageDraw

    image = _background(board).copy()
    draw = ImageDraw.Draw(image)
    n = len(state.positions)
    for i in range(n):
        shift = (i - (n - 1) / 2) * 3
        cells = (*_trail_cells(board, state, i), state.positions[i])
        centres = [_centre(board, cell) for cell in cells]
        points = [(x + shift, y + shift) for x, y in centres]
        if len(points) > 1:
            draw.line(points, fill=agent_colour(i), width=2)
    for i, pos in enumerate(state.positions):
        x, y = _centre(board, pos)
        x += int((i % 3 - 1) * 6)
        y += int((i // 3 % 3 - 1) * 6)
        draw.ellipse([x - 7, y - 7, x + 7, y + 7], fill=agent_colour(i), outline=(0, 0, 0))
        draw.text((x - 3, y - 6), chr(ord("A") + i), fill=(255, 255, 255))
    return np.asarray(image, dtype=np.uint8).copy()
