"""Stable-Baselines3 PPO learns AGI Maze through the numeric wrapper, and the example runs.

The PPO run is short (20,000 timesteps on ``TUTORIAL/STAGE-07``: seconds on a laptop core, well
under 90 s on two slow ones) with fixed seeds and one torch thread. Its greedy policy is scored
with RHAE70 exactly as the uniform random policy is: same wrapper, same budget, same reset
seeds, :func:`maze_envs.agimaze.scoring.summarize`. On this labyrinth the random policy solves
about a third of its episodes for an RHAE70 near 0.03; the trained policy solves it within the
RHAE70 reference (seeds 0-4 all reach 1.0 when this test was written).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("stable_baselines3", reason="needs pip install 'maze-envs[rl]'")
pytest.importorskip("torch", reason="needs pip install 'maze-envs[rl]'")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_agimaze_ppo.py"
LABYRINTH = "TUTORIAL/STAGE-07/0000.json"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_agimaze_ppo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_ppo_greedy_policy_beats_the_random_policy_rhae70() -> None:
    ex = example()
    # the example's default run: the figures it prints are the README's
    model, curve, _ = ex.train(LABYRINTH, steps=20_000, seed=0)
    n_actions = model.action_space.n
    trained = ex.evaluate(ex.greedy(model), LABYRINTH, episodes=ex.EPISODES, seed=0)
    random = ex.evaluate(
        ex.random_policy(n_actions), LABYRINTH, episodes=ex.RANDOM_EPISODES, seed=0
    )
    assert trained.mean_rhae > random.mean_rhae, (trained, random)
    assert trained.solved == trained.count  # and it is not a fluke of one lucky episode
    assert curve.rhae, "training episodes were recorded for the learning curve"


def test_training_is_deterministic_under_fixed_seeds() -> None:
    ex = example()
    first = ex.train("TUTORIAL/STAGE-01/0000.json", steps=1_024, seed=3)[1]
    second = ex.train("TUTORIAL/STAGE-01/0000.json", steps=1_024, seed=3)[1]
    assert first.timesteps == second.timesteps and first.rhae == second.rhae


def test_example_shows_learning_and_writes_the_curve(tmp_path: Path) -> None:
    out = tmp_path / "curve.png"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = {
        line.split()[0] + " " + line.split()[1]: line
        for line in done.stdout.splitlines()
        if line.startswith("  ")
    }
    assert {"random policy", "PPO before", "PPO after"} <= set(lines)
    after = float(lines["PPO after"].rsplit(maxsplit=1)[1])
    rand = float(lines["random policy"].rsplit(maxsplit=1)[1])
    assert after > rand, done.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
