"""Rules of the AGI Maze engine on small hand-drawn labyrinths (core rules of SPEC sections 2-3)."""

from __future__ import annotations

import pytest

from maze_envs.agimaze import narration
from maze_envs.agimaze.engine import (
    AgiMazeEngine,
    GameOverError,
    InvalidActionError,
    PlayerState,
    compile_labyrinth,
    initial_state,
    transition,
)
from maze_envs.agimaze.mapfmt import parse_map
from maze_envs.agimaze.types import Labyrinth

# 2x3: key behind the start, chest below, exit gap above (0, 2).
KEYS = [
    "+---+---+   +",
    "| S   K |   |",
    "+   +---+   +",
    "|     T     |",
    "+---+---+---+",
]
# 1x6 river flowing left into the mouth at (0, 0); exit gap above (0, 2).
RIVER = [
    "+---+---+   +---+---+---+",
    "| m   <   <   <   <   S |",
    "+---+---+---+---+---+---+",
]


def lab(lines: list[str], **kwargs: object) -> Labyrinth:
    return parse_map("\n".join(lines), **kwargs).labyrinth  # type: ignore[arg-type]


def play(labyrinth: Labyrinth, actions: list[str]) -> tuple[PlayerState, list[str]]:
    state, texts = initial_state(labyrinth), []
    compiled = compile_labyrinth(labyrinth)
    for action in actions:
        result = transition(compiled, state, action)
        state = result.state
        texts.append(result.text)
    return state, texts


def test_walls_monolith_chest_and_refused_exit_narration() -> None:
    actions = ["up", "down", "right", "up", "right", "up", "up", "left", "left", "down", "up"]
    state, texts = play(lab(KEYS), actions)
    assert texts == [
        "You tried to go up, but a monolith blocks the way.",
        "You went down and stepped on an empty tile.",
        "You went right and stepped on a tile with a chest. But you don't have a key.",
        "You tried to go up, but a wall blocks the way.",
        "You went right and stepped on an empty tile.",
        "You went up and stepped on an empty tile.",
        "You went up and found the exit, but you stay to find the treasure.",
        "You tried to go left, but a wall blocks the way.",
        "You tried to go left, but a wall blocks the way.",
        "You went down and stepped on an empty tile.",
        "You went up and stepped on an empty tile.",
    ]
    assert state == PlayerState((0, 2))


def test_full_episode_win_and_game_over() -> None:
    engine = AgiMazeEngine(lab(KEYS))
    start = engine.reset()
    assert start.text == "Game has started."
    assert start.formal == {
        "status": "success",
        "observe": "empty",
        "events": [],
        "inventory": {},
        "details": {},
    }
    route = ["right", "right", "left", "down", "right", "right", "up"]
    results = [engine.step(a) for a in route]
    assert (
        results[0].text == "You went right and stepped on a tile with a key. You pick up the key."
    )
    assert results[0].inventory == {"key": True}
    assert results[1].formal["status"] == "blocked" and results[1].steps == 2
    assert results[4].text == narration.CHEST_OPENED["right"]
    assert results[4].formal["events"] == ["moved", "opened_treasure"]
    assert results[4].inventory == {"key": True, "treasure": True}
    assert engine.state.pos == (0, 2) and not engine.done
    final = engine.step("up")
    assert final.text == "You leave the labyrinth with the treasure."
    assert final.done and final.steps == 8
    assert engine.state.pos == (-1, 2)  # one cell outside the gap, as the exit recordings show
    assert final.formal["events"] == ["exited"]
    with pytest.raises(GameOverError, match="reset"):
        engine.step("down")
    engine.reset()
    assert engine.state == initial_state(engine.labyrinth) and engine.steps == 0


def test_exit_refused_without_treasure_even_with_key() -> None:
    labyrinth = lab(KEYS)
    state = PlayerState((0, 2), key=True)
    result = transition(labyrinth, state, "up")
    assert result.text == "You went up and found the exit, but you stay to find the treasure."
    assert result.state == state and not result.won
    assert result.formal["status"] == "blocked" and result.formal["events"] == ["exit_blocked"]


def test_taken_items_read_as_empty_tiles() -> None:
    actions = ["right", "left", "right", "left", "down", "right", "left", "right"]
    state, texts = play(lab(KEYS), actions)
    assert texts[2] == "You went right and stepped on an empty tile."
    assert texts[5] == narration.CHEST_OPENED["right"]
    assert texts[7] == "You went right and stepped on an empty tile."
    assert state.treasure and state.pos == (1, 1)


def test_exit_key_is_required_when_the_labyrinth_has_one() -> None:
    lines = [
        "+---+---+   +",
        "| S   K   E |",
        "+   +---+---+",
        "|     T     |",
        "+---+---+---+",
    ]
    labyrinth = lab(lines)
    route = ["right", "left", "down", "right", "left", "up", "right", "right", "up"]
    state, texts = play(labyrinth, route)
    assert texts[7] == (
        "You went right and stepped on a tile with an exit key. You pick up the exit key."
    )
    assert texts[8] == "You leave the labyrinth with the treasure."
    assert state.won
    no_exit_key = PlayerState((0, 2), key=True, treasure=True)
    refused = transition(labyrinth, no_exit_key, "up")
    assert (
        refused.text == "You went up and found the exit, but it is locked. You need the exit key."
    )
    assert refused.formal["events"] == ["exit_locked"] and refused.state == no_exit_key


