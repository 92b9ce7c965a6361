"""The training shaping of the batched Maze Escape: what it adds, and that it changes nothing
else."""

from __future__ import annotations

import numpy as np
import pytest

from maze_envs import maze_escape_v1
from wrappers.escape_vector_shaping import EscapeVectorShaping, exit_distances


@pytest.mark.parametrize(("width", "height"), [(7, 7), (5, 9), (11, 6)])
def test_exit_distances_are_the_scalar_envs_path_distances(width: int, height: int) -> None:
    vec = maze_escape_v1.vector_env(num_games=12, preset="full", width=width, height=height)
    vec.reset(seed=3)
    distances = exit_distances(vec.state.board, vec.state.exit_cell, width)
    for game in range(12):
        exported = vec.export(game)
        env = maze_escape_v1.parallel_env(config=exported.config, generator=exported.generator)
        env.reset(seed=0)
        truth = env.ground_truth()["shortest_path_to_exit"]
        starts = vec.state.starts[game]
        assert [int(distances[game, cell]) for cell in starts] == list(truth.values())
        assert distances[game].min() == 0 and (distances[game] >= 0).all()  # all reachable


def test_shaping_adds_progress_and_novelty_and_changes_nothing_else() -> None:
    games, progress, novelty, step_cost = 16, 0.1, 0.05, 0.01
    config = {"preset": "full", "width": 6, "height": 6, "max_turns": 30}
    shaped = EscapeVectorShaping(
        maze_escape_v1.vector_env(num_games=games, copy=True, **config),
        progress,
        novelty,
        step_cost,
    )
    plain = maze_escape_v1.vector_env(num_games=games, copy=True, **config)
    first, _ = shaped.reset(seed=5)
    np.testing.assert_array_equal(first, plain.reset(seed=5)[0])
    rng = np.random.default_rng(0)
    state = plain.state
    n = plain.num_agents
    rows = np.arange(plain.num_envs)
    distance = exit_distances(state.board, state.exit_cell, 6)
    seen = np.zeros((plain.num_envs, 36), np.bool_)
    seen[rows, state.positions.reshape(-1)] = True
    ended_games = 0
    for _ in range(200):  # several games per slot: auto-resets included
        actions = rng.integers(0, 5, plain.num_envs)
        searching = ~state.visited.reshape(-1)
        before = distance[rows // n, state.positions.reshape(-1)]
        obs, rewards, terms, truncs, infos = shaped.step(actions)
        obs0, rewards0, terms0, truncs0, _ = plain.step(actions)
        np.testing.assert_array_equal(obs, obs0)
        np.testing.assert_array_equal(terms, terms0)
        np.testing.assert_array_equal(truncs, truncs0)
        np.testing.assert_allclose(rewards - infos["shaping"], rewards0, atol=1e-6)
        cells = state.positions.reshape(-1)
        ended = np.repeat((terms | truncs).reshape(-1, n)[:, 0], n)
        expected = np.where(
            ended,
            np.where(terms, progress * before, 0.0),
            progress * (before - distance[rows // n, cells]) + novelty * ~seen[rows, cells],
        )
        expected -= step_cost
        np.testing.assert_allclose(infos["shaping"], expected * searching, atol=1e-6)
        seen[rows, cells] = True
        if ended.any():
            ended_games += int(ended.sum()) // n
            new_games = np.flatnonzero(ended[::n])
            distance[new_games] = exit_distances(
                state.board[new_games], state.exit_cell[new_games], 6
            )
            seen[ended] = False
            seen[rows[ended], cells[ended]] = True
    assert ended_games >= games  # every slot played more than one game


def test_it_needs_the_batched_env_with_same_step_resets() -> None:
    with pytest.raises(ValueError, match="autoreset_mode=SAME_STEP"):
        EscapeVectorShaping(
            maze_escape_v1.vector_env(num_games=2, autoreset_mode="NextStep"), 0.1, 0.0
        )
