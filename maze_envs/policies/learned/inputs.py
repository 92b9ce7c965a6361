"""What a learned policy's network reads each turn (one *frame*), defined once for training and
play.

A frame is

1. the entries of the flattened numeric observation (:mod:`maze_envs.escape.numeric`) that the
   network reads, by name (all of them, or a subset: ``trail[..]`` and ``trail_mask[..]`` may be
   left out when the network reads the trail through ``trail_neighbours`` instead);
2. then each *addition* it was trained with, in order:

   * ``previous_move`` (5 entries): the one-hot of the agent's own previous move (N, E, S, W,
     STAY; zeros on a game's first turn). The observation says what became of the last move
     (moved, bumped) but not which way it went: a policy that remembers its own move knows its
     heading, the whole memory of a wall follower.
   * ``trail_neighbours`` (10 entries): what the agent's trail (the ``trail`` feature: the cells
     it ended its last K turns on) says about the cell itself and its four neighbours, in the
     order N, E, S, W, here: how often the trail holds it (``min(count, 4) / 4``), then how long
     ago it was last there (``turns ago / K``; 1 when it is not in the trail). With a trail as
     long as the game this is the information of Trémaux's marks (an unvisited neighbour is new
     ground; the visited neighbour seen longest ago is the way back), which a network reads far
     more easily than K raw coordinates.

:class:`InputPlan` computes frames for any number of rows at once: the training wrapper
(:class:`wrappers.escape_learned_inputs.EscapeLearnedInputs`, every row of the batched engine) and
the policy (:class:`~maze_envs.policies.learned.policy.LearnedEscapePolicy`, one agent of a
scalar game) call the same code, so the network reads in play exactly what it read in training.

Example:
    >>> import numpy as np
    >>> from maze_envs.escape.config import Config
    >>> from maze_envs.escape.numeric import NumericLayout
    >>> layout = NumericLayout(Config.from_preset("full", width=7, height=7))
    >>> plan = InputPlan(layout, additions=("previous_move", "trail_neighbours"))
    >>> plan.width - layout.width, plan.names[-1]
    (15, 'trail_neighbours.ago[here]')
    >>> frame = plan.frames(np.zeros((2, layout.width), np.float32), np.array([-1, 2]))
    >>> frame.shape, frame[1, layout.width : layout.width + 5].tolist()
    ((2, 178), [0.0, 0.0, 1.0, 0.0, 0.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.numeric import NumericLayout
from maze_envs.escape.vocab import DIRECTIONS, MOVES

__all__ = ["ADDITIONS", "InputPlan", "InputsError"]

#: The cells ``trail_neighbours`` describes, as ``[x, y]`` offsets (x east, y north).
_PLACES: Final = ((0, 1), (1, 0), (0, -1), (-1, 0), (0, 0))
_PLACE_NAMES: Final = (*DIRECTIONS, "here")
#: Visits counted up to this many (the count entry is ``min(count, cap) / cap``).
VISIT_CAP: Final = 4

#: Every addition a frame may have, with the names of its entries.
ADDITIONS: Final[dict[str, tuple[str, ...]]] = {
    "previous_move": tuple(f"previous_move={m}" for m in MOVES),
    "trail_neighbours": (
        *(f"trail_neighbours.visits[{p}]" for p in _PLACE_NAMES),
        *(f"trail_neighbours.ago[{p}]" for p in _PLACE_NAMES),
    ),
}


class InputsError(ValueError):
    """A frame that cannot be built for this game (a missing entry or feature)."""


class InputPlan:
    """How to build the frames of one game configuration (see the module docstring).

    Arguments:
        layout: the game's numeric layout.
        feature_names: the observation entries the network reads, in order (None: all of them).
        additions: names of :data:`ADDITIONS`, in order.
    """

    def __init__(
        self,
        layout: NumericLayout,
        feature_names: Sequence[str] | None = None,
        additions: Sequence[str] = (),
    ) -> None:
        self.layout = layout
        names = list(layout.names)
        wanted = names if feature_names is None else list(feature_names)
        position = {name: i for i, name in enumerate(names)}
        missing = [name for name in wanted if name not in position]
        if missing:
            shown = ", ".join(missing[:4]) + (" ..." if len(missing) > 4 else "")
            raise InputsError(
                f"this game's numeric observation has no {shown} ({len(missing)} entries "
                "missing): play it with the observation settings the network was trained on"
            )
        unknown = [a for a in additions if a not in ADDITIONS]
        if unknown:
            raise InputsError(f"unknown inputs {unknown}; known: {sorted(ADDITIONS)}")
        self.columns = np.array([position[name] for name in wanted], np.intp)
        self.additions = tuple(additions)
        self.feature_names = tuple(wanted)
        self.names = (*wanted, *(n for a in self.additions for n in ADDITIONS[a]))
        self.width = len(self.names)
        if "trail_neighbours" in self.additions:
            config = layout.config
            if not config.trail_length or config.coordinates is None:
                raise InputsError(
                    "the trail_neighbours input needs the trail: trail_length > 0 and a "
                    "coordinate frame"
                )
            self._scale = np.array([config.width - 1, config.height - 1], np.float64)
            self._trail = layout.span("trail")
            self._mask = layout.span("trail_mask")
            self._position = layout.span("position")
            self._length = config.trail_length

    def frames(
        self, observations: NDArray[np.float32], previous_moves: NDArray[np.intp] | None = None
    ) -> NDArray[np.float32]:
        """The frames of ``observations`` (rows x layout width); ``previous_moves`` the move
        code (0..4) each row chose last turn, -1 for none (needed with ``previous_move``)."""
        rows = observations.shape[0]
        parts: list[NDArray[np.float32]] = [observations[:, self.columns]]
        for addition in self.additions:
            if addition == "previous_move":
                if previous_moves is None:
                    raise InputsError("the previous_move input needs each row's previous move")
                one_hot = np.zeros((rows, len(MOVES)), np.float32)
                chosen = np.flatnonzero(previous_moves >= 0)
                one_hot[chosen, previous_moves[chosen]] = 1.0
                parts.append(one_hot)
            else:
                parts.append(self._trail_neighbours(observations))
        return np.concatenate(parts, axis=1).astype(np.float32, copy=False)

    def _trail_neighbours(self, observations: NDArray[np.float32]) -> NDArray[np.float32]:
        scale, length = self._scale, self._length
        position = np.rint(observations[:, self._position] * scale).astype(np.int64)
        trail = np.rint(observations[:, self._trail].reshape(-1, length, 2) * scale)
        real = observations[:, self._mask] > 0.5
        places = position[:, None, :] + np.array(_PLACES)[None]  # rows, 5, 2
        hits = (trail.astype(np.int64)[:, None] == places[:, :, None]).all(axis=-1)
        hits &= real[:, None, :]  # rows, 5, K
        visits = np.minimum(hits.sum(axis=-1), VISIT_CAP) / VISIT_CAP
        last = np.where(hits, np.arange(length), -1).max(axis=-1)
        ago = np.where(last >= 0, (length - last) / length, 1.0)
        return np.concatenate([visits, ago], axis=1).astype(np.float32)
