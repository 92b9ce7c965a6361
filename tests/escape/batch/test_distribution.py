"""Same mazes in distribution: the batched sampler draws uniform spanning trees.

Every spanning tree of the 3x3 grid (all 192 of them, enumerated here) must come up equally
often: a chi-square test of many mazes from the batched sampler, drawn as the vector env draws
them (a stream handing mazes out in pieces), against the uniform distribution. The seed is
fixed, so the test is deterministic; the bar (p < 1e-6 fails) would be missed by a uniform
sampler about once in a million seeds, while the same test rejects a sampler that is not
uniform (the recursive backtracker), so it can fail.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.batch.generator import WilsonStream, sample_mazes
from maze_envs.grid import EAST, SOUTH, backtracker_maze, is_perfect_maze

SIZE = 3
#: the bar: a chi-square statistic this unlikely under uniformity fails the test
P_FAIL = 1e-6


def grid_edges(size: int) -> list[tuple[int, int]]:
    """Every edge of the size x size grid, as (cell, cell) with the east or south neighbour."""
    edges = []
    for r, c in itertools.product(range(size), repeat=2):
        if c + 1 < size:
            edges.append((r * size + c, r * size + c + 1))
        if r + 1 < size:
            edges.append((r * size + c, (r + 1) * size + c))
    return edges


def spanning_trees(size: int) -> list[frozenset[tuple[int, int]]]:
    """Every spanning tree of the grid (edge subsets with cells - 1 edges and no cycle)."""
    edges, cells = grid_edges(size), size * size
    trees = []
    for subset in itertools.combinations(edges, cells - 1):
        parent = list(range(cells))
        acyclic = True
        for a, b in subset:
            ra, rb = _root(parent, a), _root(parent, b)
            if ra == rb:
                acyclic = False
                break
            parent[ra] = rb
        if acyclic:
            trees.append(frozenset(subset))
    return trees


def _root(parent: list[int], cell: int) -> int:
    while parent[cell] != cell:
        cell = parent[cell]
    return cell


def tree_of(maze: NDArray[np.uint8]) -> frozenset[tuple[int, int]]:
    """The edge set of a maze (open east and south edges)."""
    size = maze.shape[0]
    edges = set()
    for r, c in itertools.product(range(size), repeat=2):
        if maze[r, c] & EAST:
            edges.add((r * size + c, r * size + c + 1))
        if maze[r, c] & SOUTH:
            edges.add((r * size + c, (r + 1) * size + c))
    return frozenset(edges)


def chi_square_p(counts: NDArray[np.int64]) -> float:
    """p-value of counts against equal probabilities (chi-square with k - 1 degrees of freedom,
    through the Wilson-Hilferty normal approximation, accurate far into the tail for k ~ 200)."""
    k, total = len(counts), counts.sum()
    expected = total / k
    statistic = float(((counts - expected) ** 2 / expected).sum())
    dof = k - 1
    z = ((statistic / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


def tree_counts(
    mazes: NDArray[np.uint8], trees: list[frozenset[tuple[int, int]]]
) -> NDArray[np.int64]:
    index = {tree: i for i, tree in enumerate(trees)}
    counts = np.zeros(len(trees), np.int64)
    for maze in mazes:
        counts[index[tree_of(maze)]] += 1  # a KeyError would be a maze that is not a tree
    return counts


def test_the_3x3_grid_has_192_spanning_trees() -> None:
    assert len(spanning_trees(SIZE)) == 192  # Kirchhoff's matrix-tree theorem gives 192


def test_the_batched_sampler_draws_every_spanning_tree_equally_often() -> None:
    trees = spanning_trees(SIZE)
    rng = np.random.default_rng(20240529)
    stream = WilsonStream(SIZE, SIZE, slots=512)
    pieces = []
    for k in itertools.islice(itertools.cycle((1, 7, 64, 300, 1000)), 70):  # as resets take them
        pieces.append(stream.take(k, rng))
    mazes = np.concatenate(pieces).reshape(-1, SIZE, SIZE)
    assert len(mazes) >= 100 * len(trees)
    counts = tree_counts(mazes, trees)
    assert counts.min() > 0
    assert chi_square_p(counts) > P_FAIL, counts


def test_the_same_test_rejects_a_sampler_that_is_not_uniform() -> None:
    trees = spanning_trees(SIZE)
    rng = np.random.default_rng(7)
    biased: Callable[[], NDArray[np.uint8]] = lambda: backtracker_maze(SIZE, SIZE, rng)  # noqa: E731
    mazes = np.stack([biased() for _ in range(100 * len(trees))])
    assert chi_square_p(tree_counts(mazes, trees)) < P_FAIL


def test_sampled_mazes_are_perfect_at_every_size() -> None:
    rng = np.random.default_rng(3)
    for width, height in ((5, 5), (7, 7), (12, 5), (17, 17), (41, 41)):
        mazes = sample_mazes(40, width, height, rng)
        assert mazes.shape == (40, height, width)
        assert all(is_perfect_maze(maze) for maze in mazes), (width, height)