def test_river_rides_two_cells_then_one_to_the_mouth() -> None:
    labyrinth = lab(RIVER)
    result = transition(labyrinth, initial_state(labyrinth), "left")
    assert result.state.pos == (0, 2)  # landed on (0, 4), carried to (0, 2): still mid-river
    assert (
        result.text == "You went left and fell into a river. The current carries you left 2 tiles."
    )
    assert result.formal["details"]["river"] == {"carried": True, "cells": 2, "to_mouth": False}
    assert result.events == result.formal["events"] == ["moved", "river_entered", "river_carried"]
    bump = transition(labyrinth, PlayerState((0, 1)), "down")
    assert bump.state.pos == (0, 0)  # a bump mid-river lets the current act
    assert bump.text == (
        "You tried to go down, but a monolith blocks the way. "
        "The current carries you left 1 tile to its mouth."
    )
    # the events say so too: the bump, then the carry (a dropped river_carried is a bug)
    assert bump.events == bump.formal["events"] == ["bumped_monolith", "river_carried"]
    assert bump.formal == {
        "status": "blocked",
        "observe": "monolith",
        "events": ["bumped_monolith", "river_carried"],
        "inventory": {},
        "details": {"river": {"carried": True, "cells": 1, "to_mouth": True}},
    }
    far = transition(labyrinth, PlayerState((0, 3)), "down")  # two cells to go: carried 2
    assert far.state.pos == (0, 1) and far.events == ["bumped_monolith", "river_carried"]
    assert far.formal["details"]["river"] == {"carried": True, "cells": 2, "to_mouth": False}
    back = transition(labyrinth, PlayerState((0, 0)), "right")
    assert back.state.pos == (0, 0)  # stepping into the last arrow washes you back to the mouth
    upstream = transition(labyrinth, PlayerState((0, 3)), "right")
    assert upstream.state.pos == (0, 2)  # moving into an arrow, even upstream, is a fresh landing


def test_refused_exit_mid_river_does_not_flow() -> None:
    labyrinth = lab(RIVER)
    result = transition(labyrinth, PlayerState((0, 2)), "up")
    assert result.state.pos == (0, 2)
    assert result.text == narration.EXIT_NO_TREASURE["up"]


def test_river_ride_turning_a_corner() -> None:
    lines = [
        "+---+---+---+",
        "| S   v   K |",
        "+---+   +---+",
        "| T   >   m |",
        "+   +---+---+",
    ]
    labyrinth = lab(lines)
    result = transition(labyrinth, initial_state(labyrinth), "right")
    assert result.state.pos == (1, 2)
    assert result.text == (
        "You went right and fell into a river. "
        "The current carries you down 1 tile, then right 1 tile to its mouth."
    )
    last_arrow = transition(labyrinth, PlayerState((1, 0)), "right")  # into '>' -> the mouth
    assert last_arrow.state.pos == (1, 2)


def test_pits_teleport_round_their_cycle() -> None:
    lines = [
        "+---+---+---+---+   +",
        "| S   1   2   1   2 |",
        "+---+---+---+---+---+",
    ]
    labyrinth = lab(lines)
    assert [c.cells for c in labyrinth.pits] == [[(0, 1), (0, 3)], [(0, 2), (0, 4)]]
    result = transition(labyrinth, initial_state(labyrinth), "right")
    assert result.state.pos == (0, 3)
    assert result.text == "You went right and fell into a pit. You climb out of another pit."
    assert result.formal["events"] == ["moved", "pit_teleport"]
    wrapped = transition(labyrinth, PlayerState((0, 3)), "right")  # (0, 4) -> wraps to (0, 2)
    assert wrapped.state.pos == (0, 2)
    bump = transition(labyrinth, PlayerState((0, 1)), "up")
    assert bump.state.pos == (0, 1)


def test_invalid_action_names_the_allowed_ones() -> None:
    labyrinth = lab(KEYS)
    with pytest.raises(InvalidActionError) as info:
        transition(labyrinth, initial_state(labyrinth), "bomb_up")
    assert info.value.allowed == ["up", "down", "left", "right"]
    assert "bomb_up" in str(info.value) and "up, down, left, right" in str(info.value)
    with pytest.raises(InvalidActionError):
        transition(labyrinth, initial_state(labyrinth), 3)  # type: ignore[arg-type]


def test_transition_is_pure_and_results_are_fresh() -> None:
    labyrinth = lab(KEYS)
    state = initial_state(labyrinth)
    first = transition(labyrinth, PlayerState((1, 0)), "right")
    first.formal["events"].append("tampered")
    first.formal["details"]["landed"]["kind"] = "tampered"
    again = transition(labyrinth, PlayerState((1, 0)), "right")
    assert again.formal["events"] == ["moved", "chest_locked"]
    assert again.formal["details"] == {"landed": {"kind": "treasure"}}
    assert state == initial_state(labyrinth) and hash(state) == hash(initial_state(labyrinth))
    empty = transition(labyrinth, PlayerState((1, 1)), "right")
    empty.formal["details"]["landed"]["kind"] = "tampered"
    assert transition(labyrinth, PlayerState((1, 1)), "right").formal["details"] == {
        "landed": {"kind": "empty"}
    }
