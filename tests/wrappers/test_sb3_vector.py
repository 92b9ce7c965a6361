"""EscapeSB3VecEnv: Stable-Baselines3's VecEnv over the batched engine (the rl extra)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="Stable-Baselines3 is in the rl extra")

from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecMonitor

from maze_envs import maze_escape_v1
from wrappers.sb3_vector import EscapeSB3VecEnv

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"width": 5, "height": 5, "max_turns": 12}


def test_the_vec_env_api_and_the_endings_sb3_reads() -> None:
    vec = maze_escape_v1.vector_env(num_games=4, **SMALL)
    venv = EscapeSB3VecEnv(vec)
    assert venv.num_envs == 12 and venv.observation_space == vec.single_observation_space
    venv.seed(3)
    observations = venv.reset()
    assert observations.shape == (12, vec.layout.width) and observations.flags.c_contiguous
    for turn in range(SMALL["max_turns"]):
        venv.step_async(np.full(12, 4))
        observations, rewards, dones, infos = venv.step_wait()
        assert len(infos) == 12 and rewards.shape == dones.shape == (12,)
        if turn < SMALL["max_turns"] - 1:
            assert not dones.any() and all(info == {} for info in infos)
    assert dones.all()
    for row, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True
        final = info["terminal_observation"]
        assert final.shape == (vec.layout.width,) and not np.shares_memory(final, observations)
        assert not np.array_equal(final, observations[row])  # the next game's first observation
    assert venv.get_attr("num_agents") == [3] * 12
    assert venv.env_is_wrapped(object) == [False] * 12


def test_the_same_seed_gives_the_same_first_observations() -> None:
    first = EscapeSB3VecEnv(maze_escape_v1.vector_env(num_games=8, **SMALL))
    second = EscapeSB3VecEnv(maze_escape_v1.vector_env(num_games=8, **SMALL))
    first.seed(5)
    second.seed(5)
    assert np.array_equal(first.reset(), second.reset())


def test_ppo_trains_on_it_with_symbols() -> None:
    vec = maze_escape_v1.vector_env(num_games=16, radio_symbols=2, **SMALL)
    venv = VecMonitor(EscapeSB3VecEnv(vec))
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=192, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=2 * 16 * venv.num_envs)
    actions, _ = model.predict(venv.reset(), deterministic=True)
    assert actions.shape == (venv.num_envs, 2)


def test_it_needs_a_same_step_vector_env() -> None:
    with pytest.raises(ValueError, match="autoreset_mode='SameStep'"):
        EscapeSB3VecEnv(maze_escape_v1.vector_env(num_games=2, autoreset_mode="NextStep"))
    with pytest.raises(ValueError, match=r"takes maze_escape_v1\.vector_env"):
        EscapeSB3VecEnv(maze_escape_v1.parallel_env())  # type: ignore[arg-type]


def test_without_stable_baselines3_the_error_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['stable_baselines3'] = None\n"
        "try:\n    import wrappers.sb3_vector\n"
        "except ImportError as error:\n    print(error)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "pip install 'maze-envs[rl]'" in result.stdout
