"""The AGI Maze rules: a pure, fast transition function and a small stateful engine.

Rules (SPEC sections 2-3; docs/agimaze-rules.md marks what is verified and what is our design):

* Every action costs one step. A move through a closed interior edge is stopped by a *wall*,
  through the closed frame by the *monolith*; the player stays.
* Moving into a cell picks up what lies there (key, exit key, boat, flashlight, grenade pack);
  a chest opens only with the key, and then the treasure is taken.
* The frame's single gap is the exit: with the treasure (and the exit key, when the labyrinth
  has one) the player leaves and wins; otherwise the player stays.
* Landing on a river arrow carries the player up to two cells downstream, stopping at the mouth;
  a bump while standing on an arrow also lets the current carry the player, a refused exit does
  not. Holding the boat, no current applies.
* Entering a pit teleports the player to the next pit of its cycle.

Example:
    >>> from maze_envs.agimaze.types import ExitGap, Labyrinth
    >>> lab = Labyrinth(rows=1, cols=3, open_edges=[[2, 10, 8]],
    ...                 exit=ExitGap(cell=(0, 2), side="right"), start=(0, 0),
    ...                 key=(0, 1), chest=(0, 2))
    >>> engine = AgiMazeEngine(lab)
    >>> engine.reset().text
    'Game has started.'
    >>> [engine.step(a).formal["events"] for a in ("right", "right")]
    [['moved', 'picked_key'], ['moved', 'opened_treasure']]
    >>> result = engine.step("right")
    >>> result.text, result.done, engine.state.pos
    ('You leave the labyrinth with the treasure.', True, (0, 3))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from maze_envs.agimaze import narration as say
from maze_envs.agimaze.compiled import (
    LOOK,
    MOVE,
    CompiledLabyrinth,
    PlayerState,
    Transition,
    compile_labyrinth,
    make_state,
)
from maze_envs.agimaze.extensions import bomb, look
from maze_envs.agimaze.formal import BLOCKED, SUCCESS, formal, inventory, start_formal
from maze_envs.agimaze.types import Labyrinth

__all__ = [
    "AgiMazeEngine",
    "CompiledLabyrinth",
    "GameOverError",
    "InvalidActionError",
    "PlayerState",
    "Start",
    "StepResult",
    "Transition",
    "compile_labyrinth",
    "initial_state",
    "transition",
]


class InvalidActionError(ValueError):
    """An action that is not in the labyrinth's action list."""

    def __init__(self, action: object, allowed: list[str] | tuple[str, ...]) -> None:
        self.action = action
        self.allowed = list(allowed)
        super().__init__(f"invalid action {action!r}; allowed actions: {', '.join(self.allowed)}")


class GameOverError(ValueError):
    """An action after the player has already left the labyrinth."""


def initial_state(lab: Labyrinth | CompiledLabyrinth) -> PlayerState:
    """The player on the start cell, holding nothing."""
    labyrinth = lab.labyrinth if isinstance(lab, CompiledLabyrinth) else lab
    return PlayerState(labyrinth.start)


_CACHE: dict[int, tuple[Labyrinth, CompiledLabyrinth]] = {}
_CACHE_SIZE = 64


def _compiled(lab: Labyrinth | CompiledLabyrinth) -> CompiledLabyrinth:
    """``lab`` compiled (recently compiled labyrinths are reused)."""
    if type(lab) is CompiledLabyrinth:
        return lab
    assert isinstance(lab, Labyrinth)
    hit = _CACHE.get(id(lab))
    if hit is not None and hit[0] is lab:
        return hit[1]
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    result = compile_labyrinth(lab)
    _CACHE[id(lab)] = (lab, result)  # holding lab keeps its id from being reused
    return result


def transition(lab: Labyrinth | CompiledLabyrinth, state: PlayerState, action: str) -> Transition:
    """Apply ``action`` to ``state`` (pure: ``state`` is not changed).

    Raises:
        InvalidActionError: ``action`` is not in the labyrinth's action list.
        GameOverError: the player has already left the labyrinth.
    """
    c = lab if type(lab) is CompiledLabyrinth else _compiled(lab)
    op = c.ops.get(action) if type(action) is str else None
    if op is None:
        raise InvalidActionError(action, c.actions)
    if state.won:
        raise GameOverError("the player has already left the labyrinth; reset to play again")
    code, d, i = op
    if code == MOVE:
        return _move(c, state, d, i)
    if code == LOOK:
        return look(c, state, d, i)
    return bomb(c, state, d, i)


