"""Property tests of generated instances, and random play that must never crash."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maze_envs import maze_escape_v0
from maze_envs.escape.generator import (
    PerfectMazeGenerator,
    default_landmark_count,
)
from maze_envs.escape.types import LANDMARK_NAMES, Config
from maze_envs.grid import EAST, NORTH, SOUTH, WEST, bfs_distances, is_perfect_maze

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    seed=st.integers(0, 2**32 - 1),
    width=st.integers(5, 41),
    height=st.integers(5, 41),
    agents=st.integers(1, 6),
    algorithm=st.sampled_from(["wilson", "backtracker"]),
)
def test_generated_layouts_are_valid(
    seed: int, width: int, height: int, agents: int, algorithm: str
) -> None:
    config = Config(width=width, height=height, num_agents=agents, maze_algorithm=algorithm)
    layout = PerfectMazeGenerator(algorithm).generate(config, np.random.default_rng(seed))
    layout.validate(config)
    assert layout.maze.shape == (height, width)
    assert is_perfect_maze(layout.maze)
    r, c = layout.exit_cell
    outer = {NORTH: r == 0, SOUTH: r == height - 1, WEST: c == 0, EAST: c == width - 1}
    assert outer[layout.doorway], "the doorway must be in the outer wall of the exit cell"
    assert not layout.maze[r, c] & layout.doorway  # the maze itself stays closed there
    cells = [cell for cell, _ in layout.landmarks]
    names = [name for _, name in layout.landmarks]
    assert len(set(cells)) == len(cells) == default_landmark_count(config)
    assert len(set(names)) == len(names) and set(names) <= set(LANDMARK_NAMES)
    assert layout.exit_cell not in cells
    assert len(set(layout.starts)) == agents and layout.exit_cell not in layout.starts
    exit_distance = bfs_distances(layout.maze, layout.exit_cell)
    assert all(exit_distance[cell] >= 1 for cell in layout.starts)


def test_same_seed_same_layout() -> None:
    config = Config(width=13, height=9)
    one = PerfectMazeGenerator().generate(config, np.random.default_rng(7))
    two = PerfectMazeGenerator().generate(config, np.random.default_rng(7))
    assert np.array_equal(one.maze, two.maze)
    assert (one.exit_cell, one.doorway, one.landmarks, one.starts) == (
        two.exit_cell,
        two.doorway,
        two.landmarks,
        two.starts,
    )


def test_default_landmark_counts_scale_with_size() -> None:
    assert default_landmark_count(Config(width=10, height=10)) == 3
    assert default_landmark_count(Config(width=12, height=12)) == 4
    many = [
        default_landmark_count(Config(width=s, height=s, landmark_density="many"))
        for s in (9, 11, 13, 15, 17)
    ]
    assert many[0] == 10 and many[-1] == 14 and many == sorted(many)
    assert default_landmark_count(Config(landmark_count=7)) == 7
    assert len(LANDMARK_NAMES) >= 16


def test_ground_truth_matches_breadth_first_search() -> None:
    env = maze_escape_v0.parallel_env(width=12, height=9)
    env.reset(seed=21)
    truth = env.ground_truth()
    layout = env.layout
    dist = bfs_distances(layout.maze, layout.exit_cell)
    expected = [int(dist[cell]) for cell in layout.starts]
    assert list(truth["shortest_path_to_exit"].values()) == expected
    assert truth["fastest_possible_finish"] == max(expected)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    preset=st.sampled_from(["sparse", "navigator", "shared_frame", "full"]),
    width=st.integers(5, 12),
    height=st.integers(5, 12),
    moves=st.lists(st.integers(0, 4), min_size=1, max_size=60),
    texts=st.lists(st.text(max_size=40), min_size=1, max_size=5),
)
def test_random_action_sequences_never_crash(
    seed: int, preset: str, width: int, height: int, moves: list[int], texts: list[str]
) -> None:
    env = maze_escape_v0.parallel_env(preset=preset, width=width, height=height, max_turns=50)
    obs, _ = env.reset(seed=seed)
    splice = env.config.notebook_mode == "splice"
    for t, move in enumerate(moves):
        if not env.agents:
            break
        text = texts[t % len(texts)]
        actions = {}
        for k, agent in enumerate(env.agents):
            if splice:
                notebook = {"edit": (t + k) % 2, "start": t % 7, "end": (t * k) % 9, "text": text}
            else:
                notebook = {"append": text}
            actions[agent] = {"move": (move + k) % 5, "notebook": notebook, "radio": text}
        obs, *_ = env.step(actions)
        for agent, o in obs.items():
            assert env.observation_space(agent).contains(o)
