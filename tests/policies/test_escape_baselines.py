"""The Maze Escape baselines do what their docstrings say (played through the real env)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from maze_envs.escape.types import LastActionResult, Observation
from maze_envs.grid import bfs_distances
from maze_envs.policies import (
    CooperativeExplorer,
    EscapeOracle,
    RandomWalk,
    TremauxExplorer,
    WallFollower,
)
from maze_envs.policies.escape.routes import parse_routes
from tests.policies.loops import ESCAPE_VERSIONS, play_escape

#: Every switchable observation feature in at least one setup: no coordinates (sparse), own /
#: shared / absolute frames, trail, meeting alert, used exits, splice and rolling-log notebooks.
SETUPS: list[dict[str, Any]] = [
    {"preset": "sparse"},
    {"preset": "navigator"},
    {"preset": "shared_frame"},
    {"preset": "full"},
    {"preset": "sparse", "distance_sensor": False},
    {"coordinates": "absolute", "distance_sensor": False, "notebook_mode": "rolling_log"},
]
SIZES = [(5, 5), (9, 7), (12, 11)]


def moves_bound(width: int, height: int) -> int:
    """A walk round a tree of ``cells`` cells takes ``2 * (cells - 1)`` moves."""
    return 2 * (width * height - 1)


@pytest.mark.parametrize("version", ESCAPE_VERSIONS)
@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: "-".join(f"{v}" for v in s.values()))
@pytest.mark.parametrize(
    "make",
    [
        lambda agent: WallFollower("left"),
        lambda agent: WallFollower("right"),
        lambda agent: TremauxExplorer(),
        lambda agent: TremauxExplorer(heuristic=False),
    ],
    ids=["wall-left", "wall-right", "explorer", "explorer-no-sensor"],
)
def test_followers_and_explorers_always_reach_the_exit_of_a_perfect_maze(
    make: Any, setup: dict[str, Any], version: int
) -> None:
    # the typed observation is the same for both versions: v1 gets a lighter sample
    for width, height in SIZES if version == 0 else SIZES[1:2]:
        bound = moves_bound(width, height)
        for seed in range(3 if version == 0 else 2):
            game = play_escape(
                make,
                seed,
                version=version,
                width=width,
                height=height,
                max_turns=bound + 1,
                **setup,
            )
            outcome = game.outcome
            assert outcome["success"], (width, height, seed, outcome)
            assert max(outcome["first_visit_turn"].values()) <= bound
            assert sum(outcome["wall_bumps"].values()) == 0  # walls are seen, never bumped


@pytest.mark.parametrize(
    "make",
    [
        lambda agent: WallFollower("left"),
        lambda agent: WallFollower("right"),
        lambda agent: TremauxExplorer(),
        lambda agent: TremauxExplorer(heuristic=False),
    ],
    ids=["wall-left", "wall-right", "explorer", "explorer-no-sensor"],
)
def test_followers_and_explorers_reach_the_exit_on_many_seeds(make: Any) -> None:
    """40 mazes of the current version (v1), navigator preset (no distance sensor, own-frame
    coordinates) and full preset (sensor on): every agent reaches the exit of the perfect maze
    within one walk round its tree, never bumping a wall."""
    from maze_envs.grid import is_perfect_maze

    version = ESCAPE_VERSIONS[-1]
    width, height = 9, 8
    bound = moves_bound(width, height)
    for seed in range(30):
        preset = "navigator" if seed % 2 else "full"
        game = play_escape(
            make,
            seed,
            version=version,
            preset=preset,
            width=width,
            height=height,
            max_turns=bound + 1,
        )
        assert is_perfect_maze(game.env.layout.maze)
        assert game.outcome["success"], (seed, preset, game.outcome)
        assert max(game.outcome["first_visit_turn"].values()) <= bound
        assert sum(game.outcome["wall_bumps"].values()) == 0


def test_explorers_keep_the_same_map_with_and_without_coordinates() -> None:
    """Dead reckoning and the game's coordinates give the same position history (own frame)."""
    seen: dict[str, list[list[tuple[int, int]]]] = {"sensed": [], "reckoned": []}
    for label, coordinates in (("sensed", "own"), ("reckoned", None)):
        game = play_escape(
            lambda agent: TremauxExplorer(heuristic=False),
            3,
            width=9,
            height=9,
            max_turns=200,
            distance_sensor=False,
            coordinates=coordinates,
        )
        for policy in game.policies.values():
            seen[label].append(sorted(policy.map.visited))
        if coordinates == "own":
            for turn in game.turns:
                for obs, _ in turn.values():
                    assert obs.position is not None
    assert seen["sensed"] == seen["reckoned"]


