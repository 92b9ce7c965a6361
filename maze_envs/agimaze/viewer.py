"""Spectator pictures of an AGI Maze game (``render_mode="rgb_array"``).

The picture is drawn from the map text (read by :func:`maze_envs.agimaze.mapfmt.read_board`), so
it shows exactly what a map shows and works for every backend: the embedded engine draws the full
map with the collected items removed; an HTTP server's map is drawn as the server sent it (for a
hidden labyrinth that is the public map: the closed frame and the player). A caption band on top
holds the title (labyrinth name) and the step, the budget, the inventory and the outcome.

Colours: the monolith frame dark grey, interior walls blue, the exit gap coral, the player a red
disc, items as letters on coloured tiles (key K gold, chest T brown, exit key E violet, boat B teal,
flashlight F yellow, grenade pack G green), river arrows and the mouth on light blue, pits as
numbered grey discs. ``canvas=(rows, cols)`` pads the picture to a fixed board size, so a labyrinth
set that moves between boards of several sizes still gives frames of one size (what
``gymnasium.wrappers.RecordVideo`` needs). Requires Pillow (``pip install 'maze-envs[render]'``).

Example:
    >>> render_rgb("+---+---+\\n| S   T  \\n+---+---+", ["demo"]).shape
    (90, 300, 3)
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.agimaze.mapfmt import (
    ARROW_GLYPHS,
    GRENADE_PACK,
    ITEM_GLYPHS,
    MOUTH,
    PLAYER,
    Board,
    read_board,
)
from maze_envs.pictures import load_font, pillow

CELL: Final = 32
MARGIN: Final = 12
#: Height of the caption band above the board (two lines).
HEADER: Final = 34
#: Narrowest picture: the caption needs about this much room.
MIN_WIDTH: Final = 300
BACKGROUND: Final = (250, 246, 234)
CAPTION_TEXT: Final = (34, 34, 51)
WALL: Final = (38, 70, 160)
MONOLITH: Final = (70, 70, 70)
CORAL: Final = (255, 127, 80)
PLAYER_COLOUR: Final = (214, 40, 40)
WATER: Final = (176, 214, 245)
PIT: Final = (120, 120, 120)
#: Item glyph -> tile colour.
ITEM_COLOURS: Final[dict[str, tuple[int, int, int]]] = {
    ITEM_GLYPHS["key"]: (214, 170, 40),
    ITEM_GLYPHS["chest"]: (150, 95, 40),
    ITEM_GLYPHS["exit_key"]: (140, 60, 190),
    ITEM_GLYPHS["boat"]: (20, 150, 150),
    ITEM_GLYPHS["flashlight"]: (235, 200, 40),
    GRENADE_PACK: (60, 130, 60),
}
_WATER_GLYPHS: Final = frozenset({*ARROW_GLYPHS.values(), MOUTH})


def image_size(rows: int, cols: int) -> tuple[int, int]:
    """(width, height) in pixels of the picture of a ``rows x cols`` board (and its caption)."""
    return max(cols * CELL + 2 * MARGIN, MIN_WIDTH), HEADER + rows * CELL + 2 * MARGIN


def _cell_box(r: int, c: int) -> tuple[int, int]:
    return MARGIN + c * CELL, HEADER + MARGIN + r * CELL


def render_rgb(
    map_text: str, caption: list[str], *, canvas: tuple[int, int] | None = None
) -> NDArray[np.uint8]:
    """The picture of ``map_text`` under ``caption`` (up to two lines), as ``(H, W, 3)`` uint8.

    ``canvas`` (rows, cols) fixes the picture's size to that board size (the map is drawn in
    its north-west corner); it must be at least the map's own size.
    """
    board = read_board(map_text)
    rows, cols = board.rows, board.cols
    if canvas is not None:
        if canvas[0] < rows or canvas[1] < cols:
            raise ValueError(f"canvas {canvas} is smaller than the {rows}x{cols} map")
        rows, cols = canvas
    image_module, draw_module, _ = pillow()
    image = image_module.new("RGB", image_size(rows, cols), BACKGROUND)
    draw = draw_module.Draw(image)
    font, small = load_font(12), load_font(14)
    for k, line in enumerate(caption[:2]):
        draw.text((MARGIN, 3 + k * 15), line, fill=CAPTION_TEXT, font=font)
    _draw_board(draw, board, small)
    return np.asarray(image, dtype=np.uint8).copy()


def _draw_board(draw: Any, board: Board, font: Any) -> None:
    for (r, c), glyph in board.glyphs.items():
        x, y = _cell_box(r, c)
        if glyph in _WATER_GLYPHS:
            draw.rectangle([x + 1, y + 1, x + CELL - 1, y + CELL - 1], fill=WATER)
            draw.text((x + CELL // 2, y + CELL // 2), glyph, fill=WALL, font=font, anchor="mm")
        elif glyph.isdigit():
            draw.ellipse([x + 7, y + 7, x + CELL - 7, y + CELL - 7], fill=PIT)
            draw.text((x + CELL // 2, y + CELL // 2), glyph, fill=(255, 255, 255), anchor="mm")
        elif glyph in ITEM_COLOURS:
            draw.rectangle([x + 6, y + 6, x + CELL - 6, y + CELL - 6], fill=ITEM_COLOURS[glyph])
            draw.text(
                (x + CELL // 2, y + CELL // 2), glyph, fill=(255, 255, 255), font=font, anchor="mm"
            )
    for (r, c), is_open in board.east_open.items():
        if not is_open:
            x, y = _cell_box(r, c)
            draw.line([x + CELL, y, x + CELL, y + CELL], fill=WALL, width=3)
    for (r, c), is_open in board.south_open.items():
        if not is_open:
            x, y = _cell_box(r, c)
            draw.line([x, y + CELL, x + CELL, y + CELL], fill=WALL, width=3)
    x0, y0 = _cell_box(0, 0)
    x1, y1 = _cell_box(board.rows, board.cols)
    draw.rectangle([x0 - 2, y0 - 2, x1 + 2, y1 + 2], outline=MONOLITH, width=4)
    if board.gap is not None:
        r, c, side = board.gap
        x, y = _cell_box(r, c)
        segment = {
            "up": [x + 3, y - 1, x + CELL - 3, y - 1],
            "down": [x + 3, y + CELL + 1, x + CELL - 3, y + CELL + 1],
            "left": [x - 1, y + 3, x - 1, y + CELL - 3],
            "right": [x + CELL + 1, y + 3, x + CELL + 1, y + CELL - 3],
        }[side]
        draw.line(segment, fill=CORAL, width=6)
    for (r, c), glyph in board.glyphs.items():
        if glyph == PLAYER:
            x, y = _cell_box(r, c)
            draw.ellipse([x + 7, y + 7, x + CELL - 7, y + CELL - 7], fill=PLAYER_COLOUR)


def caption(
    name: str,
    steps: int,
    budget: int | None,
    inventory: dict[str, Any] | None,
    outcome: str,
) -> list[str]:
    """The two caption lines: the labyrinth name, then steps of budget, inventory and outcome.

    >>> caption("TUTORIAL/STAGE-01/0000.json", 3, 50, {"key": True, "grenades": 2}, "playing")
    ['TUTORIAL/STAGE-01/0000.json', 'step 3/50 · holds key, 2 grenades · playing']
    """
    parts = [f"step {steps}" if budget is None else f"step {steps}/{budget}"]
    if inventory is not None:  # None: not known (a remote server's inventory is not drawn)
        held = []
        for item, value in inventory.items():
            if item == "grenades":
                held.append(f"{value} grenades")
            elif value:
                held.append(item.replace("_", " "))
        parts.append(f"holds {', '.join(held)}" if held else "holds nothing")
    parts.append(outcome)
    return [name or "AGI Maze", " · ".join(parts)]


def blank_map(rows: int, cols: int) -> str:
    """The map text of an empty ``rows x cols`` board with a closed frame (nothing to show yet).

    >>> print(blank_map(2, 2))
    +---+---+
    |       |
    +   +   +
    |       |
    +---+---+
    """
    edge = "+" + "---+" * cols
    between = "+" + "   +" * cols
    middle = "|" + "    " * (cols - 1) + "   |"
    lines = [edge]
    for r in range(rows):
        lines += [middle, between if r < rows - 1 else edge]
    return "\n".join(lines)


def backend_picture(
    backend: Any,
    name: str,
    steps: int,
    budget: int | None,
    outcome: str,
    *,
    canvas: tuple[int, int] | None = None,
) -> NDArray[np.uint8]:
    """The picture of a backend's current game (see :class:`maze_envs.agimaze.env.Backend`).

    The embedded engine's backend (it has ``labyrinth`` and ``state``) is drawn in full with the
    collected items removed, and its inventory is captioned; any other backend is drawn from its
    ``render()`` map text. Before the first start a blank board (of ``canvas`` size) is drawn.
    """
    from maze_envs.agimaze.formal import inventory
    from maze_envs.agimaze.mapfmt import render_map

    labyrinth = getattr(backend, "labyrinth", None)
    state = getattr(backend, "state", None)
    held: dict[str, Any] | None = None
    if labyrinth is not None and state is not None:
        text = render_map(labyrinth, state, static_items=False)
        held = dict(inventory(state))
    else:
        text = backend.render() or ""
    if not text.strip():
        rows, cols = canvas if canvas is not None else (1, 1)
        text = blank_map(rows, cols)
    return render_rgb(text, caption(name, steps, budget, held, outcome), canvas=canvas)
