"""The AGI Maze baselines do what their docstrings say (played through the real env)."""

from __future__ import annotations

from collections import deque
from functools import cache

import numpy as np
import pytest

from maze_envs.agimaze.compiled import PlayerState
from maze_envs.agimaze.engine import compile_labyrinth, transition
from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.agimaze.planner import optimal_length
from maze_envs.agimaze.types import DIRECTION_BITS, DIRECTION_DELTAS, Labyrinth
from maze_envs.policies import AgiMazeExplorer, AgiMazeOracle, AgiMazeRandom
from maze_envs.policies.agimaze.world import Frame
from tests.policies.loops import play_agimaze, play_agimaze_set

TUTORIAL = list_bundles("TUTORIAL/")
TRAINING = list_bundles("TRAINING/")


@cache
def labyrinth(path: str) -> Labyrinth:
    return resolve_pack_path(path)[1].labyrinth


def can_still_win(lab: Labyrinth, state: PlayerState) -> bool:
    """Exhaustive search: does any action sequence win from ``state``?"""
    compiled = compile_labyrinth(lab)
    seen, queue = {state}, deque([state])
    while queue:
        here = queue.popleft()
        for action in compiled.actions:
            result = transition(compiled, here, action)
            if result.won:
                return True
            if result.state not in seen:
                seen.add(result.state)
                queue.append(result.state)
    return False


def true_edge(lab: Labyrinth, cell: tuple[int, int], direction: str) -> str:
    dr, dc = DIRECTION_DELTAS[direction]
    there = (cell[0] + dr, cell[1] + dc)
    if lab.in_bounds(there):
        return "open" if lab.open_edges[cell[0]][cell[1]] & DIRECTION_BITS[direction] else "wall"
    return "exit" if (lab.exit.cell, lab.exit.side) == (cell, direction) else "monolith"


def true_kinds(lab: Labyrinth) -> dict[tuple[int, int], str]:
    kinds: dict[tuple[int, int], str] = {}
    for name in ("key", "exit_key", "boat", "flashlight"):
        if getattr(lab, name) is not None:
            kinds[getattr(lab, name)] = name
    if lab.chest is not None:
        kinds[lab.chest] = "treasure"
    for river in lab.rivers:
        kinds.update(dict.fromkeys(river.cells, "river"))
        kinds[river.mouth] = "river_mouth"
    for cycle in lab.pits:
        kinds.update(dict.fromkeys(cycle.cells, "pit"))
    return kinds


def assert_learned_only_truths(
    frame: Frame, lab: Labyrinth, held: dict[str, bool | int] | None = None
) -> None:
    """Every fact in the explorer's main map is a fact of the labyrinth (a cell whose item the
    player took before it first saw the cell in the main map reads as empty, as it now is)."""
    kinds = true_kinds(lab)
    held = held or {}
    for (cell, direction), fact in frame.edges.items():
        if lab.in_bounds(cell):
            assert fact == true_edge(lab, cell, direction), (cell, direction)
    for cell, kind in frame.content.items():
        truth = kinds.get(cell, "empty")
        assert kind == truth or (kind == "empty" and held.get(truth)), (cell, kind, truth)
    flows = {c: r.flow_direction(i) for r in lab.rivers for i, c in enumerate(r.cells)}
    for cell, flow in frame.flow.items():
        assert flow == flows[cell], cell
    nxt = {c: cy.cells[(i + 1) % len(cy.cells)] for cy in lab.pits for i, c in enumerate(cy.cells)}
    for cell, dest in frame.pit_dest.items():
        assert dest == nxt[cell], cell
    if frame.exit is not None:
        assert frame.exit == (lab.exit.cell, lab.exit.side)


#: The shipped TUTORIAL and TRAINING bundles with a reachable state from which no action sequence
#: wins (found by :func:`dead_end_entries`). In each a river carries the player to its mouth in a
#: pocket walled in on every other side, whose only way out is the river's last arrow, which
#: carries it straight back; none of these labyrinths has a boat. A player that has not seen the
#: labyrinth cannot know a cell is a river before it steps on it, so no player that learns from
#: what happens to it can always avoid them.
RIVER_TRAPS = {
    "TRAINING/S3-full/STAGE-01/0004.json",
    "TRAINING/S3-full/STAGE-01/0009.json",
    "TRAINING/S3-full/STAGE-05/0005.json",
    "TRAINING/S3-full/STAGE-06/0000.json",
}


@cache
def dead_end_entries(path: str) -> frozenset[tuple[str, ...]]:
    """The events of every transition from a state that can still win into one that cannot
    (backward reachability from the winning moves over the whole state graph)."""
    from maze_envs.agimaze.planner import WIN, state_graph

    lab = labyrinth(path)
    graph = state_graph(lab)
    succ = graph.successors
    live = (succ == WIN).any(axis=1)
    preds: list[list[int]] = [[] for _ in graph.states]
    for i, row in enumerate(succ):
        for j in row:
            if j != WIN:
                preds[int(j)].append(i)
    stack = [int(i) for i in np.flatnonzero(live)]
    while stack:
        for i in preds[stack.pop()]:
            if not live[i]:
                live[i] = True
                stack.append(i)
    compiled = compile_labyrinth(lab)
    entries = set()
    for i, row in enumerate(succ):
        for a, j in enumerate(row):
            if live[i] and j != WIN and not live[int(j)]:
                result = transition(compiled, graph.states[i], graph.actions[a])
                entries.add(tuple(result.events))
    return frozenset(entries)


