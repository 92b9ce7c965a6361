"""The exact planner: shortest plans on hand-made labyrinths, unsolvable cases, random rates."""

from __future__ import annotations

import numpy as np
import pytest

from maze_envs.agimaze.engine import compile_labyrinth, initial_state, transition
from maze_envs.agimaze.planner import (
    PlanningError,
    dead_states,
    live_mask,
    lost_at,
    optimal_length,
    random_agent_success,
    solve,
    state_graph,
    win_length,
)
from maze_envs.agimaze.types import ExitGap, GrenadePack, Labyrinth, PitCycle, River
from maze_envs.grid import EAST, NORTH, SOUTH, WEST

E, W, N, S = EAST, WEST, NORTH, SOUTH


def corridor(cells: int, closed: tuple[int, ...] = ()) -> list[list[int]]:
    """Open edges of a 1 x ``cells`` corridor; ``closed`` lists walls right of those columns."""
    row = []
    for c in range(cells):
        mask = 0
        if c > 0 and c - 1 not in closed:
            mask |= W
        if c < cells - 1 and c not in closed:
            mask |= E
        row.append(mask)
    return [row]


def play(lab: Labyrinth, plan: list[str]) -> tuple[bool, set[str]]:
    """Replay ``plan`` through the engine: (won on the last action, every event seen)."""
    compiled = compile_labyrinth(lab)
    state = initial_state(compiled)
    events: set[str] = set()
    won = False
    for i, action in enumerate(plan):
        result = transition(compiled, state, action)
        events.update(result.events)
        assert not result.won or i == len(plan) - 1, "the plan wins before its end"
        won, state = result.won, result.state
    return won, events


def test_chest_before_key_in_a_corridor() -> None:
    # S T K in a row, exit on the left of the start: go over the locked chest, fetch the key,
    # come back over the chest (now opened) and leave.
    lab = Labyrinth(
        rows=1,
        cols=3,
        open_edges=corridor(3),
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        chest=(0, 1),
        key=(0, 2),
    )
    plan = solve(lab)
    assert plan == ["right", "right", "left", "left", "left"]
    assert optimal_length(lab) == 5
    won, events = play(lab, plan)
    assert won and {"chest_locked", "picked_key", "opened_treasure", "exited"} <= events


def test_open_square_takes_four_steps() -> None:
    lab = Labyrinth(
        rows=2,
        cols=2,
        open_edges=[[E | S, W | S], [N | E, N | W]],
        exit=ExitGap(cell=(1, 0), side="down"),
        start=(0, 0),
        key=(0, 1),
        chest=(1, 1),
    )
    plan = solve(lab)
    assert plan is not None and len(plan) == 4
    assert play(lab, plan)[0]


def test_exit_key_is_fetched_when_the_labyrinth_has_one() -> None:
    # E K T S . in a row, exit right of the last cell: the exit key costs a detour of 2.
    base = {
        "rows": 1,
        "cols": 5,
        "open_edges": corridor(5),
        "exit": ExitGap(cell=(0, 4), side="right"),
        "start": (0, 3),
        "key": (0, 1),
        "chest": (0, 2),
    }
    assert optimal_length(Labyrinth(**base)) == 6
    lab = Labyrinth(**base, exit_key=(0, 0))
    plan = solve(lab)
    assert plan == ["left"] * 3 + ["right"] * 5
    won, events = play(lab, plan)
    assert won and "picked_exit_key" in events


def test_unreachable_key_is_unsolvable() -> None:
    lab = Labyrinth(
        rows=1,
        cols=3,
        open_edges=corridor(3, closed=(1,)),
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        chest=(0, 1),
        key=(0, 2),
    )
    assert solve(lab) is None
    assert optimal_length(lab) is None
    assert random_agent_success(lab, [10, 100]) == [0.0, 0.0]


def test_river_ride_shortens_the_plan() -> None:
    # Row 0: S > m K ; row 1: T . . . joined to row 0 only below K; exit left of T.
    lab = Labyrinth(
        rows=2,
        cols=4,
        open_edges=[[E, E | W, E | W, W | S], [E, E | W, E | W, W | N]],
        exit=ExitGap(cell=(1, 0), side="left"),
        start=(0, 0),
        key=(0, 3),
        chest=(1, 0),
        rivers=[River(cells=[(0, 1)], mouth=(0, 2))],
    )
    plan = solve(lab)
    # right lands on the arrow and rides into the mouth: 7 steps instead of 8 on plain floor.
    assert plan == ["right", "right", "down", "left", "left", "left", "left"]
    won, events = play(lab, plan)
    assert won and "river_carried" in events