def test_random_walk_never_walks_into_a_wall_and_stays_on_the_exit() -> None:
    for seed in range(3):
        game = play_escape(lambda agent: RandomWalk(), seed, width=6, height=6, max_turns=2000)
        outcome = game.outcome
        assert sum(outcome["moves"].values()) > 100
        assert sum(outcome["wall_bumps"].values()) == 0
        for turn in game.turns:
            for obs, action in turn.values():
                if obs.on_exit:
                    assert action.move == "STAY"
                else:
                    assert action.move == "STAY" or obs.edges[action.move] == "open"


@pytest.mark.parametrize("version", ESCAPE_VERSIONS)
@pytest.mark.parametrize("preset", ["sparse", "navigator", "full"])
def test_oracle_walks_breadth_first_shortest_paths_and_finishes_as_fast_as_possible(
    preset: str, version: int
) -> None:
    for seed in range(6 if version == 0 else 3):
        game = play_escape(
            lambda agent: EscapeOracle(),
            seed,
            version=version,
            preset=preset,
            width=11,
            height=9,
        )
        layout, outcome = game.env.layout, game.outcome
        # an independent BFS on the maze gives each start's distance to the exit
        distances = bfs_distances(layout.maze, layout.exit_cell)
        expected = {
            agent: int(distances[start])
            for agent, start in zip(game.env.possible_agents, layout.starts, strict=True)
        }
        assert outcome["first_visit_turn"] == expected
        assert outcome["success"]
        assert outcome["turns"] == max(expected.values()) == outcome["fastest_possible_finish"]
        assert sum(outcome["wall_bumps"].values()) == 0


def test_oracle_refuses_to_play_without_the_ground_truth() -> None:
    from maze_envs.policies import escape_episode
    from tests.policies.loops import escape_env

    env = escape_env(width=5, height=5)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="privileged"):
        EscapeOracle().reset("A", 0, escape_episode(env, "A"))


# --- the cooperative team -------------------------------------------------------------------


def _route_checks(game_setup: dict[str, Any], seeds: range) -> tuple[int, Counter[str]]:
    """Play cooperative teams; every time an agent that knows the radioed (or read) route of a
    landmark stands on that landmark before its first exit visit, its first visit must come
    exactly the route's length later."""
    checked = 0
    results: Counter[str] = Counter()
    for seed in seeds:
        standing: dict[str, tuple[int, int]] = {}

        def watch(
            agent: str, policy: Any, obs: Observation, standing: dict[str, Any] = standing
        ) -> None:
            if agent in standing or policy.reached_exit or obs.landmark is None:
                return
            route = policy.heard.get(obs.landmark)
            if route is not None:
                standing[agent] = (obs.turn, len(route))

        game = play_escape(lambda agent: CooperativeExplorer(), seed, watch=watch, **game_setup)
        for agent, (turn, length) in standing.items():
            assert game.outcome["first_visit_turn"][agent] == turn + length, (seed, agent)
            checked += 1
        for events in game.events:
            for event in events.values():
                results[f"radio:{event['radio']}"] += 1
                results[f"notebook:{event['notebook']}"] += 1
    return checked, results


@pytest.mark.parametrize(
    "setup",
    [
        {"preset": "sparse", "width": 13, "height": 13, "max_turns": 1000},
        {"preset": "navigator", "width": 13, "height": 13},
        {"preset": "full", "width": 11, "height": 15, "max_turns": 1000},
        {"distance_sensor": False, "width": 12, "height": 12, "max_turns": 1000},
    ],
    ids=["sparse", "navigator", "full", "no-sensor"],
)
def test_cooperative_agent_on_the_landmark_of_a_radioed_route_exits_in_the_routes_length(
    setup: dict[str, Any],
) -> None:
    checked, results = _route_checks(setup, range(8))
    assert checked >= 5  # the situation really happens, so the check is not vacuous
    # messages and edits respect the limits and the cooldown: never refused or rejected
    assert results["radio:sent"] > 0 and results["radio:refused"] == 0
    assert results["notebook:applied"] > 0 and results["notebook:rejected"] == 0


def test_cooperative_route_fits_a_small_radio_and_the_team_still_escapes() -> None:
    """With a 24-byte radio only short routes are sent; nothing is ever refused."""
    for seed in range(5):
        game = play_escape(
            lambda agent: CooperativeExplorer(),
            seed,
            width=9,
            height=9,
            max_turns=800,
            radio_max_bytes=24,
            radio_cooldown=2,
        )
        assert game.outcome["success"]
        sent = [a.radio for turn in game.turns for _, a in turn.values() if a.radio]
        assert all(len(text.encode()) <= 24 for text in sent)
        assert all(e["radio"] != "refused" for events in game.events for e in events.values())
        assert all(parse_routes(text) for text in sent)


