"""Your own Maze Escape policy in ten lines, benchmarked beside two built-in baselines.

``NoUTurn`` is a random walk that never turns back unless it stands in a dead end. It subclasses
:class:`~maze_envs.policies.PolicyBase` and plays from the typed observation only; its seed (from
``reset``) is its only randomness. The benchmark runner (``maze_envs.bench``) plays it by import
path beside the built-in ``random`` walk and the Trémaux ``explorer`` on the same mazes (same
seeds), journals every game, and prints the results table with intervals. The same policy runs
from the command line too, when its module is importable::

    maze-envs bench --env escape --size 9 --policy my_module:NoUTurn --policy explorer

Run: ``python examples/custom_policy.py [--seeds 0-19] [--size 9] [--out DIR]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from maze_envs.bench.report import escape_table
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.escape.types import Action, Observation
from maze_envs.policies import EscapeEpisode, PolicyBase

BACK = {"N": "S", "S": "N", "E": "W", "W": "E"}


class NoUTurn(PolicyBase[EscapeEpisode, Observation, Action]):
    """A random walk that turns back only in dead ends; stays on the exit once there."""

    def reset(self, agent: str, seed: int | None, episode: EscapeEpisode) -> None:
        super().reset(agent, seed, episode)
        self.rng, self.came = np.random.default_rng(seed), "STAY"

    def act(self, observation: Observation) -> Action:
        if observation.on_exit:
            return Action(move="STAY")
        moves = [d for d, kind in observation.edges.items() if kind == "open"]
        ahead = [d for d in moves if d != BACK.get(self.came)] or moves
        self.came = ahead[int(self.rng.integers(len(ahead)))] if ahead else "STAY"
        return Action(move=self.came)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a custom policy beside the baselines")
    parser.add_argument("--seeds", default="0-19", help="mazes to play (default 0-19)")
    parser.add_argument("--size", type=int, default=9, help="maze width and height (default 9)")
    parser.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    args = parser.parse_args(argv)
    # The runner builds policies by import path: this script's module, whatever it is called.
    here = "__main__" if __name__ == "__main__" else __name__
    experiment = Experiment.model_validate(
        {
            "name": "custom policy",
            "seeds": args.seeds,
            "escape": [
                {
                    "preset": "navigator",
                    "sizes": [args.size],
                    "max_turns": 400,
                    "policies": [
                        {"policy": f"{here}:NoUTurn", "label": "no U-turn (ours)"},
                        "random",
                        "explorer",
                    ],
                }
            ],
        }
    )
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp()) / "custom_policy"
    # inline: this process plays every game (a process pool needs an importable module)
    result = run_experiment(experiment, out, RunOptions(executor="inline", quiet=True, fresh=True))
    print(f"{len(result.rows)} games in {result.elapsed_s:.1f} s\n")
    print(escape_table(result.summary["escape"]))
    print(f"\njournal, CSV, JSON, summary and plots in {out}")
    return 0 if all(row["status"] == "ok" for row in result.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