def _move(c: CompiledLabyrinth, s: PlayerState, d: str, i: int) -> Transition:
    pos = s.pos
    target = c.steps[pos][i]
    if type(target) is str:
        if target == "exit":
            return _exit(c, s, d)
        if target == "wall" and s.blown and c.walls[(pos, i)][0] in s.blown:
            target = c.walls[(pos, i)][1]
        else:
            return _bump(c, s, d, target)
    assert type(target) is tuple
    kind = c.content.get(target)
    if kind is None:
        return _done(
            SUCCESS,
            "empty",
            ["moved"],
            s.moved(target),
            say.EMPTY[d],
            {"landed": {"kind": "empty"}},
        )
    return _enter(c, s, d, target, kind)


def _done(
    status: str,
    observe: str,
    events: list[str],
    state: PlayerState,
    text: str,
    details: dict[str, Any],
    won: bool = False,
) -> Transition:
    return Transition(state, text, formal(status, observe, events, state, details), events, won)


def _bump(c: CompiledLabyrinth, s: PlayerState, d: str, what: str) -> Transition:
    text = say.WALL[d] if what == "wall" else say.MONOLITH[d]
    events = ["bumped_wall" if what == "wall" else "bumped_monolith"]
    ride = c.rides.get(s.pos)
    if ride is None or s.boat:
        return _done(BLOCKED, what, events, s, text, {})
    # Standing mid-river, the current still carries the player after the bump.
    events.append("river_carried")
    details = {"river": {"carried": True, "cells": ride.cells, "to_mouth": ride.to_mouth}}
    return _done(BLOCKED, what, events, s.moved(ride.dest), f"{text} {ride.sentence}", details)


def _exit(c: CompiledLabyrinth, s: PlayerState, d: str) -> Transition:
    # A refused exit never lets the current act, even mid-river (verified).
    if not s.treasure:
        return _done(BLOCKED, "exit", ["exit_blocked"], s, say.EXIT_NO_TREASURE[d], {})
    if c.needs_exit_key and not s.exit_key:
        return _done(BLOCKED, "exit", ["exit_locked"], s, say.EXIT_LOCKED[d], {})
    won = make_state(
        c.exit_outside,
        s.key,
        s.treasure,
        s.exit_key,
        s.boat,
        s.flashlight,
        s.grenades,
        s.packs_taken,
        s.blown,
        True,
    )
    return _done(SUCCESS, "exit", ["exited"], won, say.WIN, {}, won=True)


