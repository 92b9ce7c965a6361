"""Each vocabulary is defined once (issue 17): the source is scanned for second definitions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from maze_envs.agimaze.formal import EVENT_NAMES
from maze_envs.agimaze.types import BLOCKED_EVENTS, OPPOSITE_DIRECTION, WALL_EVENTS
from maze_envs.escape.vocab import MOVE_RESULTS, REFUSED_RESULTS, WALL_RESULTS
from maze_envs.escape.vocab import OPPOSITE_DIRECTION as ESCAPE_OPPOSITE

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p
    for package in ("maze_envs", "wrappers", "llm_policies")
    for p in (ROOT / package).rglob("*.py")
)


def _offenders(pattern: str, allowed: set[str]) -> list[str]:
    found = re.compile(pattern)
    return [
        str(path.relative_to(ROOT))
        for path in SOURCES
        if str(path.relative_to(ROOT)) not in allowed and found.search(path.read_text())
    ]


def test_the_vocabularies_agree_with_the_games() -> None:
    assert OPPOSITE_DIRECTION == {"up": "down", "down": "up", "left": "right", "right": "left"}
    assert ESCAPE_OPPOSITE == {"N": "S", "S": "N", "E": "W", "W": "E"}
    assert WALL_EVENTS <= set(BLOCKED_EVENTS) <= set(EVENT_NAMES)
    assert WALL_RESULTS < REFUSED_RESULTS <= set(MOVE_RESULTS)


def test_direction_opposites_and_wall_sets_are_written_once() -> None:
    assert _offenders(r'"up":\s*"down"', set()) == []
    assert _offenders(r'"N":\s*"S"', set()) == []
    agimaze = {"maze_envs/agimaze/types.py", "maze_envs/agimaze/formal.py"}
    assert _offenders(r'"bumped_wall",\s*"bumped_monolith"', agimaze) == []
    escape = {"maze_envs/escape/vocab.py"}
    assert _offenders(r'"bumped_interior_wall",\s*"bumped_outer_brick"', escape) == []


def test_the_straight_line_distance_and_pillow_have_one_home() -> None:
    assert _offenders(r"math\.hypot|math\.dist\b", {"maze_envs/grid.py"}) == []
    assert _offenders(r"(?m)^\s*(from PIL import|import PIL)", {"maze_envs/pictures.py"}) == []


def test_map_text_geometry_lives_in_mapfmt() -> None:
    assert _offenders(r"4 \* c \+ 2|\(width - 1\) // 4", {"maze_envs/agimaze/mapfmt.py"}) == []


def test_http_statuses_are_named() -> None:
    """No bare 4xx/5xx number in the code of the HTTP sides (``http.HTTPStatus`` instead)."""
    folders = ("maze_envs/agimaze/api", "llm_policies")
    bare = []
    for path in SOURCES:
        relative = str(path.relative_to(ROOT))
        if not relative.startswith(folders):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                numbers = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
                if any(isinstance(c.value, int) and 400 <= c.value < 600 for c in numbers):
                    bare.append(f"{relative}:{node.lineno}")
    assert bare == []
