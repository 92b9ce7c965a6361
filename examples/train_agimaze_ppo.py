"""Train Stable-Baselines3 PPO on an AGI Maze labyrinth through the numeric wrapper.

The raw observation (narration text, nested dicts) is turned into numbers by
``wrappers.agimaze_numeric.AgiMazeNumericObservation`` with an egocentric local map built from
what the player experienced, flattened for ``MlpPolicy``. The script prints the success rate
(with its 95 % Wilson interval) and RHAE70 of the uniform random policy over
``--random-episodes`` episodes (100: the random baseline the README quotes, from this script)
and of the untrained and the trained greedy PPO policy over ``--episodes`` (same labyrinth,
reset seeds from ``--seed`` on, same scoring), and writes a learning-curve PNG (RHAE70 and
success rate of the training episodes against timesteps) to ``--out``.

Run: ``.venv/bin/python examples/train_agimaze_ppo.py [--path P] [--steps N] [--seed S]
[--out FILE.png] [--quick]`` (needs ``pip install 'maze-envs[rl,render]'``; 10-40 s by
default, a few seconds with ``--quick``). A harder run: ``--path TRAINING/S0-keys/STAGE-01
--steps 60000`` (ten labyrinths, one drawn per reset).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.scoring import EpisodeResult, PackSummary, summarize
from wrappers.agimaze_numeric import AgiMazeNumericObservation

DEFAULT_PATH = "TUTORIAL/STAGE-07/0000.json"
QUICK_PATH = "TUTORIAL/STAGE-01/0000.json"
INSTALL_HINT = "this example needs Stable-Baselines3 and torch: pip install 'maze-envs[rl]'"
#: PPO settings used by the example, the test and the benchmark (small, fast, CPU).
PPO_SETTINGS: dict[str, Any] = {
    "n_steps": 128,
    "batch_size": 128,
    "n_epochs": 4,
    "learning_rate": 1e-3,
    "ent_coef": 0.01,
    "gamma": 0.99,
}
N_ENVS = 4
RADIUS = 2
#: Episodes of the random baseline (cheap: a tight interval) and of the greedy PPO policies.
RANDOM_EPISODES = 100
EPISODES = 20

Policy = Callable[[np.ndarray, np.random.Generator], int]


def make_env(path: str, radius: int = RADIUS) -> gym.Env[Any, Any]:
    """The training env: AgiMaze-v0 with the flat numeric observation and a local map."""
    return AgiMazeNumericObservation(
        gym.make("maze_envs/AgiMaze-v0", path=path), local_map=radius, flatten=True
    )


def evaluate(policy: Policy, path: str, episodes: int, seed: int) -> PackSummary:
    """Play ``episodes`` episodes (reset seeds ``seed``, ``seed + 1``, ...) and score them."""
    env = make_env(path)
    rng = np.random.default_rng(seed)
    results = []
    for episode in range(episodes):
        obs, info = env.reset(seed=seed + episode)
        while True:
            obs, _, terminated, truncated, info = env.step(policy(obs, rng))
            if terminated or truncated:
                break
        results.append(
            EpisodeResult(info["name"], info["steps"], info["max_steps"], info["solved"])
        )
    env.close()
    return summarize(results)


def random_policy(n_actions: int) -> Policy:
    """Uniform random actions (the calibration reference)."""
    return lambda obs, rng: int(rng.integers(n_actions))


def greedy(model: Any) -> Policy:
    """The model's deterministic (greedy) action."""
    return lambda obs, rng: int(model.predict(obs, deterministic=True)[0])


@dataclass
class Curve:
    """Training episodes as they end: timestep, RHAE70, solved."""

    timesteps: list[int] = field(default_factory=list)
    rhae: list[float] = field(default_factory=list)
    solved: list[bool] = field(default_factory=list)


