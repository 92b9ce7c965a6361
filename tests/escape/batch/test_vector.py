"""maze_escape_v1.vector_env: the Gymnasium VectorEnv of N games (spaces, buffers, automatic
reset, bad input, determinism, export into a journal)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from maze_envs import maze_escape_v1
from maze_envs.escape.batch.vector import AutoresetMode, MazeEscapeVectorEnv
from maze_envs.verify import verify_journal
from wrappers.escape_numeric import EscapeNumericObservation

SMALL: dict[str, Any] = {"width": 6, "height": 6, "max_turns": 20}
ROOT = Path(__file__).resolve().parents[3]


def played(vec: MazeEscapeVectorEnv, seed: int, steps: int) -> str:
    """SHA-256 of every observation, reward and ending of ``steps`` random steps."""
    digest = hashlib.sha256()
    observations, _ = vec.reset(seed=seed)
    digest.update(np.ascontiguousarray(observations).tobytes())
    rng = np.random.default_rng(seed)
    symbols = vec.config.radio_symbols
    for _ in range(steps):
        actions = rng.integers(0, 5, vec.num_envs)
        if symbols:
            actions = np.stack([actions, rng.integers(0, symbols + 1, vec.num_envs)], axis=1)
        observations, rewards, terminations, truncations, _ = vec.step(actions)
        for array in (observations, rewards, terminations, truncations):
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize(
    "config",
    [
        {"preset": "sparse", "width": 7, "height": 7},
        {"preset": "navigator", "width": 9, "height": 8, "num_agents": 2},
        {"preset": "shared_frame", "width": 5, "height": 5, "num_agents": 4},
        {"preset": "full", "width": 17, "height": 17, "radio_symbols": 3},
        {"preset": "full", "width": 5, "height": 6, "num_agents": 1, "meeting_alert": False},
    ],
)
def test_spaces_are_the_numeric_wrappers_and_observations_lie_in_them(
    config: dict[str, Any],
) -> None:
    vec = maze_escape_v1.vector_env(num_games=5, **config)
    scalar = EscapeNumericObservation(maze_escape_v1.parallel_env(**config), flatten=True)
    assert isinstance(vec, VectorEnv)
    assert vec.single_observation_space == scalar.observation_space("A")
    n = vec.config.num_agents
    assert vec.num_envs == 5 * n
    assert vec.observation_space.shape == (5 * n, scalar.observation_space("A").shape[0])
    symbols = vec.config.radio_symbols
    expected = spaces.MultiDiscrete([5, symbols + 1]) if symbols else spaces.Discrete(5)
    assert vec.single_action_space == expected
    observations, _ = vec.reset(seed=1)
    assert observations.dtype == np.float32 and vec.observation_space.contains(observations)
    vec.action_space.seed(0)
    for _ in range(30):
        observations, rewards, terminations, truncations, _ = vec.step(vec.action_space.sample())
        assert vec.observation_space.contains(observations)
        assert rewards.shape == terminations.shape == truncations.shape == (vec.num_envs,)
        assert rewards.dtype == np.float32 and terminations.dtype == np.bool_


def test_a_vector_env_as_gymnasium_expects() -> None:
    vec = maze_escape_v1.vector_env(num_games=3, **SMALL)
    assert vec.unwrapped is vec and vec.render_mode is None
    assert isinstance(vec.metadata["autoreset_mode"], AutoresetMode)
    _, infos = vec.reset(seed=4)
    assert isinstance(infos, dict) and vec.np_random_seed == 4
    vec.action_space.seed(4)
    for _ in range(3):
        result = vec.step(vec.action_space.sample())
        assert len(result) == 5 and isinstance(result[4], dict)
    again, _ = vec.reset()  # no seed: the next games from the same generator
    assert vec.observation_space.contains(again)
    vec.close()
    assert vec.closed


def test_rows_are_the_agents_of_every_game() -> None:
    vec = maze_escape_v1.vector_env(num_games=4, num_agents=3, **SMALL)
    assert [vec.game_of(row) for row in (0, 1, 2, 3, 11)] == [
        (0, "A"),
        (0, "B"),
        (0, "C"),
        (1, "A"),
        (3, "C"),
    ]
    vec.reset(seed=2)
    # the agents of one game end together, a game's rows at once
    for _ in range(SMALL["max_turns"]):
        _, _, terminations, truncations, _ = vec.step(np.full(vec.num_envs, 4))
    assert truncations.all() and not terminations.any()


def test_buffers_are_allocated_once_unless_copies_are_asked_for() -> None:
    vec = maze_escape_v1.vector_env(num_games=3, **SMALL)
    first, _ = vec.reset(seed=0)
    at_reset = np.array(first)
    results = vec.step(np.zeros(vec.num_envs, np.int64))
    again = vec.step(np.ones(vec.num_envs, np.int64))
    for before, after in zip(results[:4], again[:4], strict=True):
        assert after is before  # the same buffers, written in place
    assert np.shares_memory(first, again[0])
    fresh = maze_escape_v1.vector_env(num_games=3, copy=True, **SMALL)
    a, _ = fresh.reset(seed=0)
    b = fresh.step(np.zeros(fresh.num_envs, np.int64))[0]
    assert not np.shares_memory(a, b) and a.flags.c_contiguous and b.flags.c_contiguous
    assert np.array_equal(a, at_reset)


def test_same_step_autoreset_returns_the_next_game_and_the_last_observation() -> None:
    vec = maze_escape_v1.vector_env(num_games=2, **SMALL)
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    vec.reset(seed=5)
    for _ in range(SMALL["max_turns"] - 1):
        observations, *_, infos = vec.step(np.full(vec.num_envs, 4))
        assert "final_obs" not in infos
    last = np.array(observations)
    observations, _, _, truncations, infos = vec.step(np.full(vec.num_envs, 4))
    assert truncations.all() and infos["_final_obs"].all()
    assert infos["final_obs"].dtype == object  # Gymnasium's form: a row's array, or None
    final = np.stack(infos["final_obs"])
    turn = vec.layout.start["time"]
    same = np.ones(vec.layout.width, np.bool_)
    same[vec.layout.span("time")] = False  # everyone stayed: only the time moved on
    assert np.array_equal(final[:, same], last[:, same])
    assert (final[:, turn] == 1.0).all() and (observations[:, turn] == 0.0).all()
    assert vec.state.turn.tolist() == [0, 0]


def test_next_step_autoreset_starts_the_next_game_a_step_later() -> None:
    vec = maze_escape_v1.vector_env(num_games=2, autoreset_mode="NextStep", **SMALL)
    assert vec.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    vec.reset(seed=5)
    for _ in range(SMALL["max_turns"]):
        observations, rewards, _terminations, truncations, infos = vec.step(
            np.full(vec.num_envs, 4)
        )
    assert truncations.all() and "final_obs" not in infos
    turn = vec.layout.start["time"]
    assert (observations[:, turn] == 1.0).all()
    observations, rewards, _, truncations, _ = vec.step(np.zeros(vec.num_envs, np.int64))
    assert not truncations.any() and not rewards.any()
    assert (observations[:, turn] == 0.0).all() and vec.state.turn.tolist() == [0, 0]


def test_gymnasium_vector_wrappers_take_it() -> None:
    vec = RecordEpisodeStatistics(maze_escape_v1.vector_env(num_games=4, **SMALL))
    vec.reset(seed=0)
    episodes = 0
    for _ in range(2 * SMALL["max_turns"] + 1):
        *_, infos = vec.step(vec.action_space.sample())
        if "episode" in infos:
            episodes += int(infos["_episode"].sum())
            lengths = infos["episode"]["l"][infos["_episode"]]
            assert (lengths <= SMALL["max_turns"]).all()
    assert episodes >= 2 * vec.num_envs


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.full(9, 5), r"every move must be 0\.\.4 .*got 5 \(row 0\)"),
        (np.array([0, 1, 2, 3, 4, 0, 1, 2, -1]), r"got -1 \(row 8\)"),
        (np.zeros(8, np.int64), r"one move per row, shape \(9,\), got shape \(8,\)"),
        (np.zeros((9, 2), np.int64), r"got shape \(9, 2\)"),
        (np.zeros(9, np.float64), r"must be integers .*got dtype float64"),
        ([0.5] * 9, r"got dtype float64"),
        ("north", r"got dtype <U5"),
    ],
)
def test_bad_actions_are_one_clear_error_and_change_nothing(actions: Any, message: str) -> None:
    vec = maze_escape_v1.vector_env(num_games=3, **SMALL)
    observations, _ = vec.reset(seed=3)
    before = np.array(observations)
    with pytest.raises(ValueError, match=message):
        vec.step(actions)
    assert vec.state.turn.tolist() == [0, 0, 0]
    assert np.array_equal(observations, before)
    vec.step([0] * 9)  # a list of ints is fine


def test_bad_symbols_are_one_clear_error() -> None:
    vec = maze_escape_v1.vector_env(num_games=2, radio_symbols=3, **SMALL)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"\(move, symbol\) pairs, shape \(6, 2\)"):
        vec.step(np.zeros(6, np.int64))
    with pytest.raises(ValueError, match=r"every radio symbol must be 0\.\.3 .*got 4 \(row 1\)"):
        vec.step(np.array([[0, 0], [0, 4], [0, 0], [0, 0], [0, 0], [0, 0]]))
    vec.step(np.array([[0, 3]] * 6))


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"text": "hash"}, "text='hash'"),
        ({"notebook_mode": "splice"}, "notebook_mode='splice'"),
        ({"notebook_max_bytes": 100}, "notebook_max_bytes=100"),
        ({"radio_max_bytes": 20}, "radio_max_bytes=20"),
        ({"hash_buckets": 8}, "hash_buckets=8"),
    ],
)
def test_free_text_does_not_batch(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=rf"^{named}: .* do not batch; .*radio_symbols=K"):
        maze_escape_v1.vector_env(num_games=2, **options)


def test_other_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="maze_algorithm='backtracker' does not batch"):
        maze_escape_v1.vector_env(num_games=2, maze_algorithm="backtracker")
    with pytest.raises(ValueError, match="num_games must be an int >= 1"):
        maze_escape_v1.vector_env(num_games=0)
    with pytest.raises(ValueError, match="num_games must be an int >= 1"):
        maze_escape_v1.vector_env(num_games=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="autoreset_mode must be"):
        maze_escape_v1.vector_env(num_games=2, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match="width"):
        maze_escape_v1.vector_env(num_games=2, width=3)
    vec = maze_escape_v1.vector_env(num_games=2, **SMALL)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(vec.num_envs, np.int64))
    with pytest.raises(ValueError, match="reset takes no options"):
        vec.reset(seed=0, options={"reset_mask": np.ones(vec.num_envs, np.bool_)})
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"game must be 0\.\.1"):
        vec.export(2)


def test_the_same_seed_gives_the_same_games_and_another_seed_others() -> None:
    vec = maze_escape_v1.vector_env(num_games=16, preset="full", radio_symbols=2, **SMALL)
    assert played(vec, 11, 50) == played(vec, 11, 50)
    assert played(vec, 11, 50) != played(vec, 12, 50)


def test_the_same_seed_gives_the_same_games_in_a_fresh_process() -> None:
    code = (
        "from tests.escape.batch.test_vector import played; from maze_envs import maze_escape_v1;"
        "vec = maze_escape_v1.vector_env(num_games=16, preset='full', radio_symbols=2, width=6,"
        " height=6, max_turns=20); print(played(vec, 11, 50))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    vec = maze_escape_v1.vector_env(num_games=16, preset="full", radio_symbols=2, **SMALL)
    assert result.stdout.strip() == played(vec, 11, 50)


@pytest.mark.parametrize("symbols", [0, 3])
def test_an_exported_game_journals_and_verifies_in_the_scalar_env(
    tmp_path: Path, symbols: int
) -> None:
    """The batched engine keeps no journal; a game exported from it is replayed into one."""
    vec = maze_escape_v1.vector_env(num_games=3, preset="full", radio_symbols=symbols, **SMALL)
    vec.reset(seed=9)
    game = vec.export(1)
    rng = np.random.default_rng(1)
    moves = rng.integers(0, 5, (SMALL["max_turns"], vec.num_envs))
    sent = rng.integers(0, symbols + 1, (SMALL["max_turns"], vec.num_envs))
    path = tmp_path / "exported.sqlite"
    env = maze_escape_v1.parallel_env(config=game.config, generator=game.generator, journal=path)
    env.reset(seed=0)
    agents = env.possible_agents
    rewards = 0.0
    for turn in range(SMALL["max_turns"]):
        actions = np.stack([moves[turn], sent[turn]], axis=1) if symbols else moves[turn]
        _, batched, *_ = vec.step(actions)
        step = {}
        for i, agent in enumerate(agents):
            row = 3 + i  # game 1's rows
            step[agent] = {
                "move": int(moves[turn, row]),
                "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""},
                "radio": "",
                **({"radio_symbol": int(sent[turn, row])} if symbols else {}),
            }
        _, scalar, *_ = env.step(step)
        assert [scalar[a] for a in agents] == batched[3:6].tolist()
        rewards += sum(scalar.values())
        if not env.agents:
            break
    env.close()
    reports = verify_journal(path)
    assert [report.ok for report in reports] == [True], [r.describe() for r in reports]
