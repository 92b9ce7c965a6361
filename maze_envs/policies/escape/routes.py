"""The cooperative explorers' messages: routes to the exit, on the radio and in notebooks.

Grammar (plain ASCII, one message or notebook line each):

* ``EXIT piano:N2E3S;tree:W4`` -- from the landmark ``piano`` the exit is reached by the moves
  N, N, E, E, E, S (a letter and a repeat count, count 1 omitted); from ``tree`` by W, W, W, W.
  Landmark names are global, so a route from a landmark means the same to every agent, whatever
  its own coordinate frame.
* ``HERE:N2E`` (notebooks only) -- the moves from the writer's current cell to the exit. A reader
  sees a notebook only while on the writer's cell, so the route starts where the reader stands.
  ``HERE:`` (no moves) says "this cell is the exit"; ``HERE:?`` says "not known right now".

Example:
    >>> encode_moves(["N", "N", "E", "S", "S", "S"])
    'N2ES3'
    >>> decode_moves("N2ES3")
    ['N', 'N', 'E', 'S', 'S', 'S']
    >>> message = exit_message([("tree", ["W"] * 4), ("piano", ["N", "E"])], max_bytes=40)
    >>> message
    'EXIT piano:NE;tree:W4'
    >>> parse_routes(message)
    {'piano': ['N', 'E'], 'tree': ['W', 'W', 'W', 'W']}
    >>> parse_here("EXIT tree:W4\\nHERE:S2")
    ['S', 'S']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final, cast

from maze_envs.escape.types import Direction

EXIT_PREFIX: Final = "EXIT "
HERE_PREFIX: Final = "HERE:"
UNKNOWN_HERE: Final = "HERE:?"
_RUN = re.compile(r"([NESW])(\d*)")
_MOVES = re.compile(r"(?:[NESW]\d*)*")
_ROUTE = re.compile(r"([a-z]+):((?:[NESW]\d*)*)")
#: A route longer than this is not believed (a garbled count would make a huge one).
MAX_ROUTE_MOVES: Final = 100_000


def encode_moves(moves: Sequence[Direction]) -> str:
    """Run-length text of a list of moves."""
    out: list[str] = []
    i = 0
    while i < len(moves):
        j = i
        while j < len(moves) and moves[j] == moves[i]:
            j += 1
        out.append(moves[i] + (str(j - i) if j - i > 1 else ""))
        i = j
    return "".join(out)


def decode_moves(text: str) -> list[Direction] | None:
    """The moves of a run-length text; ``None`` if it is not one."""
    if not _MOVES.fullmatch(text):
        return None
    moves: list[Direction] = []
    for letter, count in _RUN.findall(text):
        n = int(count) if count else 1
        if n < 1 or len(moves) + n > MAX_ROUTE_MOVES:
            return None
        moves.extend([cast(Direction, letter)] * n)
    return moves


def exit_message(routes: Iterable[tuple[str, Sequence[Direction]]], max_bytes: int) -> str | None:
    """An ``EXIT`` message with as many routes as fit in ``max_bytes``, shortest first.

    ``None`` when not even one route fits.
    """
    parts: list[str] = []
    size = len(EXIT_PREFIX)
    for name, moves in sorted(routes, key=lambda r: (len(r[1]), r[0])):
        part = f"{name}:{encode_moves(moves)}"
        extra = len(part) + (1 if parts else 0)
        if size + extra > max_bytes:
            continue
        parts.append(part)
        size += extra
    return EXIT_PREFIX + ";".join(parts) if parts else None


def parse_routes(text: str) -> dict[str, list[Direction]]:
    """Every route of every ``EXIT`` line in ``text`` (the shortest one per landmark)."""
    routes: dict[str, list[Direction]] = {}
    for line in text.splitlines():
        if not line.startswith(EXIT_PREFIX):
            continue
        for name, encoded in _ROUTE.findall(line[len(EXIT_PREFIX) :]):
            moves = decode_moves(encoded)
            if moves is not None and (name not in routes or len(moves) < len(routes[name])):
                routes[name] = moves
    return routes


def parse_here(text: str) -> list[Direction] | None:
    """The moves of the last ``HERE:`` line of ``text``; ``None`` when absent or unknown."""
    for line in reversed(text.splitlines()):
        if line.startswith(HERE_PREFIX):
            return decode_moves(line[len(HERE_PREFIX) :])
    return None


def here_line(moves: Sequence[Direction] | None) -> str:
    """The ``HERE:`` line for a route from the writer's cell (``None``: not known now)."""
    return UNKNOWN_HERE if moves is None else HERE_PREFIX + encode_moves(moves)
