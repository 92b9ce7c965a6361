"""The vocabularies of Maze Escape, each defined once.

Every set of codes the game uses is an :class:`~enum.IntEnum` here; the name tuples the
observation space documents (``MOVES``, ``EDGE_KINDS``, ...) are derived from the enums, and the
``Literal`` types of the typed models spell the same names (a test keeps the two in step, since a
``Literal`` cannot be computed for a type checker). The integer value of a member is its code in
the observation and action spaces; the tuple entry at that index is its name in the JSON form and
the typed models.

Example:
    >>> Move.N, MOVES[Move.STAY], MoveResult(3).label
    (<Move.N: 0>, 'STAY', 'bumped_interior_wall')
    >>> EDGE_KINDS
    ('open', 'interior_wall', 'outer_brick')
    >>> OPPOSITE_DIRECTION["E"], sorted(WALL_RESULTS)
    ('W', ['bumped_interior_wall', 'bumped_outer_brick'])
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final, Literal, cast

from maze_envs.grid import EAST, NORTH, OPPOSITE, SOUTH, WEST


class _Named(IntEnum):
    """An IntEnum whose JSON/model name is its member name in lower case."""

    @property
    def label(self) -> str:
        """The name used in the JSON form and in the typed models."""
        return self.name.lower()


class Move(IntEnum):
    """The ``move`` of an action: one step north, east, south or west, or stay."""

    N = 0
    E = 1
    S = 2
    W = 3
    STAY = 4

    @property
    def label(self) -> str:
        return self.name


class EdgeKind(_Named):
    """What an edge of a cell is (``edges`` of the observation, in the order N, E, S, W)."""

    OPEN = 0  # passable; the exit's doorway reads open
    INTERIOR_WALL = 1
    OUTER_BRICK = 2


class MoveResult(_Named):
    """What the previous move did (``last_action.move``)."""

    NONE = 0  # no move yet (turn 0)
    MOVED = 1
    STAYED = 2
    BUMPED_INTERIOR_WALL = 3
    BUMPED_OUTER_BRICK = 4
    DOORWAY = 5  # tried to leave through the exit's doorway: stays on the exit


class NotebookResult(_Named):
    """What the previous notebook edit did (``last_action.notebook``)."""

    NONE = 0  # no edit
    APPLIED = 1
    REJECTED = 2


class RadioResult(_Named):
    """What the previous radio message did (``last_action.radio``)."""

    NONE = 0  # nothing sent
    SENT = 1
    REFUSED = 2


MoveName = Literal["N", "E", "S", "W", "STAY"]
Direction = Literal["N", "E", "S", "W"]
EdgeKindName = Literal["open", "interior_wall", "outer_brick"]
MoveResultName = Literal[
    "none", "moved", "stayed", "bumped_interior_wall", "bumped_outer_brick", "doorway"
]
NotebookResultName = Literal["none", "applied", "rejected"]
RadioResultName = Literal["none", "sent", "refused"]

# The name tuples are computed from the enums; the casts only tell the type checker that their
# entries are the Literal names above (tests/escape/test_vocab.py checks both agree).
#: Names of the moves, indexed by :class:`Move`.
MOVES: Final = cast("tuple[MoveName, ...]", tuple(m.label for m in Move))
#: The four directions, in the order of ``edges``, ``used_exits`` and the moves.
DIRECTIONS: Final = cast("tuple[Direction, ...]", MOVES[: Move.STAY])
#: Edge bit (:mod:`maze_envs.grid`) of each direction.
DIRECTION_BITS: Final[dict[Direction, int]] = {"N": NORTH, "E": EAST, "S": SOUTH, "W": WEST}
_BY_BIT: Final = {bit: name for name, bit in DIRECTION_BITS.items()}
#: The direction back where a move came from (from the grid's opposite edges).
OPPOSITE_DIRECTION: Final[dict[Direction, Direction]] = {
    name: _BY_BIT[OPPOSITE[bit]] for name, bit in DIRECTION_BITS.items()
}
EDGE_KINDS: Final = cast("tuple[EdgeKindName, ...]", tuple(k.label for k in EdgeKind))
MOVE_RESULTS: Final = cast("tuple[MoveResultName, ...]", tuple(r.label for r in MoveResult))
NOTEBOOK_RESULTS: Final = cast(
    "tuple[NotebookResultName, ...]", tuple(r.label for r in NotebookResult)
)
RADIO_RESULTS: Final = cast("tuple[RadioResultName, ...]", tuple(r.label for r in RadioResult))
#: Move results of a move into a wall (the interior walls or the outer brick).
WALL_RESULTS: Final[frozenset[str]] = frozenset(
    {MoveResult.BUMPED_INTERIOR_WALL.label, MoveResult.BUMPED_OUTER_BRICK.label}
)
#: Move results that mean "the agent did not leave its cell although it tried".
REFUSED_RESULTS: Final[frozenset[str]] = WALL_RESULTS | {MoveResult.DOORWAY.label}

#: Landmark names, in the order their codes appear in the observation (code = index + 1; 0 none).
LANDMARK_NAMES: Final = (
    "tree",
    "picture",
    "piano",
    "candle",
    "key",
    "clock",
    "mirror",
    "lamp",
    "vase",
    "bell",
    "chair",
    "globe",
    "harp",
    "anchor",
    "statue",
    "fountain",
    "drum",
    "book",
    "kettle",
    "compass",
    "telescope",
    "rug",
    "shield",
    "crown",
)
#: ``landmark`` code of a cell without a landmark.
NO_LANDMARK: Final = 0