def test_the_only_dead_ends_of_tutorial_and_training_are_river_traps() -> None:
    traps = {path for path in TUTORIAL + TRAINING if dead_end_entries(path)}
    assert traps == RIVER_TRAPS
    for path in traps:
        # always entered by landing on a river whose current carries the player on
        assert dead_end_entries(path) == {("moved", "river_entered", "river_carried")}, path
        assert labyrinth(path).boat is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_explorer_solves_every_tutorial_and_training_bundle_within_the_5x_budget(
    seed: int,
) -> None:
    """Every bundle without a dead end is solved within the 5x budget, whatever the seed; in the
    four river-trap bundles (:data:`RIVER_TRAPS`) the explorer either solves it or ended in a
    state from which no action sequence wins (proved by exhaustive search), never gave up
    while a win was still possible. Which trap it meets depends on its seeded move order."""
    unsolved = []
    for path in TUTORIAL + TRAINING:
        policy = AgiMazeExplorer()
        game = play_agimaze(path, policy, seed=seed)
        info = game.info
        lab = labyrinth(path)
        assert_learned_only_truths(policy.main, lab, policy.held)
        if info["solved"]:
            assert info["steps"] <= info["budget"] == 5 * info["max_steps"]
            continue
        assert path in RIVER_TRAPS, f"{path} (seed {seed}): unsolved without a dead end"
        assert info["steps"] == info["budget"]
        state = game.env.unwrapped.backend.state
        assert not can_still_win(lab, state), f"{path}: gave up while a win was possible"
        unsolved.append(path)


def test_explorer_solves_tutorials_fast_from_the_open_map() -> None:
    """On open maps it plans from the map: within the tutorial's 3x-optimal budget."""
    for path in TUTORIAL:
        game = play_agimaze(path, AgiMazeExplorer())
        assert game.info["solved"]
        assert game.info["steps"] <= game.info["max_steps"]


def test_explorer_learns_pit_destinations_and_remembers_the_exit_gap() -> None:
    learned_pits = refused = 0
    for path in list_bundles("TRAINING/S2-pits/"):
        policy = AgiMazeExplorer()
        game = play_agimaze(path, policy)
        assert game.info["solved"], path
        lab = labyrinth(path)
        assert_learned_only_truths(policy.main, lab, policy.held)
        learned_pits += len(policy.main.pit_dest)
        events = [e for o in game.observations for e in o.formal["events"]]
        if "exit_blocked" in events or "exit_locked" in events:
            refused += 1  # it found the gap too early: it must remember where it is
            assert policy.main.exit == (lab.exit.cell, lab.exit.side)
            # and it was refused there at most once per missing item (key+chest, exit key)
            assert events.count("exit_blocked") + events.count("exit_locked") <= 2
    assert refused >= 20
    assert learned_pits >= 60  # at least one pit's far end placed per labyrinth on average


def test_explorer_learns_river_flows_from_its_rides() -> None:
    flows = 0
    for path in list_bundles("TRAINING/S1-rivers/"):
        policy = AgiMazeExplorer()
        game = play_agimaze(path, policy)
        assert_learned_only_truths(policy.main, labyrinth(path))
        flows += len(policy.main.flow)
        carried = sum("river_carried" in o.formal["events"] for o in game.observations)
        assert carried == 0 or policy.main.flow, path
    assert flows > 60


@pytest.mark.parametrize("group", ["TUTORIAL", "TRAINING", "CLASSIC", "EXTENDED"])
def test_oracle_plays_the_optimal_plan_with_rhae70_one(group: str) -> None:
    paths = list_bundles(f"{group}/")
    for path in paths if group in ("TUTORIAL", "TRAINING") else paths[::3]:
        game = play_agimaze(path, AgiMazeOracle())
        bundle = resolve_pack_path(path)[1]
        assert game.info["solved"], path
        assert game.info["steps"] == bundle.meta.optimal_steps, path
        assert game.info["rhae"] == 1.0, path


def test_oracle_step_count_is_the_planners_optimum() -> None:
    for path in TRAINING[::7]:
        game = play_agimaze(path, AgiMazeOracle())
        assert game.info["steps"] == optimal_length(labyrinth(path))


def test_oracle_needs_the_ground_truth() -> None:
    import gymnasium as gym

    from maze_envs.policies import agimaze_episode

    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0000.json")
    _, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="privileged"):
        AgiMazeOracle().reset("player", 0, agimaze_episode(env, info))


def test_random_policy_draws_like_the_calibration_agent() -> None:
    """The same seed gives the same actions as ``rng.integers(len(actions), size=n)``."""
    path = "TRAINING/S2-pits/STAGE-02/0003.json"
    game = play_agimaze(path, AgiMazeRandom(), seed=11)
    actions = labyrinth(path).actions
    draws = np.random.default_rng(11).integers(len(actions), size=len(game.actions))
    assert game.actions == [actions[int(i)] for i in draws]


def test_random_policy_success_matches_the_exact_random_agent_rate() -> None:
    from maze_envs.agimaze.planner import random_agent_success

    path = "TRAINING/S0-keys/STAGE-01/0000.json"
    (exact,) = random_agent_success(labyrinth(path), [70])  # within 1x max_steps
    runs = 200
    games = [play_agimaze(path, AgiMazeRandom(), seed=s, budget_factor=1.0) for s in range(runs)]
    rate = sum(g.info["solved"] for g in games) / runs
    assert abs(rate - exact) < 4 * (exact * (1 - exact) / runs) ** 0.5  # four standard errors


def test_baselines_play_the_labyrinth_set() -> None:
    """Oracle and explorer answer ``start`` and solve the tutorials and the target."""
    oracle = play_agimaze_set(AgiMazeOracle())
    assert [r["rhae"] for r in oracle["results"]] == [1.0] * 8
    explorer = play_agimaze_set(AgiMazeExplorer())
    assert all(r["solved"] for r in explorer["results"])
    random = play_agimaze_set(AgiMazeRandom(), budget_factor=1.0)
    assert len(random["results"]) == 8
