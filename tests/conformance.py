"""A seeded rollout of any environment of the table, as a list of per-turn fingerprints.

Used by ``tests/test_conformance.py`` in this process and, through ``python -m
tests.conformance ENV_ID SEED TURNS``, in fresh processes (each with its own ``PYTHONHASHSEED``),
so the same seed and actions are seen to give the same game across processes too.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import numpy as np
import orjson

from maze_envs._registration import EnvEntry, find_entry

#: Small instances of each kind (AGI Maze: the single labyrinth, the set): what the conformance
#: tests build. A new version of an existing kind needs nothing here.
SMALL: dict[tuple[str, bool], dict[str, Any]] = {
    ("escape", False): {"preset": "full", "width": 6, "height": 5, "max_turns": 40},
    ("agimaze", False): {"path": "TUTORIAL/STAGE-01/0000.json"},
    ("agimaze", True): {"paths": ["TUTORIAL/STAGE-01/0000.json", "TUTORIAL/STAGE-02/0000.json"]},
}


def small_kwargs(env: EnvEntry) -> dict[str, Any]:
    """The keyword arguments of a small instance of ``env``."""
    return dict(SMALL[(env.kind, env.labyrinth_set)])


def plain(value: Any) -> Any:
    """``value`` as JSON data (arrays as lists, numpy scalars as numbers), keys sorted later."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return value.hex()
    return value


def fingerprint(*parts: Any) -> str:
    """SHA-256 of the canonical JSON of ``parts``."""
    data = orjson.dumps(plain(parts), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()


def rollout(env_id: str, seed: int, turns: int) -> list[str]:
    """Reset with ``seed`` and play ``turns`` turns of actions drawn from a fixed generator (the
    same actions for every run); per turn the fingerprint of the observations, rewards, flags and
    the state digest."""
    entry = find_entry(env_id)
    env = entry.make(**small_kwargs(entry))
    rng = np.random.default_rng(20240611)
    try:
        if entry.api == "pettingzoo":
            obs, _ = env.reset(seed=seed)
            prints = [fingerprint(obs, env.state_digest())]
            while env.agents and len(prints) <= turns:
                actions = {}
                for agent in env.agents:
                    space = env.action_space(agent)
                    space.seed(int(rng.integers(2**31)))
                    actions[agent] = space.sample()
                obs, rewards, terms, truncs, _ = env.step(actions)
                prints.append(fingerprint(obs, rewards, terms, truncs, env.state_digest()))
            return prints
        obs, _ = env.reset(seed=seed)
        prints = [fingerprint(obs, env.state_digest())]
        done = False
        while not done and len(prints) <= turns:
            action = int(rng.integers(int(env.action_space.n)))
            obs, reward, terminated, truncated, _ = env.step(action)
            prints.append(fingerprint(obs, reward, terminated, truncated, env.state_digest()))
            done = bool(terminated or truncated)
        return prints
    finally:
        env.close()


if __name__ == "__main__":
    env_id, seed, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sys.stdout.write(orjson.dumps(rollout(env_id, seed, turns)).decode() + "\n")