def test_river_flowing_towards_the_player_blocks_the_way() -> None:
    # K T > > m with the player on the mouth: stepping upstream washes the player back.
    lab = Labyrinth(
        rows=1,
        cols=5,
        open_edges=corridor(5),
        exit=ExitGap(cell=(0, 4), side="right"),
        start=(0, 4),
        key=(0, 0),
        chest=(0, 1),
        rivers=[River(cells=[(0, 2), (0, 3)], mouth=(0, 4))],
    )
    assert solve(lab) is None


def test_pit_pair_crosses_a_wall() -> None:
    # S P | P K T with the exit right of T; the wall can only be passed through the pits.
    base = {
        "rows": 1,
        "cols": 5,
        "open_edges": corridor(5, closed=(1,)),
        "exit": ExitGap(cell=(0, 4), side="right"),
        "start": (0, 0),
        "key": (0, 3),
        "chest": (0, 4),
    }
    assert solve(Labyrinth(**base)) is None
    lab = Labyrinth(**base, pits=[PitCycle(cells=[(0, 1), (0, 2)])])
    plan = solve(lab)
    assert plan == ["right", "right", "right", "right"]
    won, events = play(lab, plan)
    assert won and "pit_teleport" in events


def test_grenade_opens_a_sealed_key() -> None:
    base = {
        "rows": 1,
        "cols": 4,
        "open_edges": corridor(4, closed=(1,)),
        "exit": ExitGap(cell=(0, 3), side="right"),
        "start": (0, 0),
        "key": (0, 2),
        "chest": (0, 3),
    }
    assert solve(Labyrinth(**base)) is None
    lab = Labyrinth(**base, grenade_packs=[GrenadePack(cell=(0, 1))])
    plan = solve(lab)
    assert plan == ["right", "bomb_right", "right", "right", "right"]
    assert play(lab, plan)[0]


def test_plans_are_deterministic_and_replay_to_a_win() -> None:
    lab = Labyrinth(
        rows=2,
        cols=2,
        open_edges=[[E | S, W | S], [N | E, N | W]],
        exit=ExitGap(cell=(0, 0), side="up"),
        start=(1, 1),
        key=(0, 1),
        chest=(1, 0),
    )
    first = solve(lab)
    assert first is not None
    assert all(solve(lab) == first for _ in range(3))
    assert solve(compile_labyrinth(lab)) == first  # a compiled labyrinth works too
    assert play(lab, first)[0]


def test_state_bound_raises_a_clear_error() -> None:
    lab = Labyrinth(
        rows=1,
        cols=3,
        open_edges=corridor(3),
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        chest=(0, 1),
        key=(0, 2),
    )
    with pytest.raises(PlanningError, match="max_states"):
        solve(lab, max_states=2)
    with pytest.raises(PlanningError, match="max_states"):
        state_graph(lab, max_states=2)


def test_random_agent_success_is_exact() -> None:
    # The corridor of test_chest_before_key has exactly one 5-step win: probability 4**-5.
    lab = Labyrinth(
        rows=1,
        cols=3,
        open_edges=corridor(3),
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        chest=(0, 1),
        key=(0, 2),
    )
    four, five, later = random_agent_success(lab, [4, 5, 60])
    assert four == 0.0
    assert five == pytest.approx(4.0**-5)
    assert five < later < 1.0
    assert random_agent_success(lab, []) == []
    with pytest.raises(ValueError, match="horizons"):
        random_agent_success(lab, [-1])


def test_random_agent_success_matches_monte_carlo() -> None:
    lab = Labyrinth(
        rows=2,
        cols=3,
        open_edges=[[E | S, E | W, W | S], [N | E, E | W, N | W]],
        exit=ExitGap(cell=(0, 1), side="up"),
        start=(0, 0),
        key=(1, 2),
        chest=(1, 0),
        rivers=[],
    )
    horizon = 30
    (exact,) = random_agent_success(lab, [horizon])
    compiled = compile_labyrinth(lab)
    rng = np.random.default_rng(0)
    wins = 0
    runs = 3000
    for _ in range(runs):
        state = initial_state(compiled)
        for index in rng.integers(4, size=horizon):
            result = transition(compiled, state, compiled.actions[int(index)])
            state = result.state
            if result.won:
                wins += 1
                break
    estimate = wins / runs
    sigma = (exact * (1 - exact) / runs) ** 0.5
    assert 0.05 < exact < 0.95
    assert abs(estimate - exact) < 4 * sigma


