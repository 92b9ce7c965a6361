"""Grid primitives: perfect-maze algorithms and BFS distances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maze_envs.grid import (
    ALGORITHMS,
    EAST,
    NORTH,
    SOUTH,
    WEST,
    bfs_distances,
    carve,
    empty_grid,
    generate_perfect_maze,
    is_perfect_maze,
)


@settings(max_examples=40, deadline=None)
@given(
    algorithm=st.sampled_from(sorted(ALGORITHMS)),
    width=st.integers(1, 41),
    height=st.integers(1, 41),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_algorithm_builds_a_perfect_maze(
    algorithm: str, width: int, height: int, seed: int
) -> None:
    maze = generate_perfect_maze(algorithm, width, height, np.random.default_rng(seed))
    assert maze.shape == (height, width)
    assert is_perfect_maze(maze)
    # Edges are stored on both sides.
    assert np.array_equal(maze[:, :-1] & EAST != 0, maze[:, 1:] & WEST != 0)
    assert np.array_equal(maze[:-1, :] & SOUTH != 0, maze[1:, :] & NORTH != 0)


def test_same_seed_same_maze_and_different_seeds_differ() -> None:
    a = generate_perfect_maze("wilson", 12, 9, np.random.default_rng(7))
    b = generate_perfect_maze("wilson", 12, 9, np.random.default_rng(7))
    c = generate_perfect_maze("wilson", 12, 9, np.random.default_rng(8))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bfs_distances_on_a_corridor() -> None:
    maze = empty_grid(4, 1)
    for col in range(3):
        carve(maze, (0, col), EAST)
    assert bfs_distances(maze, (0, 0)).tolist() == [[0, 1, 2, 3]]
    assert bfs_distances(maze, (0, 2)).tolist() == [[2, 1, 0, 1]]


def test_loops_and_disconnection_are_not_perfect() -> None:
    maze = empty_grid(2, 2)
    carve(maze, (0, 0), EAST)
    assert not is_perfect_maze(maze)  # (1, *) unreachable
    carve(maze, (0, 0), SOUTH)
    carve(maze, (1, 0), EAST)
    assert is_perfect_maze(maze)
    carve(maze, (0, 1), SOUTH)
    assert not is_perfect_maze(maze)  # a loop


def test_unknown_algorithm_and_bad_size_are_clear_errors() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown maze algorithm 'kruskal'"):
        generate_perfect_maze("kruskal", 5, 5, rng)
    with pytest.raises(ValueError, match="must be positive"):
        generate_perfect_maze("wilson", 0, 5, rng)


def test_wilson_samples_spanning_trees_uniformly() -> None:
    # A 3x2 grid has 15 spanning trees; Wilson's algorithm must hit each about equally often.
    rng = np.random.default_rng(2024)
    counts: dict[bytes, int] = {}
    samples = 6000
    for _ in range(samples):
        tree = generate_perfect_maze("wilson", 3, 2, rng).tobytes()
        counts[tree] = counts.get(tree, 0) + 1
    assert len(counts) == 15
    expected = samples / 15
    chi_square = sum((n - expected) ** 2 / expected for n in counts.values())
    assert chi_square < 36.1  # 99.9th percentile of chi-square with 14 degrees of freedom