def _enter(
    c: CompiledLabyrinth, s: PlayerState, d: str, q: tuple[int, int], kind: str
) -> Transition:
    landed: dict[str, Any] = {"kind": kind}
    if kind == "river":
        ride = c.rides[q]
        if s.boat:
            details: dict[str, Any] = {
                "landed": landed,
                "river": {"carried": False, "cells": 0, "to_mouth": False},
            }
            events = ["moved", "river_entered"]
            return _done(SUCCESS, kind, events, s.moved(q), say.BOAT_ON_RIVER[d], details)
        details = {
            "landed": landed,
            "river": {"carried": True, "cells": ride.cells, "to_mouth": ride.to_mouth},
        }
        text = f"{say.RIVER[d]} {ride.sentence}"
        events = ["moved", "river_entered", "river_carried"]
        return _done(SUCCESS, kind, events, s.moved(ride.dest), text, details)
    if kind == "river_mouth":
        return _done(SUCCESS, kind, ["moved"], s.moved(q), say.MOUTH[d], {"landed": landed})
    if kind == "pit":
        details = {"landed": landed, "pit": {"teleported": True}}
        events = ["moved", "pit_teleport"]
        return _done(SUCCESS, kind, events, s.moved(c.pit_next[q]), say.PIT[d], details)
    if kind == "treasure":
        if s.treasure:
            return _empty_again(s, d, q)
        if not s.key:
            events = ["moved", "chest_locked"]
            return _done(SUCCESS, kind, events, s.moved(q), say.CHEST_LOCKED[d], {"landed": landed})
        events = ["moved", "opened_treasure"]
        new = _holding(s, q, kind)
        return _done(SUCCESS, kind, events, new, say.CHEST_OPENED[d], {"landed": landed})
    if kind == "grenade_pack":
        bit, count = c.packs[q]
        if s.packs_taken & bit:
            return _empty_again(s, d, q)
        new = make_state(
            q,
            s.key,
            s.treasure,
            s.exit_key,
            s.boat,
            s.flashlight,
            s.grenades + count,
            s.packs_taken | bit,
            s.blown,
            False,
        )
        landed["count"] = count
        events = ["moved", "picked_grenades"]
        return _done(SUCCESS, kind, events, new, say.grenade_pack(d, count), {"landed": landed})
    # a unique item: key, exit key, boat or flashlight (kind = the PlayerState flag)
    if getattr(s, kind):
        return _empty_again(s, d, q)
    events = ["moved", _PICKED[kind]]
    return _done(
        SUCCESS, kind, events, _holding(s, q, kind), _PICK_TEXT[kind][d], {"landed": landed}
    )


_PICKED = {
    "key": "picked_key",
    "exit_key": "picked_exit_key",
    "boat": "picked_boat",
    "flashlight": "picked_flashlight",
}
_PICK_TEXT = {
    "key": say.KEY,
    "exit_key": say.EXIT_KEY,
    "boat": say.BOAT,
    "flashlight": say.FLASHLIGHT,
}


def _holding(s: PlayerState, q: tuple[int, int], kind: str) -> PlayerState:
    """The player on ``q``, now also holding ``kind`` (an inventory flag)."""
    return make_state(
        q,
        s.key or kind == "key",
        s.treasure or kind == "treasure",
        s.exit_key or kind == "exit_key",
        s.boat or kind == "boat",
        s.flashlight or kind == "flashlight",
        s.grenades,
        s.packs_taken,
        s.blown,
        False,
    )


def _empty_again(s: PlayerState, d: str, q: tuple[int, int]) -> Transition:
    """A cell whose item was already taken reads as an empty tile (verified for K and T)."""
    return _done(
        SUCCESS, "empty", ["moved"], s.moved(q), say.EMPTY[d], {"landed": {"kind": "empty"}}
    )


@dataclass(slots=True)
class Start:
    """What a (re)start returns."""

    text: str
    formal: dict[str, Any]
    inventory: dict[str, bool | int]


@dataclass(slots=True)
class StepResult:
    """What a step returns; ``done`` is true only when the player left with the treasure."""

    text: str
    formal: dict[str, Any]
    events: list[str]
    inventory: dict[str, bool | int]
    done: bool
    steps: int


class AgiMazeEngine:
    """One game of a labyrinth: a stateful wrapper round :func:`transition`."""

    def __init__(self, lab: Labyrinth | CompiledLabyrinth) -> None:
        self.compiled = lab if isinstance(lab, CompiledLabyrinth) else compile_labyrinth(lab)
        self.labyrinth = self.compiled.labyrinth
        self._state = initial_state(self.compiled)
        self._steps = 0

    @property
    def actions(self) -> list[str]:
        return list(self.compiled.actions)

    @property
    def state(self) -> PlayerState:
        return self._state

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def done(self) -> bool:
        return self._state.won

    def reset(self) -> Start:
        """Put the player back on the start, empty-handed, with the step count at zero."""
        self._state = initial_state(self.compiled)
        self._steps = 0
        return Start(say.START, start_formal(self._state), inventory(self._state))

    def step(self, action: str) -> StepResult:
        """Apply one action (see :func:`transition` for the errors it raises)."""
        result = transition(self.compiled, self._state, action)
        self._state = result.state
        self._steps += 1
        return StepResult(
            result.text,
            result.formal,
            result.events,
            dict(result.formal["inventory"]),
            result.won,
            self._steps,
        )