def train(path: str, steps: int, seed: int) -> tuple[Any, Curve, float]:
    """PPO on ``path`` for ``steps`` timesteps: the model, the curve and the training seconds."""
    try:
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError as error:
        raise SystemExit(f"{INSTALL_HINT} ({error})") from None
    torch.set_num_threads(1)
    curve = Curve()

    class Record(BaseCallback):
        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
                if done and "rhae" in info:
                    curve.timesteps.append(self.num_timesteps)
                    curve.rhae.append(float(info["rhae"]))
                    curve.solved.append(bool(info["solved"]))
            return True

    venv = make_vec_env(lambda: make_env(path), n_envs=N_ENVS, seed=seed)
    model = PPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **PPO_SETTINGS)
    start = time.perf_counter()
    model.learn(total_timesteps=steps, callback=Record())
    seconds = time.perf_counter() - start
    venv.close()
    return model, curve, seconds


def untrained(path: str, seed: int) -> Any:
    """A PPO model before any training (same seed and settings)."""
    from stable_baselines3 import PPO

    return PPO("MlpPolicy", make_env(path), seed=seed, device="cpu", **PPO_SETTINGS)


def plot(curve: Curve, random_rhae: float, out: Path, title: str) -> None:
    """Rolling means of the training episodes' RHAE70 and success against timesteps."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(
            "the learning curve needs matplotlib: pip install 'maze-envs[render]'"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    window = max(1, len(curve.rhae) // 20)
    kernel = np.ones(window) / window
    x = np.array(curve.timesteps[window - 1 :])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, np.convolve(curve.rhae, kernel, mode="valid"), label="RHAE70 (training episodes)")
    ax.plot(x, np.convolve(curve.solved, kernel, mode="valid"), label="success rate", ls="--")
    ax.axhline(random_rhae, color="grey", ls=":", label="random policy RHAE70")
    ax.set(xlabel="timesteps", ylabel=f"rolling mean over {window} episodes", title=title)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def row(name: str, summary: PackSummary) -> str:
    from maze_envs.bench.stats import wilson_interval

    low, high = wilson_interval(summary.solved, summary.count)
    rate = summary.solved / summary.count
    interval = (
        f"{summary.solved}/{summary.count}, 95% CI {100 * (low or 0):.1f}-{100 * (high or 0):.1f}"
    )
    return f"  {name:<16} success {rate:6.1%} ({interval})   RHAE70 {summary.mean_rhae:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", help=f"labyrinth or pack directory (default {DEFAULT_PATH})")
    parser.add_argument("--steps", type=int, help="PPO timesteps (default 20000; quick 8000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--episodes", type=int, default=EPISODES, help="evaluation episodes of the PPO policies"
    )
    parser.add_argument(
        "--random-episodes",
        type=int,
        default=RANDOM_EPISODES,
        help="evaluation episodes of the random policy",
    )
    parser.add_argument("--out", type=Path, help="learning-curve PNG (default: a temp file)")
    parser.add_argument("--quick", action="store_true", help="a few seconds, for the tests")
    args = parser.parse_args(argv)
    path = args.path or (QUICK_PATH if args.quick else DEFAULT_PATH)
    steps = args.steps or (8_000 if args.quick else 20_000)
    if steps < 1 or args.episodes < 1 or args.random_episodes < 1:
        parser.error("--steps, --episodes and --random-episodes must be >= 1")
    out = args.out or Path(tempfile.gettempdir()) / "agimaze_ppo_learning_curve.png"
    n_actions = int(make_env(path).action_space.n)  # type: ignore[attr-defined]

    random_score = evaluate(random_policy(n_actions), path, args.random_episodes, args.seed)
    before = evaluate(greedy(untrained(path, args.seed)), path, args.episodes, args.seed)
    model, curve, seconds = train(path, steps, args.seed)
    after = evaluate(greedy(model), path, args.episodes, args.seed)
    plot(curve, random_score.mean_rhae, out, f"PPO on {path}")

    print(f"PPO on {path}: {steps} timesteps in {seconds:.1f} s ({steps / seconds:.0f} steps/s)")
    print(
        f"evaluation (reset seeds from {args.seed}): random policy over {args.random_episodes} "
        f"episodes, PPO over {args.episodes}:"
    )
    print(row("random policy", random_score))
    print(row("PPO before", before))
    print(row("PPO after", after))
    print(f"{len(curve.rhae)} training episodes; learning curve written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
