"""The AGI Maze map text format (SPEC section 1): rendering and parsing.

A board of H rows and W columns is drawn as ``2H+1`` lines of ``4W+1`` characters. Even lines
hold horizontal edges (``+`` at every fourth column, ``---`` closed or three spaces open), odd
lines hold cells (``|`` or a space for the vertical edges, the cell glyph at column ``4c+2``).
The frame has exactly one gap: the exit.

Glyphs seen in the real engine's recordings: ``S`` player (hides the glyph under it), ``K`` key,
``T`` chest, ``E`` exit key, ``> < ^ v`` river arrows (the flow direction) and ``m`` the river
mouth. Our own glyphs for what the recordings never show: ``1``-``9`` a pit of that cycle
(cycle order = reading order), ``B`` boat, ``F`` flashlight, ``G`` grenade pack (the count is not
drawn). As in the recordings, items are drawn statically: collected items stay on the map unless
``static_items=False``.

Example:
    >>> from maze_envs.agimaze.types import ExitGap, Labyrinth
    >>> lab = Labyrinth(rows=1, cols=2, open_edges=[[2, 8]],
    ...                 exit=ExitGap(cell=(0, 1), side="up"), start=(0, 0), chest=(0, 1))
    >>> print(render_map(lab))
    +---+   +
    | S   T |
    +---+---+
    >>> parse_map(render_map(lab)).labyrinth == lab
    True

:func:`read_board` reads any map text by its geometry alone (a public map of a hidden labyrinth
has a closed frame, so it does not parse):

    >>> board = read_board("+---+---+\\n| S   T  \\n+---+---+")
    >>> board.rows, board.cols, board.glyphs[(0, 0)], board.glyphs[(0, 1)], board.gap
    (1, 2, 'S', 'T', (0, 1, 'right'))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from maze_envs.agimaze.compiled import PlayerState, compile_labyrinth
from maze_envs.agimaze.types import (
    DIRECTION_BITS,
    DIRECTION_DELTAS,
    ExitGap,
    GrenadePack,
    Labyrinth,
    PitCycle,
    Pos,
    River,
)
from maze_envs.grid import EAST, SOUTH

PLAYER: Final = "S"
ITEM_GLYPHS: Final[dict[str, str]] = {
    "key": "K",
    "chest": "T",
    "exit_key": "E",
    "boat": "B",
    "flashlight": "F",
}
ARROW_GLYPHS: Final[dict[str, str]] = {"up": "^", "down": "v", "left": "<", "right": ">"}
MOUTH: Final = "m"
GRENADE_PACK: Final = "G"
#: Every glyph the parser accepts under or instead of the player.
CELL_GLYPHS: Final = frozenset(
    {" ", PLAYER, MOUTH, GRENADE_PACK, *ITEM_GLYPHS.values(), *ARROW_GLYPHS.values()}
    | {str(n) for n in range(1, 10)}
)


class MapFormatError(ValueError):
    """Map text that does not follow the AGI Maze map format."""


@dataclass(frozen=True)
class ParsedMap:
    """A parsed map: the labyrinth (its start is the player's cell) and the player's cell."""

    labyrinth: Labyrinth
    player: Pos


def _glyphs(lab: Labyrinth, state: PlayerState | None, static_items: bool) -> dict[Pos, str]:
    glyphs: dict[Pos, str] = {}
    for name, glyph in ITEM_GLYPHS.items():
        pos = getattr(lab, name)
        if pos is not None:
            glyphs[pos] = glyph
    for pack in lab.grenade_packs:
        glyphs[pack.cell] = GRENADE_PACK
    for river in lab.rivers:
        for i, cell in enumerate(river.cells):
            glyphs[cell] = ARROW_GLYPHS[river.flow_direction(i)]
        glyphs[river.mouth] = MOUTH
    for n, cycle in enumerate(lab.pits, start=1):
        for cell in cycle.cells:
            glyphs[cell] = str(n)
    if state is not None and not static_items:
        taken = {
            "key": state.key,
            "chest": state.treasure,
            "exit_key": state.exit_key,
            "boat": state.boat,
            "flashlight": state.flashlight,
        }
        for name, is_taken in taken.items():
            pos = getattr(lab, name)
            if is_taken and pos is not None:
                glyphs.pop(pos, None)
        for i, pack in enumerate(lab.grenade_packs):
            if state.packs_taken & (1 << i):
                glyphs.pop(pack.cell, None)
    return glyphs


def render_map(
    lab: Labyrinth,
    state: PlayerState | None = None,
    *,
    reveal: bool = True,
    static_items: bool = True,
) -> str:
    """The map text of ``lab`` (lines joined by newlines, no trailing newline).

    ``state`` places the player (default: on the start) and opens blown walls; after a win the
    player is outside and not drawn. ``reveal=False`` draws the public map of a hidden labyrinth:
    the closed frame and the player only. The exit gap is hidden too: the public map shows only
    what the start text already says (board size and position), as in the EnvTraverse setup.
    ``static_items=False`` removes collected items.
    """
    rows, cols = lab.rows, lab.cols
    player = lab.start if state is None else state.pos
    blown: frozenset[int] = frozenset() if state is None else state.blown
    opened: set[tuple[Pos, int]] = set()
    if blown:
        for (cell, _), (eid, nb) in compile_labyrinth(lab).walls.items():
            if eid in blown:
                opened.add((min(cell, nb), EAST if cell[0] == nb[0] else SOUTH))
    glyphs = _glyphs(lab, state, static_items) if reveal else {}
    (gap_r, gap_c), gap_side = lab.exit.cell, lab.exit.side
    if not reveal:
        gap_r = gap_c = -1  # no frame cell matches: the frame is drawn closed

    def interior_open(cell: Pos, bit: int) -> bool:
        if not reveal:
            return True
        return bool(lab.open_edges[cell[0]][cell[1]] & bit) or (cell, bit) in opened

    lines: list[str] = []
    for k in range(rows + 1):
        parts = ["+"]
        for c in range(cols):
            if k == 0:
                is_open = gap_side == "up" and gap_c == c
            elif k == rows:
                is_open = gap_side == "down" and gap_c == c
            else:
                is_open = interior_open((k - 1, c), SOUTH)
            parts.append("   +" if is_open else "---+")
        lines.append("".join(parts))
        if k == rows:
            break
        r = k
        parts = []
        for c in range(cols):
            if c == 0:
                is_open = gap_side == "left" and gap_r == r
            else:
                is_open = interior_open((r, c - 1), EAST)
            glyph = PLAYER if (r, c) == player else glyphs.get((r, c), " ")
            parts.append(f"{' ' if is_open else '|'} {glyph} ")
        right_open = gap_side == "right" and gap_r == r
        parts.append(" " if right_open else "|")
        lines.append("".join(parts))
    return "\n".join(lines)


def parse_map(
    text: str,
    *,
    under_player: str = " ",
    grenade_count: int = 1,
    open_map: bool = False,
    max_steps: int | None = None,
) -> ParsedMap:
    """Parse map text back into a labyrinth.

    The player glyph ``S`` hides the cell under it; ``under_player`` says what lies there (empty
    floor by default). Grenade packs get ``grenade_count`` grenades (the text does not carry it).

    Raises:
        MapFormatError: the text breaks the format (with the line and column at fault).
    """
    lines = text.strip("\n").split("\n")
    if len(lines) < 3 or len(lines) % 2 == 0:
        raise MapFormatError(f"a map has 2H+1 lines (H >= 1), got {len(lines)} lines")
    width = len(lines[0])
    if width < 5 or (width - 1) % 4:
        raise MapFormatError(f"map lines have 4W+1 characters (W >= 1), line 0 has {width}")
    rows, cols = (len(lines) - 1) // 2, (width - 1) // 4
    for n, line in enumerate(lines):
        if len(line) != width:
            raise MapFormatError(f"line {n} has {len(line)} characters, expected {width}")
    if under_player not in CELL_GLYPHS - {PLAYER}:
        raise MapFormatError(f"under_player must be a cell glyph, got {under_player!r}")

    open_edges = [[0] * cols for _ in range(rows)]
    gaps: list[ExitGap] = []
    for k in range(rows + 1):
        line = lines[2 * k]
        for c in range(cols):
            if line[4 * c] != "+":
                raise MapFormatError(f"line {2 * k} column {4 * c}: expected '+'")
            segment = line[4 * c + 1 : 4 * c + 4]
            if segment not in ("---", "   "):
                raise MapFormatError(
                    f"line {2 * k} columns {4 * c + 1}-{4 * c + 3}: expected '---' or spaces, "
                    f"got {segment!r}"
                )
            if segment == "   ":
                if k == 0:
                    gaps.append(ExitGap(cell=(0, c), side="up"))
                elif k == rows:
                    gaps.append(ExitGap(cell=(rows - 1, c), side="down"))
                else:
                    open_edges[k - 1][c] |= DIRECTION_BITS["down"]
                    open_edges[k][c] |= DIRECTION_BITS["up"]
        if line[4 * cols] != "+":
            raise MapFormatError(f"line {2 * k} column {4 * cols}: expected '+'")

    glyphs: dict[Pos, str] = {}
    player: Pos | None = None
    for r in range(rows):
        line = lines[2 * r + 1]
        for c in range(cols + 1):
            edge = line[4 * c]
            if edge not in "| ":
                raise MapFormatError(f"line {2 * r + 1} column {4 * c}: expected '|' or a space")
            if edge == " ":
                if c == 0:
                    gaps.append(ExitGap(cell=(r, 0), side="left"))
                elif c == cols:
                    gaps.append(ExitGap(cell=(r, cols - 1), side="right"))
                else:
                    open_edges[r][c - 1] |= DIRECTION_BITS["right"]
                    open_edges[r][c] |= DIRECTION_BITS["left"]
            if c == cols:
                break
            if line[4 * c + 1] != " " or line[4 * c + 3] != " ":
                raise MapFormatError(
                    f"line {2 * r + 1}: columns {4 * c + 1} and {4 * c + 3} must be spaces"
                )
            glyph = line[4 * c + 2]
            if glyph not in CELL_GLYPHS:
                raise MapFormatError(
                    f"line {2 * r + 1} column {4 * c + 2}: unknown glyph {glyph!r}; "
                    f"known glyphs: {''.join(sorted(CELL_GLYPHS))!r}"
                )
            if glyph == PLAYER:
                if player is not None:
                    raise MapFormatError(f"two players (S) on the map: {player} and {(r, c)}")
                player = (r, c)
                glyph = under_player
            if glyph != " ":
                glyphs[(r, c)] = glyph
    if len(gaps) != 1:
        raise MapFormatError(f"the frame must have exactly one gap (the exit), found {len(gaps)}")
    if player is None:
        raise MapFormatError("the map shows no player (S)")
    return ParsedMap(
        _build(rows, cols, open_edges, gaps[0], player, glyphs, grenade_count, open_map, max_steps),
        player,
    )


def _build(
    rows: int,
    cols: int,
    open_edges: list[list[int]],
    exit_gap: ExitGap,
    player: Pos,
    glyphs: dict[Pos, str],
    grenade_count: int,
    open_map: bool,
    max_steps: int | None,
) -> Labyrinth:
    singles: dict[str, Pos] = {}
    packs: list[GrenadePack] = []
    pits: dict[int, list[Pos]] = {}
    arrows: dict[Pos, str] = {}
    mouths: list[Pos] = []
    arrow_of = {g: d for d, g in ARROW_GLYPHS.items()}
    for cell, glyph in sorted(glyphs.items()):
        if glyph in arrow_of:
            arrows[cell] = arrow_of[glyph]
        elif glyph == MOUTH:
            mouths.append(cell)
        elif glyph == GRENADE_PACK:
            packs.append(GrenadePack(cell=cell, count=grenade_count))
        elif glyph.isdigit():
            pits.setdefault(int(glyph), []).append(cell)
        else:
            name = next(n for n, g in ITEM_GLYPHS.items() if g == glyph)
            if name in singles:
                raise MapFormatError(f"two {name} glyphs {glyph!r}: {singles[name]} and {cell}")
            singles[name] = cell
    if sorted(pits) != list(range(1, len(pits) + 1)):
        raise MapFormatError(f"pit cycles must be numbered 1..n without gaps, got {sorted(pits)}")
    try:
        return Labyrinth(
            rows=rows,
            cols=cols,
            open_edges=open_edges,
            exit=exit_gap,
            start=player,
            rivers=_rivers(arrows, mouths),
            pits=[PitCycle(cells=pits[n]) for n in sorted(pits)],
            grenade_packs=packs,
            open_map=open_map,
            max_steps=max_steps,
            **singles,
        )
    except ValueError as exc:
        raise MapFormatError(f"the map does not describe a valid labyrinth: {exc}") from None


def _rivers(arrows: dict[Pos, str], mouths: list[Pos]) -> list[River]:
    """Chain arrow cells into rivers, walking upstream from each mouth."""
    feeders: dict[Pos, list[Pos]] = {}
    for cell, direction in arrows.items():
        dr, dc = DIRECTION_DELTAS[direction]
        feeders.setdefault((cell[0] + dr, cell[1] + dc), []).append(cell)
    rivers: list[River] = []
    used: set[Pos] = set()
    for mouth in mouths:
        chain: list[Pos] = []
        cell = mouth
        while cell in feeders:
            if len(feeders[cell]) > 1:
                raise MapFormatError(f"rivers merge at {cell}: fed by {sorted(feeders[cell])}")
            cell = feeders[cell][0]
            if cell in used or cell in chain:
                raise MapFormatError(f"river arrows form a loop through {cell}")
            chain.append(cell)
        if not chain:
            raise MapFormatError(f"river mouth {mouth} has no arrow pointing into it")
        used.update(chain)
        rivers.append(River(cells=chain[::-1], mouth=mouth))
    stray = sorted(set(arrows) - used)
    if stray:
        raise MapFormatError(f"river arrows {stray} do not lead to a mouth")
    return rivers


@dataclass(frozen=True)
class Board:
    """A map text read cell by cell (no validation beyond the grid shape).

    ``east_open[(r, c)]`` / ``south_open[(r, c)]``: the edge between the cell and its east /
    south neighbour is open; ``gap``: the frame opening as (row, col, side), or None when the
    frame is closed (a public map); ``glyphs``: the non-blank cell glyphs.
    """

    rows: int
    cols: int
    east_open: dict[tuple[int, int], bool] = field(default_factory=dict)
    south_open: dict[tuple[int, int], bool] = field(default_factory=dict)
    gap: tuple[int, int, str] | None = None
    glyphs: dict[tuple[int, int], str] = field(default_factory=dict)


def board_size(text: str) -> tuple[int, int]:
    """``(rows, cols)`` of map text by its geometry (``2H+1`` lines of ``4W+1`` characters)."""
    lines = text.split("\n")
    return len(lines) // 2, len(lines[0]) // 4


def put_glyphs(text: str, glyphs: Mapping[Pos, str]) -> str:
    """``text`` with the glyph of each given cell replaced (the geometry is not checked)."""
    lines = text.split("\n")
    for (r, c), glyph in glyphs.items():
        line = lines[2 * r + 1]
        lines[2 * r + 1] = line[: 4 * c + 2] + glyph + line[4 * c + 3 :]
    return "\n".join(lines)


def read_board(text: str) -> Board:
    """Read map text (``2H+1`` lines of ``4W+1`` characters) into a :class:`Board`.

    Raises ``ValueError`` when the text is not a grid of that shape.
    """
    lines = text.strip("\n").split("\n")
    width = len(lines[0]) if lines else 0
    if len(lines) < 3 or len(lines) % 2 == 0 or width < 5 or (width - 1) % 4:
        raise ValueError(
            f"not an AGI Maze map: {len(lines)} lines of {width} characters (a map has 2H+1 "
            "lines of 4W+1 characters)"
        )
    lines = [line.ljust(width) for line in lines]
    rows, cols = (len(lines) - 1) // 2, (width - 1) // 4
    east: dict[tuple[int, int], bool] = {}
    south: dict[tuple[int, int], bool] = {}
    glyphs: dict[tuple[int, int], str] = {}
    gap: tuple[int, int, str] | None = None
    for r in range(rows):
        line = lines[2 * r + 1]
        if line[0] == " ":
            gap = (r, 0, "left")
        if line[4 * cols] == " ":
            gap = (r, cols - 1, "right")
        for c in range(cols):
            glyph = line[4 * c + 2]
            if glyph != " ":
                glyphs[(r, c)] = glyph
            if c < cols - 1:
                east[(r, c)] = line[4 * c + 4] == " "
            if r < rows - 1:
                south[(r, c)] = lines[2 * r + 2][4 * c + 1 : 4 * c + 4] == "   "
    for k, side, row in ((0, "up", 0), (2 * rows, "down", rows - 1)):
        for c in range(cols):
            if lines[k][4 * c + 1 : 4 * c + 4] == "   ":
                gap = (row, c, side)
    return Board(rows, cols, east, south, gap, glyphs)