def test_cooperative_team_without_radio_still_shares_routes_by_notebook() -> None:
    read = 0
    for seed in range(10):
        game = play_escape(
            lambda agent: CooperativeExplorer(),
            seed,
            width=10,
            height=10,
            max_turns=800,
            radio=False,
            meeting_alert=True,
        )
        assert game.outcome["success"]
        assert not any(a.radio for turn in game.turns for _, a in turn.values())
        read += sum(
            1
            for turn in game.turns
            for obs, _ in turn.values()
            if any("HERE:" in text for text in obs.teammate_notebooks.values())
        )
    assert read > 0  # teammates met a finder and read its way out


@pytest.mark.parametrize("version", ESCAPE_VERSIONS)
@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: "-".join(f"{v}" for v in s.values()))
def test_cooperative_team_escapes_under_every_feature_combination(
    setup: dict[str, Any], version: int
) -> None:
    config = {"width": 11, "height": 11, "max_turns": 2 * (11 * 11 - 1) + 1, **setup}
    for seed in range(3 if version == 0 else 1):
        game = play_escape(lambda agent: CooperativeExplorer(), seed, version=version, **config)
        assert game.outcome["success"], (seed, game.outcome)
        assert sum(game.outcome["wall_bumps"].values()) == 0


def test_cooperative_agents_fan_out_in_different_directions() -> None:
    """Without a distance sensor each agent's first choice follows its own rotated order."""
    for index, agent in enumerate("ABCD"):
        policy = CooperativeExplorer()
        policy.reset(agent, 0)
        first = policy.act(_observation(open_edges="NESW"))
        assert first.move == "NESW"[index]


def test_mixed_policies_are_deterministic_per_seed() -> None:
    def team(agent: str) -> Any:
        return {"A": CooperativeExplorer(), "B": RandomWalk(), "C": TremauxExplorer()}[agent]

    runs = [play_escape(team, 5, preset="full", width=10, height=10, max_turns=120) for _ in "ab"]
    first, second = ([[a for _, a in t.values()] for t in g.turns] for g in runs)
    assert first == second
    assert runs[0].outcome == runs[1].outcome


def _observation(open_edges: str, move: str = "none", on_exit: bool = False) -> Observation:
    return Observation(
        edges={d: "open" if d in open_edges else "interior_wall" for d in "NESW"},  # type: ignore[misc]
        on_exit=on_exit,
        landmark=None,
        turn=0,
        turns_left=10,
        notebook="",
        radio={},
        teammate_notebooks={},
        last_action=LastActionResult(
            move=move,  # type: ignore[arg-type]
            notebook="none",
            notebook_reason="",
            radio="none",
            radio_reason="",
            radio_cooldown=0,
        ),
    )


def test_explorer_trusts_only_confirmed_moves() -> None:
    explorer = TremauxExplorer(heuristic=False)
    explorer.reset("A", seed=0)
    assert explorer.act(_observation("N")).move == "N"
    # the move was refused: the explorer is still at its start and never tries north again
    assert explorer.act(_observation("N", move="bumped_interior_wall")).move == "STAY"
    explorer.reset("A", seed=0)
    assert explorer.act(_observation("N")).move == "N"
    # confirmed: now in a dead end whose only open edge leads back south
    assert explorer.act(_observation("S", move="moved")).move == "S"
    assert explorer.act(_observation("NE", move="moved")).move == "E"
    assert explorer.position == (0, 0)


def test_explorer_uses_the_distance_sensor_to_choose_branches() -> None:
    """Readings pin the exit down; at a fork the explorer takes the branch towards it."""
    explorer = TremauxExplorer()
    explorer.reset("A", seed=0)  # default config: 10x10, sensor on
    readings = [((0, 0), 30), ((1, 0), 20)]  # exit 3 east of the start (or -3 / +-3 north)
    explorer.act(_observation("E").model_copy(update={"distance_to_exit": readings[0][1]}))
    obs = _observation("NESW", move="moved").model_copy(update={"distance_to_exit": 20})
    assert explorer.act(obs).move == "E"
    assert explorer.locator is not None and explorer.locator.candidates == [(3, 0)]


def test_wall_follower_turns_towards_its_hand() -> None:
    left, right = WallFollower("left"), WallFollower("right")
    for policy in (left, right):
        policy.reset("A", 0)
    # heading north at the start: left hand prefers W, right hand prefers E
    assert left.act(_observation("NESW")).move == "W"
    assert right.act(_observation("NESW")).move == "E"
    with pytest.raises(ValueError, match="hand"):
        WallFollower("up")  # type: ignore[arg-type]


def test_random_walk_is_uniform_over_open_edges() -> None:
    policy = RandomWalk()
    policy.reset("A", 7)
    counts = Counter(policy.act(_observation("NES")).move for _ in range(3000))
    assert set(counts) == {"N", "E", "S"}
    assert all(abs(n / 3000 - 1 / 3) < 0.04 for n in counts.values())
    assert np.isclose(sum(counts.values()), 3000)
