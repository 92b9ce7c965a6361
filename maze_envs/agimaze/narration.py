"""Every narration string of the AGI Maze engine, in one place.

Strings marked *verified* are byte-identical to the real engine's recordings (SPEC section 3);
the rest are our design, written in the same style (see docs/agimaze-rules.md). Templates that
depend only on the direction are pre-formatted per direction so the step path only looks them up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from maze_envs.agimaze.types import DIRECTIONS

START: Final = "Game has started."  # verified (API doc example)

# --- verified against recordings -----------------------------------------------------------
_EMPTY = "You went {d} and stepped on an empty tile."
_MONOLITH = "You tried to go {d}, but a monolith blocks the way."
_WALL = "You tried to go {d}, but a wall blocks the way."
_CHEST_LOCKED = "You went {d} and stepped on a tile with a chest. But you don't have a key."
_CHEST_OPENED = (
    "You went {d} and stepped on a tile with a chest. "
    "You open the chest with your key and take the treasure."
)
_KEY = "You went {d} and stepped on a tile with a key. You pick up the key."
_EXIT_NO_TREASURE = "You went {d} and found the exit, but you stay to find the treasure."
WIN: Final = "You leave the labyrinth with the treasure."

# --- our design ----------------------------------------------------------------------------
_EXIT_KEY = "You went {d} and stepped on a tile with an exit key. You pick up the exit key."
_EXIT_LOCKED = "You went {d} and found the exit, but it is locked. You need the exit key."
_MOUTH = "You went {d} and stepped on a river mouth."
_RIVER = "You went {d} and fell into a river."
_BOAT_ON_RIVER = (
    "You went {d} and rowed your boat onto a river. The boat holds against the current."
)
_PIT = "You went {d} and fell into a pit. You climb out of another pit."
_BOAT = "You went {d} and stepped on a tile with a boat. You take the boat."
_FLASHLIGHT = "You went {d} and stepped on a tile with a flashlight. You pick up the flashlight."
_NO_FLASHLIGHT = "You tried to look {d}, but you have no flashlight."
_NO_GRENADES = "You tried to throw a grenade {d}, but you have no grenades."
_BOMB_WALL = "You threw a grenade {d} and blew up the wall."
_BOMB_MONOLITH = "You threw a grenade {d}, but the monolith withstands the blast."
_BOMB_NOTHING = "You threw a grenade {d}, but there was no wall to destroy."


def _per_direction(template: str) -> dict[str, str]:
    return {d: template.format(d=d) for d in DIRECTIONS}


EMPTY: Final = _per_direction(_EMPTY)
MONOLITH: Final = _per_direction(_MONOLITH)
WALL: Final = _per_direction(_WALL)
CHEST_LOCKED: Final = _per_direction(_CHEST_LOCKED)
CHEST_OPENED: Final = _per_direction(_CHEST_OPENED)
KEY: Final = _per_direction(_KEY)
EXIT_NO_TREASURE: Final = _per_direction(_EXIT_NO_TREASURE)
EXIT_KEY: Final = _per_direction(_EXIT_KEY)
EXIT_LOCKED: Final = _per_direction(_EXIT_LOCKED)
MOUTH: Final = _per_direction(_MOUTH)
RIVER: Final = _per_direction(_RIVER)
BOAT_ON_RIVER: Final = _per_direction(_BOAT_ON_RIVER)
PIT: Final = _per_direction(_PIT)
BOAT: Final = _per_direction(_BOAT)
FLASHLIGHT: Final = _per_direction(_FLASHLIGHT)
NO_FLASHLIGHT: Final = _per_direction(_NO_FLASHLIGHT)
NO_GRENADES: Final = _per_direction(_NO_GRENADES)
BOMB_WALL: Final = _per_direction(_BOMB_WALL)
BOMB_MONOLITH: Final = _per_direction(_BOMB_MONOLITH)
BOMB_NOTHING: Final = _per_direction(_BOMB_NOTHING)


def grenade_pack(direction: str, count: int) -> str:
    """Picking up a grenade pack of ``count`` grenades."""
    noun = "grenade" if count == 1 else "grenades"
    return (
        f"You went {direction} and stepped on a tile with a grenade pack. "
        f"You pick up {count} {noun}."
    )


def river_ride(moves: list[str], to_mouth: bool) -> str:
    """The sentence appended when the current carries the player (``moves``: one per cell)."""
    legs: list[tuple[str, int]] = []
    for move in moves:
        if legs and legs[-1][0] == move:
            legs[-1] = (move, legs[-1][1] + 1)
        else:
            legs.append((move, 1))
    parts = [f"{d} {n} {'tile' if n == 1 else 'tiles'}" for d, n in legs]
    where = " to its mouth" if to_mouth else ""
    return f"The current carries you {', then '.join(parts)}{where}."


_RIDE: Final = re.compile(r"The current carries you (.+?)( to its mouth)?\.")
_LEG: Final = re.compile(r"(up|down|left|right) (\d+) tiles?")


@dataclass(frozen=True)
class Ride:
    """A river ride: the cells moved, one direction per cell, and whether it ended at the mouth."""

    moves: tuple[str, ...]
    to_mouth: bool


def read_ride(text: str) -> Ride | None:
    """The river ride a narration tells (the sentence of :func:`river_ride`), or ``None`` when the
    current did not act. The formal observation says *what* happened but never *where*; the
    direction of a ride is the one spatial fact only the narration gives.

    Example:
        >>> read_ride("You went up and fell into a river. The current carries you down 1 tile, "
        ...           "then right 1 tile to its mouth.")
        Ride(moves=('down', 'right'), to_mouth=True)
        >>> read_ride(river_ride(["left", "left"], False))
        Ride(moves=('left', 'left'), to_mouth=False)
        >>> read_ride("You went up and stepped on an empty tile.") is None
        True
    """
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


#: What a flashlight beam reports for each tile kind (formal ``observe`` kinds).
LOOK_NOUNS: Final[dict[str, str]] = {
    "empty": "an empty tile",
    "key": "a key",
    "treasure": "a chest",
    "exit_key": "an exit key",
    "boat": "a boat",
    "grenade_pack": "a grenade pack",
    "flashlight": "a flashlight",
    "river_mouth": "a river mouth",
    "pit": "a pit",
}
#: What stops a flashlight beam.
LOOK_STOPS: Final[dict[str, str]] = {
    "wall": "a wall",
    "monolith": "the monolith",
    "exit": "the exit",
}


def look(direction: str, tiles: list[str], stop: str) -> str:
    """A flashlight beam: ``tiles`` are tile descriptions, ``stop`` a key of LOOK_STOPS."""
    seen = [*tiles, f"then {LOOK_STOPS[stop]}" if tiles else LOOK_STOPS[stop]]
    return f"You shine your flashlight {direction} and see {', '.join(seen)}."


def look_tile(kind: str, flow: str | None = None) -> str:
    """Description of one tile in a beam; rivers say where they flow."""
    if kind == "river":
        return f"a river flowing {flow}"
    return LOOK_NOUNS[kind]
