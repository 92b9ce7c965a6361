"""Spectator pictures of a Maze Escape game: a text map (``ansi``) and an image (``rgb_array``).

Spectators see everything the agents do not: the whole maze, the exit, every landmark, every agent
and its trail. Nothing here changes the game.

Text map: walls are ``+---+`` and ``|``; the exit doorway is drawn as ``EEE`` (or ``E``) in the
outer wall. A cell shows the agents on it (``AB``), else its landmark (first three letters), else
the lower-case letter of the agent that most recently left a trail there.

Image: a caption band on top (title; turn of turns and the outcome so far), then blue walls on
cream, the doorway in coral, each landmark a numbered gold square whose full name stands in a legend
to the right of the maze, each agent a disc in its own colour with a line through its trail. Agents
sharing a cell are drawn side by side in it (smaller discs), so none hides another. Requires Pillow
(``pip install maze-envs[render]``); the frames suit ``gymnasium.wrappers.RecordVideo`` (through
``supersuit`` or a single-agent wrapper) and ``maze_envs.view``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.engine import Board
from maze_envs.escape.types import LANDMARK_NAMES, State
from maze_envs.grid import EAST, NORTH, SOUTH, WEST
from maze_envs.pictures import load_font, pillow

CELL: Final = 28
MARGIN: Final = 12
#: Height of the caption band above the maze (two lines: title; turn and outcome).
HEADER: Final = 34
CAPTION_TEXT: Final = (34, 34, 51)
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
    """(width, height) in pixels of the spectator picture: caption, maze, then the legend."""
    rows = len(board.layout.landmarks)
    height = max(board.height * CELL + 2 * MARGIN, MARGIN + rows * LEGEND_LINE + MARGIN)
    return board.width * CELL + 2 * MARGIN + LEGEND_WIDTH, HEADER + height


def cell_origin(board: Board, row: int, column: int) -> tuple[int, int]:
    """Pixel (x, y) of the north-west corner of cell (row, column) in the picture."""
    return MARGIN + column * CELL, HEADER + MARGIN + row * CELL


def _centre(board: Board, flat: int) -> tuple[int, int]:
    x, y = cell_origin(board, *divmod(flat, board.width))
    return x + CELL // 2, y + CELL // 2


#: Disc offsets (from the cell centre) and radius for k agents sharing one cell.
_CROWD: Final[dict[int, tuple[tuple[tuple[int, int], ...], int]]] = {
    1: (((0, 0),), 7),
    2: (((-6, 0), (6, 0)), 6),
    3: (((-6, -5), (6, -5), (0, 6)), 5),
    4: (((-6, -6), (6, -6), (-6, 6), (6, 6)), 5),
}
_GRID: Final = tuple((dx, dy) for dy in (-8, 0, 8) for dx in (-8, 0, 8))


def crowd_offsets(count: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """Where ``count`` agents on one cell are drawn: offsets from the centre and disc radius.

    Up to 9 agents each get their own disc; beyond that the first 8 are drawn and the ninth
    place shows how many more there are.
    """
    if count in _CROWD:
        return _CROWD[count]
    return _GRID[: min(count, 9)], 4


def caption(board: Board, state: State, max_turns: int | None, title: str | None) -> list[str]:
    """The two caption lines: the title, then the turn and the outcome so far."""
    n = len(state.positions)
    out = sum(state.visited_exit)
    turns = f"turn {state.turn}" if max_turns is None else f"turn {state.turn}/{max_turns}"
    if state.success:
        outcome = f"team escaped at turn {state.turn}"
    elif max_turns is not None and state.turn >= max_turns:
        outcome = f"time limit: {out} of {n} reached the exit"
    else:
        outcome = f"{out} of {n} reached the exit"
    return [title or f"Maze Escape {board.width}x{board.height}", f"{turns} · {outcome}"]


@lru_cache(maxsize=8)
def _background(board: Board) -> Any:
    """The static picture (maze, doorway, landmarks) of a board, drawn once."""
    image_module, draw_module, _ = pillow()
    w, h = board.width, board.height
    image = image_module.new("RGB", image_size(board), BACKGROUND)
    draw = draw_module.Draw(image)
    maze = board.layout.maze
    exit_r, exit_c = divmod(board.exit_cell, w)
    ex, ey = cell_origin(board, exit_r, exit_c)
    draw.rectangle([ex + 2, ey + 2, ex + CELL - 2, ey + CELL - 2], fill=(255, 214, 196))
    for r in range(h):
        for c in range(w):
            x0, y0 = cell_origin(board, r, c)
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
        x0, y0 = cell_origin(board, r, c)
        draw.rectangle([x0 + 3, y0 + 3, x0 + 16, y0 + 14], fill=LANDMARK)
        draw.text((x0 + 4, y0 + 3), str(number), fill=LANDMARK_TEXT)
        y = HEADER + MARGIN + (number - 1) * LEGEND_LINE
        draw.rectangle([legend_x, y, legend_x + 13, y + 11], fill=LANDMARK)
        draw.text((legend_x + 1, y), str(number), fill=LANDMARK_TEXT)
        draw.text((legend_x + 18, y), name, fill=LANDMARK_TEXT)
    return image


def render_rgb(
    board: Board, state: State, *, max_turns: int | None = None, title: str | None = None
) -> NDArray[np.uint8]:
    """The spectator image as an ``(H, W, 3)`` ``uint8`` array (a fresh array every call).

    ``max_turns`` lets the caption say "turn t/T" and recognise the time limit; ``title``
    replaces the default first caption line (``Maze Escape WxH``).
    """
    _, draw_module, _ = pillow()
    image = _background(board).copy()
    draw = draw_module.Draw(image)
    font = load_font(12)
    for k, line in enumerate(caption(board, state, max_turns, title)):
        draw.text((MARGIN, 3 + k * 15), line, fill=CAPTION_TEXT, font=font)
    n = len(state.positions)
    for i in range(n):
        shift = (i - (n - 1) / 2) * 3
        cells = (*_trail_cells(board, state, i), state.positions[i])
        centres = [_centre(board, cell) for cell in cells]
        points = [(x + shift, y + shift) for x, y in centres]
        if len(points) > 1:
            draw.line(points, fill=agent_colour(i), width=2)
    crowds: dict[int, list[int]] = {}
    for i, pos in enumerate(state.positions):
        crowds.setdefault(pos, []).append(i)
    for pos, members in crowds.items():
        cx, cy = _centre(board, pos)
        offsets, radius = crowd_offsets(len(members))
        shown = members if len(members) <= len(offsets) else members[: len(offsets) - 1]
        for i, (dx, dy) in zip(shown, offsets, strict=False):
            x, y = cx + dx, cy + dy
            box = [x - radius, y - radius, x + radius, y + radius]
            draw.ellipse(box, fill=agent_colour(i), outline=(0, 0, 0))
            if radius >= 6:
                draw.text((x - 3, y - 6), chr(ord("A") + i), fill=(255, 255, 255))
        if len(shown) < len(members):
            x, y = cx + offsets[-1][0], cy + offsets[-1][1]
            draw.text((x - 5, y - 6), f"+{len(members) - len(shown)}", fill=(0, 0, 0))
    return np.asarray(image, dtype=np.uint8).copy()
