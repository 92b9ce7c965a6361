"""What an AGI Maze player can read from one step's narration and formal observation.

The formal observation says *what* happened (``events``, the tile ``observe``\\ d, river
``details``) but never *where*: positions are for the player to work out. The only spatial fact
missing from ``formal`` is the direction of a river ride, which the narration gives ("The
current carries you down 1 tile, then right 1 tile to its mouth.").

Example:
    >>> read_ride("You went up and fell into a river. The current carries you down 1 tile, "
    ...           "then right 1 tile to its mouth.")
    Ride(moves=('down', 'right'), to_mouth=True)
    >>> read_ride("You went up and stepped on an empty tile.") is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_RIDE: Final = re.compile(r"The current carries you (.+?)( to its mouth)?\.")
_LEG: Final = re.compile(r"(up|down|left|right) (\d+) tiles?")


@dataclass(frozen=True)
class Ride:
    """A river ride: the cells moved, one direction per cell, and whether it ended at the mouth."""

    moves: tuple[str, ...]
    to_mouth: bool


def read_ride(text: str) -> Ride | None:
    """The river ride told in ``text``, or ``None`` when the current did not act."""
    match = _RIDE.search(text)
    if match is None:
        return None
    moves: list[str] = []
    for leg in match.group(1).split(", then "):
        part = _LEG.fullmatch(leg.strip())
        if part is None:
            return None
        moves.extend([part.group(1)] * int(part.group(2)))
    return Ride(tuple(moves), match.group(2) is not None)
