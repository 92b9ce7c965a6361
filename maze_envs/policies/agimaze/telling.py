"""Re-localising after a pit: the move that best tells apart the places a lost player may be.

After a pit whose far end it does not know, the explorer maps a *lost frame* relative to the pit
it climbed out of and keeps the places of the map that frame may lie at (``candidates``: where
its origin may be). Its map is still valid, so it can predict what a move would show at each
place (:func:`~maze_envs.policies.agimaze.world.expect`) and pick the move whose outcome splits
them best (:func:`telling_move`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence

import numpy as np

from maze_envs.agimaze.types import DIRECTIONS
from maze_envs.policies.agimaze.world import ITEM_KINDS, Cell, Frame, expect, neighbour


def unplaced_pit(main: Frame, cell: Cell) -> bool:
    """Whether the map knows ``cell`` as a pit whose far end it does not know."""
    return main.content.get(cell) == "pit" and cell not in main.pit_dest


def telling_move(
    lost: Frame,
    candidates: Sequence[Cell],
    pos: Cell,
    main: Frame,
    held: Mapping[str, object],
    boat: bool,
    rng: np.random.Generator,
) -> str | None:
    """While lost: the first move towards telling apart the places it may be, by the map.

    At a cell of the lost frame, a move whose outcome the lost frame does not know yet is
    predicted at every place the player may be; places that predict the same stay together, one
    whose map cannot predict survives any outcome with probability 1/2. A move is telling when
    fewer places are expected to remain than now, and never one that drops some place into a pit
    of unknown destination (that would lose them). The nearest cell of the lost frame with a
    telling move (walking only through what it saw since, no pits, no rivers) wins; the best
    move there. ``pos`` is the player's cell in the lost frame.
    """
    if len(candidates) < 2 or not main.bounded:
        return None
    first: dict[Cell, str | None] = {pos: None}
    queue = deque([pos])
    while queue:
        cell = queue.popleft()
        telling = _telling_at(lost, candidates, cell, main, held, boat, rng)
        if telling is not None:
            return first[cell] or telling
        for direction in DIRECTIONS:
            there = neighbour(cell, direction)
            if there in first or lost.edges.get((cell, direction)) != "open":
                continue
            if lost.content.get(there) not in ("empty", *ITEM_KINDS):
                continue  # a pit or a river would move the player on its own
            first[there] = first[cell] or direction
            queue.append(there)
    return None


def _telling_at(
    lost: Frame,
    candidates: Sequence[Cell],
    cell: Cell,
    main: Frame,
    held: Mapping[str, object],
    boat: bool,
    rng: np.random.Generator,
) -> str | None:
    """The move from ``cell`` of the lost frame that best tells the places apart, if any."""
    places = [(c[0] + cell[0], c[1] + cell[1]) for c in candidates]
    places = [p for p in places if main.inside(p)]
    total = len(places)
    best: tuple[float, str] | None = None
    for i in rng.permutation(len(DIRECTIONS)):
        direction = DIRECTIONS[int(i)]
        if lost.edge(cell, direction) is not None:
            continue  # seen since it got lost: every place left agrees on it already
        if any(unplaced_pit(main, neighbour(p, direction)) for p in places):
            continue  # falling in would lose the places rather than tell them apart
        classes = Counter(expect(main, p, direction, boat, held) for p in places)
        unknown = classes.pop(None, 0)
        if len(classes) + (1 if unknown else 0) < 2:
            continue
        known = sum(classes.values())
        expected = sum(n / total * (n + unknown / 2) for n in classes.values())
        expected += unknown / total * (unknown + known / 2)
        if expected < total and (best is None or expected < best[0]):
            best = (expected, direction)
    return None if best is None else best[1]


__all__ = ["telling_move", "unplaced_pit"]
