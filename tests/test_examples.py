"""Every script in examples/ runs to completion (they are documentation that must not rot)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))
#: Arguments for examples whose full run takes minutes (their short settings).
SHORT_RUN = {
    "cooperation_study.py": ["--quick", "--executor", "inline"],
    "custom_policy.py": ["--seeds", "0-2"],
    "custom_wrapper.py": ["--steps", "60"],
    "train_agimaze_ppo.py": ["--quick"],
    "train_escape_ppo.py": ["--quick", "--no-levels"],
}


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 5
    names = {path.name for path in EXAMPLES}
    # issue 10's list: a quickstart per environment, a custom policy, a custom wrapper
    assert {
        "escape_quickstart.py",
        "agimaze_quickstart.py",
        "custom_policy.py",
        "custom_wrapper.py",
    } <= names


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), *SHORT_RUN.get(script.name, [])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), "an example should show what it did"


def _run(script: str, *args: str) -> str:
    path = Path(__file__).resolve().parent.parent / "examples" / script
    done = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_custom_policy_plays_beside_the_baselines_in_one_table(tmp_path: Path) -> None:
    out = tmp_path / "run"
    text = _run("custom_policy.py", "--seeds", "0-1", "--out", str(out))
    rows = [line for line in text.splitlines() if line.startswith("| v1")]
    assert [row.split(" | ")[2] for row in rows] == ["no U-turn (ours)", "random", "explorer"]
    assert (out / "games.sqlite").is_file() and (out / "results.csv").is_file()
    from maze_envs.verify import verify_journal

    reports = verify_journal(out / "games.sqlite")
    assert len(reports) == 6 and all(report.ok for report in reports)


def _example_module(script: str) -> Any:
    path = Path(__file__).resolve().parent.parent / "examples" / script
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_custom_wrappers_keep_observations_in_their_spaces_and_shape_rewards() -> None:
    import gymnasium as gym
    import numpy as np

    from maze_envs import maze_escape_v1
    from maze_envs.escape.types import Action

    example = _example_module("custom_wrapper.py")
    path = "TRAINING/S0-keys/STAGE-01/0000.json"
    env = example.StepCost(example.FormalVector(gym.make("maze_envs/AgiMaze-v0", path=path)), 0.5)
    bare = gym.make("maze_envs/AgiMaze-v0", path=path)
    obs, _ = env.reset(seed=0)
    bare.reset(seed=0)
    assert env.observation_space.contains(obs)
    for action in [0, 1, 2, 3] * 5:
        obs, reward, *_ = env.step(action)
        raw, raw_reward, *_ = bare.step(action)
        assert env.observation_space.contains(obs)
        assert reward == float(raw_reward) - 0.5
        assert obs[1 + int(raw["formal"]["observe"])] == 1.0  # the one-hot of the tile seen
    env.close()
    bare.close()

    escape = example.EdgesAndExit(maze_escape_v1.parallel_env(width=7, height=7), scale=1.0)
    plain = maze_escape_v1.parallel_env(width=7, height=7)
    observations, infos = escape.reset(seed=3)
    plain.reset(seed=3)
    before = {a: info["path_distance_to_exit"] for a, info in infos.items()}
    for _ in range(30):
        if not escape.agents:
            break
        actions = {}
        for agent, obs in observations.items():
            assert escape.observation_space(agent).contains(obs)
            moves = [d for d, kind in zip("NESW", obs[:4], strict=True) if kind == 0]
            actions[agent] = Action(move=moves[0] if moves else "STAY").to_space(escape.config)
        previous = observations
        observations, rewards, _, _, infos = escape.step(actions)
        _, plain_rewards, *_ = plain.step(actions)
        for agent, info in infos.items():
            after = info["path_distance_to_exit"]
            assert np.isclose(rewards[agent], plain_rewards[agent] + before[agent] - after)
            before[agent] = after
        assert all(observations[a] is not previous.get(a) for a in observations)  # fresh arrays
    escape.close()
    plain.close()
