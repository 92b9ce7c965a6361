"""Your own wrappers on our environments, written on Gymnasium's and PettingZoo's base classes.

Researchers tweak observations and rewards all the time; our environments are ordinary
Gymnasium and PettingZoo environments, so the usual base classes just work:

* AGI Maze (Gymnasium): ``FormalVector``, a ``gym.ObservationWrapper`` that turns the formal
  observation and the inventory into one 0/1 vector (a ``Box``), and ``StepCost``, a
  ``gym.RewardWrapper`` that charges every step. The wrapped env then runs in a
  ``gymnasium.vector.SyncVectorEnv`` like any other.
* Maze Escape (PettingZoo): ``EdgesAndExit``, a ``BaseParallelWrapper`` that keeps only the four
  edges and the exit flag of each agent's observation (a ``MultiDiscrete``), and adds a
  potential-based shaping reward from the path distance to the exit that ``infos`` report.

Every observation the wrappers return is checked against the space they declare
(``space.contains``), as a wrapper of your own should be.

Run: ``python examples/custom_wrapper.py [--steps 200]``
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo.utils.wrappers import BaseParallelWrapper

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs import maze_escape_v1
from maze_envs.escape.types import Action

# --- AGI Maze: an observation and a reward wrapper (Gymnasium) ---------------------------------

ITEMS = ("key", "treasure", "exit_key", "boat", "flashlight")


class FormalVector(gym.ObservationWrapper[NDArray[np.float32], Any, Any]):
    """The formal observation and the inventory as one vector of 0s and 1s.

    Layout: the status bit, a one-hot of the tile observed, the event bits, then one bit per
    item held (grenades: held or not). The narration text is dropped.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        formal = env.observation_space["formal"]  # type: ignore[index]
        self.kinds = int(formal["observe"].n)
        self.events = int(formal["events"].n)
        self.size = 1 + self.kinds + self.events + len(ITEMS) + 1
        self.observation_space = spaces.Box(0.0, 1.0, (self.size,), np.float32)

    def observation(self, observation: Any) -> NDArray[np.float32]:
        formal, inventory = observation["formal"], observation["inventory"]
        vector = np.zeros(self.size, np.float32)
        vector[0] = float(formal["status"])
        vector[1 + int(formal["observe"])] = 1.0
        start = 1 + self.kinds
        vector[start : start + self.events] = formal["events"]
        held = [float(inventory[item] > 0) for item in ITEMS] + [float(inventory["grenades"] > 0)]
        vector[start + self.events :] = held
        return vector


class StepCost(gym.RewardWrapper[Any, Any]):
    """Subtracts ``cost`` from every step's reward (a push towards short solutions)."""

    def __init__(self, env: gym.Env[Any, Any], cost: float = 0.01) -> None:
        super().__init__(env)
        if cost < 0:
            raise ValueError(f"cost must be >= 0, got {cost}")
        self.cost = cost

    def reward(self, reward: Any) -> float:
        return float(reward) - self.cost


def agimaze_demo(steps: int) -> None:
    path = "TRAINING/S0-keys/STAGE-01/0000.json"
    env = StepCost(FormalVector(gym.make("maze_envs/AgiMaze-v0", path=path)))
    obs, info = env.reset(seed=0)
    env.action_space.seed(0)
    print(f"AGI Maze {path}: observation space {env.observation_space}")
    total, checked = 0.0, 1
    assert env.observation_space.contains(obs)
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        if not env.observation_space.contains(obs):
            raise RuntimeError(f"an observation outside the declared space: {obs}")
        total, checked = total + float(reward), checked + 1
        if terminated or truncated:
            break
    print(f"  random actions: {info['steps']} steps, solved {info['solved']}, return {total:.2f}")
    print(f"  {checked} observations, every one inside the declared Box")
    env.close()

    def make() -> gym.Env[Any, Any]:
        return StepCost(FormalVector(gym.make("maze_envs/AgiMaze-v0", path=path)))

    vector = gym.vector.SyncVectorEnv([make, make])
    batch, _ = vector.reset(seed=[1, 2])
    vector.action_space.seed(1)
    batch, rewards, *_ = vector.step(vector.action_space.sample())
    print(f"  SyncVectorEnv of 2: observations {batch.shape} {batch.dtype}, rewards {rewards}")
    vector.close()


# --- Maze Escape: an observation and reward wrapper (PettingZoo) -------------------------------


class EdgesAndExit(BaseParallelWrapper[str, Any, Any]):
    """Each agent sees only its four edges (0 open, 1 wall, 2 monolith) and the exit flag; the
    reward gets a potential-based shaping term, ``scale`` x (distance before - distance after),
    from the path distance to the exit in ``infos`` (a training signal, not an observation)."""

    def __init__(self, env: Any, scale: float = 0.1) -> None:
        super().__init__(env)
        self.scale = scale
        self._space = spaces.MultiDiscrete([3, 3, 3, 3, 2])
        self._distance: dict[str, int] = {}

    def observation_space(self, agent: str) -> spaces.MultiDiscrete:
        return self._space

    def _observe(self, observation: dict[str, Any]) -> NDArray[np.int64]:
        return np.array([*observation["edges"], observation["on_exit"]], dtype=np.int64)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._distance = {a: info["path_distance_to_exit"] for a, info in infos.items()}
        return {a: self._observe(o) for a, o in observations.items()}, infos

    def step(self, actions: dict[str, Any]) -> Any:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        shaped = dict(rewards)
        for agent, info in infos.items():
            distance = info["path_distance_to_exit"]
            shaped[agent] += self.scale * (self._distance.get(agent, distance) - distance)
            self._distance[agent] = distance
        wrapped = {a: self._observe(o) for a, o in observations.items()}
        return wrapped, shaped, terminations, truncations, infos


def escape_demo(steps: int) -> None:
    env = EdgesAndExit(maze_escape_v1.parallel_env(preset="navigator", width=7, height=7))
    observations, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    print(f"Maze Escape 7x7: observation space per agent {env.observation_space('A')}")
    returns = dict.fromkeys(env.possible_agents, 0.0)
    checked = 0
    for _ in range(steps):
        if not env.agents:
            break
        actions = {}
        for agent, obs in observations.items():
            if not env.observation_space(agent).contains(obs):
                raise RuntimeError(f"an observation outside the declared space: {obs}")
            checked += 1
            open_moves = [d for d, kind in zip("NESW", obs[:4], strict=True) if kind == 0]
            move = "STAY" if obs[4] or not open_moves else str(rng.choice(open_moves))
            actions[agent] = Action(move=move).to_space(env.unwrapped.config)
        observations, rewards, *_ = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    print(
        f"  random open moves for {steps} turns: shaped returns",
        {a: round(r, 2) for a, r in returns.items()},
    )
    print(f"  outcome: {env.unwrapped.outcome()['first_visit_turn']} (first exit visits)")
    print(f"  {checked} observations, every one inside the declared MultiDiscrete")
    env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="custom wrappers on our environments")
    parser.add_argument("--steps", type=int, default=200, help="steps per demo (default 200)")
    args = parser.parse_args(argv)
    agimaze_demo(args.steps)
    escape_demo(args.steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
