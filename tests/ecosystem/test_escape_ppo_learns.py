"""Shared-parameter PPO on the batched Maze Escape learns, from a seed, reproducibly
(``examples/train_escape_ppo.py``, the command that trains the shipped ``learned:escape-ppo``).

The runs are seconds long (one torch thread, fixed seeds) and nothing is timed. The full goals
(team success, finish / fastest, 9x9, agent-steps, wall time) are measured by the command itself
and reported in docs/policies.md, not asserted here.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="needs pip install 'maze-envs[rl]'")
pytest.importorskip("torch", reason="needs pip install 'maze-envs[rl]'")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_escape_ppo.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_escape_ppo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def test_a_short_run_beats_the_untrained_policy_by_more_than_chance(example: ModuleType) -> None:
    """The greedy policy's share of agents that reach the exit, before and after training, on
    the same n = 200 held-out games of the batched engine.

    Why the margin cannot be chance: each share is a mean over 200 independent games of a value
    in [0, 1] (the share of a game's agents out). If training had not changed how well the
    policy plays, both shares would estimate the same expectation, and by Hoeffding's inequality
    each one lies more than t from it with probability at most exp(-2 n t^2); a difference of
    at least 2t then has probability at most 2 exp(-2 n t^2). With the margin 2t = 0.3 that is
    2 exp(-9) < 3e-4. The run itself is deterministic (fixed seeds), so the test cannot flake.
    """
    recipe = replace(example.QUICK, agent_steps=98_304, eval_games=200, eval_every=10**9)
    _, curve, _ = example.train(recipe, seed=0, report=lambda line: None)
    before, after = curve.agents_out[0], curve.agents_out[-1]
    n, margin = recipe.eval_games, 0.3
    assert 2 * math.exp(-2 * n * (margin / 2) ** 2) < 3e-4
    assert curve.agent_steps[0] == 0 and curve.agent_steps[-1] >= recipe.agent_steps
    assert after - before >= margin, (before, after)


def test_the_same_seed_trains_the_same_weights(example: ModuleType, tmp_path: Path) -> None:
    """What makes the shipped weights reproducible from their seed: two runs, same weights."""
    from maze_envs.policies.learned import network_from_sb3

    recipe = replace(example.QUICK, agent_steps=6_144, eval_games=8, eval_every=10**9)
    runs = [example.train(recipe, seed=3, report=lambda line: None)[0] for _ in range(2)]
    first, second = (network_from_sb3(model.policy) for model in runs)
    for (w1, b1), (w2, b2) in zip(first.layers, second.layers, strict=True):
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(b1, b2)
    other = network_from_sb3(example.train(recipe, seed=4, report=lambda line: None)[0].policy)
    assert not np.array_equal(other.layers[0][0], first.layers[0][0])


def test_the_command_writes_weights_that_play_as_a_policy(
    example: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from maze_envs.escape.config import Config
    from maze_envs.policies import make_policy

    assert example.main(["--quick", "--out", str(tmp_path), "--no-levels"]) == 0
    printed = capsys.readouterr().out
    assert "agent-steps" in printed and "identical to the shipped" in printed
    for name in ("escape-ppo.npz", "model.zip", "curve.json", "curve.png"):
        assert (tmp_path / name).is_file(), name
    for spec in (f"learned:{tmp_path / 'escape-ppo.npz'}", f"sb3:{tmp_path / 'model.zip'}"):
        policy = make_policy(spec)
        assert policy.settings is not None and policy.settings.training["seed"] == 0
        policy.check_config(Config.model_validate(policy.settings.config))
