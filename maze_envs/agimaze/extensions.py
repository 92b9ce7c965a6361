"""Extension actions (our design): the flashlight's ``look_<dir>`` and the grenades' ``bomb_<dir>``.

Both cost a step and never move the player, so no river current acts on them.

* ``look_<dir>`` needs the flashlight: the beam reports every tile in a straight line that way
  until a wall, the monolith or the exit gap stops it.
* ``bomb_<dir>`` needs a grenade and always uses one up: it destroys an adjacent interior wall
  (both sides of the edge open for good); the monolith withstands it.
"""

from __future__ import annotations

from typing import Any

from maze_envs.agimaze import narration as say
from maze_envs.agimaze.compiled import CompiledLabyrinth, PlayerState, Transition, make_state
from maze_envs.agimaze.formal import BLOCKED, SUCCESS, formal


def tile_kind(c: CompiledLabyrinth, s: PlayerState, cell: tuple[int, int]) -> str:
    """What lies on ``cell`` now, as an ``observe`` kind (taken items read as empty)."""
    kind = c.content.get(cell)
    if kind is None:
        return "empty"
    taken = (
        (kind == "key" and s.key)
        or (kind == "treasure" and s.treasure)
        or (kind == "exit_key" and s.exit_key)
        or (kind == "boat" and s.boat)
        or (kind == "flashlight" and s.flashlight)
        or (kind == "grenade_pack" and bool(s.packs_taken & c.packs[cell][0]))
    )
    return "empty" if taken else kind


def open_towards(c: CompiledLabyrinth, s: PlayerState, cell: tuple[int, int], i: int) -> Any:
    """The neighbour of ``cell`` in direction ``i``, or "wall" / "monolith" / "exit"."""
    target = c.steps[cell][i]
    if target == "wall" and s.blown and c.walls[(cell, i)][0] in s.blown:
        return c.walls[(cell, i)][1]
    return target


def look(c: CompiledLabyrinth, s: PlayerState, d: str, i: int) -> Transition:
    """Shine the flashlight in direction ``d``."""
    if not s.flashlight:
        events = ["no_flashlight"]
        return Transition(
            s, say.NO_FLASHLIGHT[d], formal(BLOCKED, "empty", events, s, {}), events, False
        )
    kinds: list[str] = []
    phrases: list[str] = []
    cell = s.pos
    while True:
        target = open_towards(c, s, cell, i)
        if type(target) is str:
            stop = target
            break
        cell = target
        kind = tile_kind(c, s, cell)
        kinds.append(kind)
        phrases.append(say.look_tile(kind, c.arrow_flow.get(cell)))
    events = ["look"]
    details = {"look": {"direction": d, "tiles": kinds, "stop": stop}}
    text = say.look(d, phrases, stop)
    return Transition(s, text, formal(SUCCESS, stop, events, s, details), events, False)


def bomb(c: CompiledLabyrinth, s: PlayerState, d: str, i: int) -> Transition:
    """Throw a grenade in direction ``d``."""
    if s.grenades <= 0:
        events = ["no_grenades"]
        return Transition(
            s, say.NO_GRENADES[d], formal(BLOCKED, "empty", events, s, {}), events, False
        )
    target = open_towards(c, s, s.pos, i)
    blown = s.blown
    if target == "wall":
        blown = s.blown | {c.walls[(s.pos, i)][0]}
        status, what, text, events = SUCCESS, "wall", say.BOMB_WALL[d], ["bomb_success"]
    elif target == "monolith":
        status, what, text, events = BLOCKED, "monolith", say.BOMB_MONOLITH[d], ["bomb_failed"]
    else:  # an open edge or the exit gap: nothing to destroy
        what = "exit" if target == "exit" else "empty"
        status, text, events = BLOCKED, say.BOMB_NOTHING[d], ["bomb_failed"]
    new = make_state(
        s.pos,
        s.key,
        s.treasure,
        s.exit_key,
        s.boat,
        s.flashlight,
        s.grenades - 1,
        s.packs_taken,
        blown,
        False,
    )
    details = {"bomb": {"direction": d, "target": what, "destroyed": what == "wall"}}
    return Transition(new, text, formal(status, what, events, new, details), events, False)