# --- dead states ------------------------------------------------------------------------------


def river_trap() -> Labyrinth:
    """S K T . > m in a corridor, exit left of S: the river carries the player into a pocket.

    The mouth (0, 5) is closed on every side but the river's; stepping back onto the arrow
    (0, 4) washes the player straight back to the mouth. Winnable only by never riding in.
    """
    return Labyrinth(
        rows=1,
        cols=6,
        open_edges=corridor(6),
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        key=(0, 1),
        chest=(0, 2),
        rivers=[River(cells=[(0, 4)], mouth=(0, 5))],
    )


def test_dead_states_finds_the_river_trap_and_the_move_into_it() -> None:
    lab = river_trap()
    analysis = dead_states(lab)
    assert analysis.winnable
    dead = analysis.dead
    assert dead and {state.pos for state in dead} == {(0, 5)}
    # the corridor passes the key and the chest first: the mouth is reached holding both
    assert len(dead) == 1 and dead[0].treasure
    entries = analysis.entries()
    assert {(e.state.pos, e.action) for e in entries} == {((0, 3), "right")}
    assert all(e.events == ("moved", "river_entered", "river_carried") for e in entries)
    assert all(not analysis.is_live(e.result) and analysis.is_live(e.state) for e in entries)
    assert int(analysis.live.sum()) == len(analysis.graph.states) - 1


def test_lost_at_names_the_step_that_entered_a_dead_state() -> None:
    lab = river_trap()
    assert lost_at(lab, ["right", "right", "right", "right"]) == 4  # step 4 rides in
    assert lost_at(lab, ["right", "right", "left", "left", "left"]) is None  # a win
    assert lost_at(lab, ["right", "left", "right"]) is None  # slow, but can still win
    analysis = dead_states(lab)
    assert lost_at(analysis, ["right"] * 9) == 4  # the analysis can be reused
    with pytest.raises(KeyError, match="not reachable"):
        analysis.is_live(initial_state(compile_labyrinth(lab)).moved((0, 4)))


def test_an_unwinnable_start_is_lost_at_step_zero() -> None:
    lab = Labyrinth(
        rows=1,
        cols=3,
        open_edges=corridor(3, closed=(1,)),
        exit=ExitGap(cell=(0, 0), side="left"),
        start=(0, 0),
        key=(0, 2),
        chest=(0, 1),
    )
    analysis = dead_states(lab)
    assert not analysis.winnable and not analysis.live.any()
    assert analysis.entries() == []  # no live state to enter a dead one from
    assert lost_at(analysis, ["right"]) == 0


def test_live_mask_and_win_length_agree_with_search() -> None:
    lab = river_trap()
    graph = state_graph(lab)
    assert win_length(graph) == optimal_length(lab) == 5
    live = live_mask(graph)
    for state, alive in zip(graph.states, live, strict=True):
        # a state is live exactly when a breadth-first search from it finds a win
        seen, queue, found = {state}, [state], False
        for here in queue:
            for action in graph.actions:
                result = transition(compile_labyrinth(lab), here, action)
                found = found or result.won
                if not result.won and result.state not in seen:
                    seen.add(result.state)
                    queue.append(result.state)
        assert bool(alive) == found, state


def test_a_wasted_grenade_is_the_only_way_to_lose_a_sealed_key() -> None:
    lab = Labyrinth(
        rows=1,
        cols=4,
        open_edges=corridor(4, closed=(1,)),
        exit=ExitGap(cell=(0, 3), side="right"),
        start=(0, 0),
        key=(0, 2),
        chest=(0, 3),
        grenade_packs=[GrenadePack(cell=(0, 1))],
    )
    entries = dead_states(lab).entries()
    assert entries and all(e.action.startswith("bomb_") for e in entries)
    # e.g. blowing at the monolith before reaching the wall: the one grenade is gone
    assert any(e.events == ("bomb_failed",) for e in entries)
