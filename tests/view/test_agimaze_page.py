"""The AGI Maze viewer page built from a journal: positions, narration, budget, labyrinth sets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.packs import resolve_pack_path
from maze_envs.agimaze.planner import solve
from maze_envs.agimaze.types import ExitGap, Labyrinth
from maze_envs.journal import Journal
from maze_envs.view import agimaze_game_data, game_html
from maze_envs.view.page import read_payload
from tests.journal.tamper import edit_turn
from tests.view.journals import record_agimaze


def corridor() -> Labyrinth:
    """``S K T`` in a row, the exit on the right of T: right, right, right wins."""
    return Labyrinth(
        rows=1,
        cols=3,
        open_edges=[[2, 10, 8]],
        exit=ExitGap(cell=(0, 2), side="right"),
        start=(0, 0),
        key=(0, 1),
        chest=(0, 2),
        max_steps=4,
    )


def test_positions_narration_and_budget_follow_the_game(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    game = record_agimaze(path, {"labyrinth": corridor()}, ["left", "right", "right", "right"])
    with Journal.open_readonly(path) as journal:
        data = agimaze_game_data(journal, game)
        stored = list(journal.turns(game))
    assert data["verified"] and data["n"] == 5
    steps = data["steps"]
    assert [s["pos"] for s in steps] == [[0, 0], [0, 0], [0, 1], [0, 2], [0, 3]]
    assert [s["action"] for s in steps] == [None, "left", "right", "right", "right"]
    assert [s["text"] for s in steps] == [t.observations["player"]["text"] for t in stored]
    assert steps[1]["text"] == "You tried to go left, but a monolith blocks the way."
    assert [s["steps"] for s in steps] == [0, 1, 2, 3, 4]
    assert {s["budget"] for s in steps} == {20} and {s["max_steps"] for s in steps} == {4}
    assert [s["inventory"] for s in steps][2:4] == [{"key": True}, {"key": True, "treasure": True}]
    assert steps[2]["held"] == [1, 0, 0, 0, 0, 0] and steps[4]["solved"] is True
    assert steps[1]["formal"]["events"] == ["bumped_monolith"]
    assert [s["lab"] for s in steps] == [0] * 5
    (lab,) = data["labyrinths"]
    assert lab["open_map"] is False and (lab["rows"], lab["cols"]) == (1, 3)
    assert lab["exit"] == {"cell": [0, 2], "side": "right"}


def test_a_pack_labyrinth_replays_exactly(tmp_path: Path) -> None:
    name = "TRAINING/S2-pits/STAGE-03/0004.json"
    labyrinth = resolve_pack_path(name)[1].labyrinth
    rng = np.random.default_rng(7)
    actions = [str(a) for a in rng.choice(labyrinth.actions, 120)]
    path = tmp_path / "games.sqlite"
    game = record_agimaze(path, {"path": name}, actions)
    with Journal.open_readonly(path) as journal:
        data = agimaze_game_data(journal, game)
    compiled = compile_labyrinth(labyrinth)
    state = initial_state(compiled)
    expected = [list(state.pos)]
    for action in actions[: data["n"] - 1]:
        state = transition(compiled, state, action).state
        expected.append(list(state.pos))
    assert [s["pos"] for s in data["steps"]] == expected
    assert data["labyrinths"][0]["name"] == name


def test_labyrinth_sets_show_waiting_starts_and_finishes(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    config = {"labyrinths": [corridor(), corridor()]}
    actions = ["up", "start", "right", "right", "right", "right", "start", "right"]
    game = record_agimaze(path, config, actions, labyrinth_set=True)
    with Journal.open_readonly(path) as journal:
        data = agimaze_game_data(journal, game)
    steps = data["steps"]
    assert data["is_set"] and len(data["labyrinths"]) == 2
    assert [s["lab"] for s in steps] == [-1, -1, 0, 0, 0, 0, -1, 1, 1]
    assert [s["pos"] for s in steps] == [
        None,
        None,
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
        None,
        [0, 0],
        [0, 1],
    ]
    assert steps[0]["waiting"] and steps[1]["message"].startswith('The action {"id":"up"}')
    assert steps[5]["message"].startswith("You have solved the labyrinth.")
    assert steps[2]["text"] == "Game has started."


def test_an_edited_row_stops_the_page(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    game = record_agimaze(path, {"labyrinth": corridor()}, ["left", "right", "right"])

    def forged(text: str) -> str:  # what turn 2 stores of the observation, a text changed
        observations = json.loads(text)
        observations.setdefault("player", {})["text"] = "You see a secret door to the left."
        return json.dumps(observations)

    edit_turn(path, game, 2, "observations", forged)
    with Journal.open_readonly(path) as journal:
        data = agimaze_game_data(journal, game)
        page = game_html(journal, game)
    assert not data["verified"] and data["n"] == 2
    assert read_payload(page)["kind"] == "agimaze"


def test_walls_blown_by_grenades_are_drawn_open(tmp_path: Path) -> None:
    name = "EXTENDED/grenades/STAGE-01-4x4/0000.json"  # cannot be won without a grenade
    plan = solve(resolve_pack_path(name)[1].labyrinth)
    assert plan is not None
    path = tmp_path / "games.sqlite"
    game = record_agimaze(path, {"path": name}, plan)
    with Journal.open_readonly(path) as journal:
        steps = agimaze_game_data(journal, game)["steps"]
    blasts = [k for k, s in enumerate(steps) if "bomb_success" in s["formal"]["events"]]
    assert blasts and steps[-1]["solved"]
    first = blasts[0]
    assert steps[first - 1]["blown"] == [] and len(steps[first]["blown"]) == 1
    r1, c1, r2, c2 = steps[first]["blown"][0]
    assert abs(r1 - r2) + abs(c1 - c2) == 1  # two neighbouring cells
    assert all(len(s["blown"]) >= 1 for s in steps[first:])  # it stays open


def river_trap() -> Labyrinth:
    """``S K T . > m``, the exit left of S: riding the river in leaves no way out."""
    from maze_envs.agimaze.types import River

    return Labyrinth(
        rows=1,
        cols=6,
        open_edges=[[2, 10, 10, 10, 10, 8]],
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        key=(0, 1),
        chest=(0, 2),
        rivers=[River(cells=[(0, 4)], mouth=(0, 5))],
        max_steps=10,
    )


def test_the_step_that_entered_a_dead_state_is_marked(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    slow = ["right", "left", "right", "right", "left"]  # slow, but it can still win
    lost = ["right", "right", "right", "right", "left", "left"]  # rides in at step 4
    record_agimaze(path, {"labyrinth": river_trap()}, slow)
    game = record_agimaze(path, {"labyrinth": river_trap()}, lost)
    with Journal.open_readonly(path) as journal:
        slow_data = agimaze_game_data(journal, 1)
        data = agimaze_game_data(journal, game)
    assert slow_data["lost"] == [] and not any(s["dead"] for s in slow_data["steps"])
    assert [s["dead"] for s in data["steps"]] == [False] * 4 + [True] * 3
    assert data["lost"] == [{"lab": 0, "name": "<labyrinth>", "turn": 4, "step": 4}]
    assert any("lost at step 4" in part for part in data["summary"])
    with Journal.open_readonly(path) as journal:
        html = game_html(journal, game)
    assert read_payload(html)["lost"] == data["lost"]
    assert "lost here" in html  # the page's script marks that step in the narration log
