"""The map text format: rendering, the public map, parsing and its errors, round trips.

Round trips over every recorded map are checked in test_conformance.py (they parse each file
once); here labyrinths are generated from seeds, with every kind of content.
"""

from __future__ import annotations

import numpy as np
import pytest

from maze_envs.agimaze.engine import PlayerState
from maze_envs.agimaze.mapfmt import MapFormatError, parse_map, render_map
from maze_envs.agimaze.types import (
    DIRECTION_BITS,
    DIRECTION_DELTAS,
    DIRECTIONS,
    ExitGap,
    GrenadePack,
    Labyrinth,
    PitCycle,
    Pos,
    River,
)
from maze_envs.grid import generate_perfect_maze

KEYS = "\n".join(
    [
        "+---+---+   +",
        "| S   K |   |",
        "+   +---+   +",
        "|     T     |",
        "+---+---+---+",
    ]
)


def _river(maze: np.ndarray, rng: np.random.Generator, length: int) -> list[Pos] | None:
    rows, cols = maze.shape
    cell = (int(rng.integers(rows)), int(rng.integers(cols)))
    path = [cell]
    while len(path) < length:
        options = []
        for d in DIRECTIONS:
            dr, dc = DIRECTION_DELTAS[d]
            nb = (path[-1][0] + dr, path[-1][1] + dc)
            if maze[path[-1]] & DIRECTION_BITS[d] and nb not in path:
                options.append(nb)
        if not options:
            return None
        path.append(options[int(rng.integers(len(options)))])
    return path


def random_labyrinth(seed: int) -> Labyrinth:
    """A labyrinth with walls, an exit on any side, a river, pits and every item kind."""
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(4, 8)), int(rng.integers(4, 8))
    maze = generate_perfect_maze("wilson", cols, rows, rng)
    river = None
    while river is None:
        river = _river(maze, rng, int(rng.integers(2, 5)))
    free = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in river]
    order = rng.permutation(len(free))
    cells = [free[int(i)] for i in order]
    side = DIRECTIONS[int(rng.integers(4))]
    border = {
        "up": [(0, c) for c in range(cols)],
        "down": [(rows - 1, c) for c in range(cols)],
        "left": [(r, 0) for r in range(rows)],
        "right": [(r, cols - 1) for r in range(rows)],
    }[side]
    return Labyrinth(
        rows=rows,
        cols=cols,
        open_edges=maze.tolist(),
        exit=ExitGap(cell=border[int(rng.integers(len(border)))], side=side),
        start=cells[0],
        key=cells[1],
        chest=cells[2],
        exit_key=cells[3] if seed % 2 else None,
        boat=cells[4],
        flashlight=cells[5],
        grenade_packs=[GrenadePack(cell=cells[6])],
        rivers=[River(cells=river[:-1], mouth=river[-1])],
        pits=[PitCycle(cells=sorted(cells[7:9])), PitCycle(cells=sorted(cells[9:12]))],
    )


@pytest.mark.parametrize("seed", range(40))
def test_generated_labyrinths_round_trip(seed: int) -> None:
    lab = random_labyrinth(seed)
    text = render_map(lab)
    lines = text.split("\n")
    assert len(lines) == 2 * lab.rows + 1
    assert {len(line) for line in lines} == {4 * lab.cols + 1}
    parsed = parse_map(text)
    assert parsed.labyrinth == lab
    assert parsed.player == lab.start
    assert render_map(parsed.labyrinth) == text


def test_player_hides_the_glyph_under_it_and_under_player_restores_it() -> None:
    lab = parse_map(KEYS).labyrinth
    on_key = render_map(lab, PlayerState((0, 1)))
    assert on_key.split("\n")[1] == "|     S |   |"
    parsed = parse_map(on_key, under_player="K")
    assert parsed.player == (0, 1) and parsed.labyrinth.key == (0, 1)
    assert parse_map(on_key).labyrinth.key is None  # by default the hidden cell is floor


def test_items_are_drawn_statically_unless_asked() -> None:
    lab = parse_map(KEYS).labyrinth
    holding = PlayerState((1, 0), key=True, treasure=True)
    assert render_map(lab, holding).split("\n")[1] == "|     K |   |"
    live = render_map(lab, holding, static_items=False).split("\n")
    assert live[1] == "|       |   |" and live[3] == "| S         |"


def test_public_map_shows_only_the_closed_frame_and_the_player() -> None:
    lab = parse_map(KEYS).labyrinth
    assert lab.exit.side == "up"  # the gap exists, but the public map must not give it away
    assert render_map(lab, reveal=False) == "\n".join(
        [
            "+---+---+---+",
            "| S         |",
            "+   +   +   +",
            "|           |",
            "+---+---+---+",
        ]
    )
    moved = render_map(lab, PlayerState((1, 2)), reveal=False)
    assert moved.split("\n")[3] == "|         S |"


def test_after_the_win_no_player_is_drawn() -> None:
    lab = parse_map(KEYS).labyrinth
    text = render_map(lab, PlayerState((-1, 2), won=True))
    assert "S" not in text and "K" in text


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["+---+", "| S |"], "2H\\+1 lines"),
        (["+---+---+", "| S |", "+---+---+"], "line 1 has 5 characters"),
        (["+---+", "| S |", "+---+"], "exactly one gap .* found 0"),
        (["+   +", "  S |", "+---+"], "exactly one gap .* found 2"),
        (["+   +", "| X |", "+---+"], "unknown glyph 'X'"),
        (["+   +", "|   |", "+---+"], "no player"),
        (["+   +---+", "| S   S |", "+---+---+"], "two players"),
        (["+ - +", "| S |", "+---+"], "expected '---' or spaces"),
        (["+   +---+", "| S   > |", "+---+---+"], "do not lead to a mouth"),
        (["+   +---+", "| S   m |", "+---+---+"], "no arrow pointing into it"),
        (["+   +---+---+", "| S   2   2 |", "+---+---+---+"], "numbered 1..n"),
        (["+   +---+", "| S   1 |", "+---+---+"], "pits.*at least 2|too_short|2 items"),
        (["+   +---+", "| S | > |", "+---+---+"], "wall separates|lead to a mouth"),
    ],
)
def test_malformed_maps_get_clear_errors(lines: list[str], message: str) -> None:
    with pytest.raises(MapFormatError, match=message):
        parse_map("\n".join(lines))


def test_rivers_merging_are_rejected() -> None:
    with pytest.raises(MapFormatError, match="rivers merge at \\(0, 1\\)"):
        parse_map("\n".join(["+   +---+---+---+", "| >   m   <   S |", "+---+---+---+---+"]))
