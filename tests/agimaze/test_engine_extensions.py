"""Extension mechanics (our design): boat, grenades (bomb_*), flashlight (look_*).

Each mechanic must be *necessary* somewhere: the labyrinths below can be won with the item and
cannot be won without it, which an exhaustive search over player states proves.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from maze_envs.agimaze.engine import PlayerState, compile_labyrinth, initial_state, transition
from maze_envs.agimaze.formal import EVENT_NAMES, OBSERVE_VALUES, inventory
from maze_envs.agimaze.mapfmt import parse_map, render_map
from maze_envs.agimaze.types import Labyrinth
from tests.agimaze.test_mapfmt import random_labyrinth

# The only corridor to the exit (right of (0, 4)) is a river flowing back west: without the
# boat every step into it washes the player back to the mouth at (0, 2).
BOAT = [
    "+---+---+---+---+---+",
    "| S   B   m   <   <  ",
    "+   +---+---+---+---+",
    "| K   T |           |",
    "+---+---+---+---+---+",
]
# The key is sealed in (0, 2): only a grenade thrown through a wall reaches it.
GRENADES = [
    "+---+---+---+",
    "| S   G | K |",
    "+   +---+---+",
    "  T         |",
    "+---+---+---+",
]
FLASHLIGHT = [
    "+---+---+---+---+",
    "| S   F   K   T |",
    "+   +---+---+   +",
    "|   |     v   E |",
    "+---+---+   +---+",
    "|         m |   |",
    "+---+   +---+---+",
]


def lab(lines: list[str], **kwargs: object) -> Labyrinth:
    return parse_map("\n".join(lines), **kwargs).labyrinth  # type: ignore[arg-type]


def winnable(labyrinth: Labyrinth, without: str | None = None) -> bool:
    """Exhaustive search over player states; ``without`` removes that item from the board."""
    if without is not None:
        labyrinth = labyrinth.model_copy(
            update={without: [] if without == "grenade_packs" else None}
        )
    compiled = compile_labyrinth(labyrinth)
    start = initial_state(compiled)
    seen, queue = {start}, deque([start])
    while queue:
        state = queue.popleft()
        for action in compiled.actions:
            result = transition(compiled, state, action)
            if result.won:
                return True
            if result.state not in seen:
                seen.add(result.state)
                queue.append(result.state)
    return False


def test_boat_is_needed_for_an_exit_behind_a_river() -> None:
    labyrinth = lab(BOAT)
    assert winnable(labyrinth)
    assert not winnable(labyrinth, without="boat")
    # Without the boat the current pushes back: (0, 2) -> right -> washed back to (0, 2).
    assert transition(labyrinth, PlayerState((0, 2)), "right").state.pos == (0, 2)
    with_boat = PlayerState((0, 2), boat=True)
    result = transition(labyrinth, with_boat, "right")
    assert result.state.pos == (0, 3)
    assert result.text == (
        "You went right and rowed your boat onto a river. The boat holds against the current."
    )
    assert result.formal["details"]["river"]["carried"] is False
    bump = transition(labyrinth, PlayerState((0, 3), boat=True), "up")
    assert bump.state.pos == (0, 3)  # no current acts on the boat after a bump either


def test_boat_pick_up_narration_and_inventory() -> None:
    labyrinth = lab(BOAT)
    result = transition(labyrinth, initial_state(labyrinth), "right")
    assert result.text == "You went right and stepped on a tile with a boat. You take the boat."
    assert result.formal["inventory"] == {"boat": True}
    assert result.formal["observe"] == "boat"


def test_grenade_blows_a_wall_and_is_needed_for_a_sealed_key() -> None:
    labyrinth = lab(GRENADES, grenade_count=2)
    assert labyrinth.actions[4:] == ["bomb_up", "bomb_down", "bomb_left", "bomb_right"]
    assert winnable(labyrinth)
    assert not winnable(labyrinth, without="grenade_packs")
    state = initial_state(labyrinth)
    picked = transition(labyrinth, state, "right")
    assert picked.text == (
        "You went right and stepped on a tile with a grenade pack. You pick up 2 grenades."
    )
    assert picked.formal["inventory"] == {"grenades": 2}
    blocked = transition(labyrinth, picked.state, "right")
    assert blocked.text == "You tried to go right, but a wall blocks the way."
    blast = transition(labyrinth, picked.state, "bomb_right")
    assert blast.text == "You threw a grenade right and blew up the wall."
    assert blast.formal["status"] == "success" and blast.formal["inventory"] == {"grenades": 1}
    assert blast.state.pos == (0, 1)
    through = transition(labyrinth, blast.state, "right")
    assert through.text == "You went right and stepped on a tile with a key. You pick up the key."
    # The blown wall is open from the other side too, and drawn open on the map.
    assert transition(labyrinth, through.state, "left").state.pos == (0, 1)
    assert render_map(labyrinth, blast.state).split("\n")[1] == "|     S   K |"


def test_grenade_failures_use_a_grenade_except_when_there_is_none() -> None:
    labyrinth = lab(GRENADES, grenade_count=2)
    none = transition(labyrinth, initial_state(labyrinth), "bomb_up")
    assert none.text == "You tried to throw a grenade up, but you have no grenades."
    assert none.formal["status"] == "blocked" and none.state == initial_state(labyrinth)
    armed = PlayerState((0, 1), grenades=2, packs_taken=1)
    monolith = transition(labyrinth, armed, "bomb_up")
    assert monolith.text == "You threw a grenade up, but the monolith withstands the blast."
    assert monolith.state.grenades == 1 and not monolith.state.blown
    nothing = transition(labyrinth, armed, "bomb_left")
    assert nothing.text == "You threw a grenade left, but there was no wall to destroy."
    assert nothing.state.grenades == 1
    emptied = transition(labyrinth, monolith.state, "bomb_left").state
    assert emptied.grenades == 0
    assert transition(labyrinth, emptied, "bomb_down").formal["inventory"] == {"grenades": 0}


def test_flashlight_looks_down_a_straight_line() -> None:
    labyrinth = lab(FLASHLIGHT)
    assert labyrinth.actions[4:] == ["look_up", "look_down", "look_left", "look_right"]
    state = initial_state(labyrinth)
    dark = transition(labyrinth, state, "look_right")
    assert dark.text == "You tried to look right, but you have no flashlight."
    assert dark.state == state and dark.formal["status"] == "blocked"
    lit = transition(labyrinth, state, "right").state
    assert lit.flashlight
    right = transition(labyrinth, lit, "look_right")
    assert (
        right.text == "You shine your flashlight right and see a key, a chest, then the monolith."
    )
    assert right.state == lit  # looking does not move the player
    assert right.formal["details"]["look"] == {
        "direction": "right",
        "tiles": ["key", "treasure"],
        "stop": "monolith",
    }
    assert transition(labyrinth, lit, "look_down").text == (
        "You shine your flashlight down and see a wall."
    )
    assert transition(labyrinth, lit, "look_left").text == (
        "You shine your flashlight left and see an empty tile, then the monolith."
    )
    from_chest = PlayerState((0, 3), flashlight=True, key=True)
    assert transition(labyrinth, from_chest, "look_down").text == (
        "You shine your flashlight down and see an exit key, then a wall."
    )
    river = PlayerState((2, 2), flashlight=True)
    assert transition(labyrinth, river, "look_up").text == (
        "You shine your flashlight up and see a river flowing down, then a wall."
    )
    mouth_view = PlayerState((2, 0), flashlight=True)
    assert transition(labyrinth, mouth_view, "look_right").text == (
        "You shine your flashlight right and see an empty tile, a river mouth, then a wall."
    )
    # Collected items read as empty tiles in the beam.
    key_taken = PlayerState((0, 1), flashlight=True, key=True)
    assert transition(labyrinth, key_taken, "look_right").formal["details"]["look"]["tiles"] == [
        "empty",
        "treasure",
    ]


@pytest.mark.parametrize("seed", range(12))
def test_random_play_keeps_every_invariant(seed: int) -> None:
    """Random actions on generated labyrinths with every kind of content (rivers, pits, items)."""
    labyrinth = random_labyrinth(seed)
    compiled = compile_labyrinth(labyrinth)
    rng = np.random.default_rng(seed)
    actions = [compiled.actions[int(i)] for i in rng.integers(len(compiled.actions), size=400)]
    state, trajectory = initial_state(compiled), []
    for action in actions:
        if state.won:
            break
        result = transition(compiled, state, action)
        before, state = state, result.state
        trajectory.append(state)
        formal = result.formal
        assert formal["status"] in ("success", "blocked")
        assert formal["observe"] in OBSERVE_VALUES
        assert set(formal["events"]) <= set(EVENT_NAMES) and formal["events"] is result.events
        assert formal["inventory"] == inventory(state)
        assert result.text.startswith("You ") and result.text.endswith(".")
        assert state.grenades >= 0
        if result.won:
            assert state.treasure and (labyrinth.exit_key is None or state.exit_key)
            assert not labyrinth.in_bounds(state.pos)
        else:
            assert labyrinth.in_bounds(state.pos)
            text = render_map(labyrinth, state)
            assert parse_map(text, under_player=_glyph_at(labyrinth, state.pos)).player == state.pos
        if not action.startswith(("up", "down", "left", "right")):
            assert state.pos == before.pos  # look and bomb never move the player
    # Determinism: the same actions from the same start give the same states.
    again, replayed = initial_state(compiled), []
    for action in actions[: len(trajectory)]:
        again = transition(labyrinth, again, action).state
        replayed.append(again)
    assert replayed == trajectory


def _glyph_at(labyrinth: Labyrinth, pos: tuple[int, int]) -> str:
    full = render_map(labyrinth, PlayerState((-1, -1)))  # nobody drawn: every glyph visible
    return full.split("\n")[2 * pos[0] + 1][4 * pos[1] + 2]
