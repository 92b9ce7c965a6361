"""AgiMazeNumericObservation: spaces, fresh arrays, an honest local map, flat = dict, SB3."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.extensions import open_towards, tile_kind
from maze_envs.agimaze.spaces import EVENT_KINDS, OBSERVE_KINDS
from wrappers.agimaze_numeric import MAP_CHANNELS, AgiMazeNumericObservation, LocalMapMemory

PACKS = [
    "TUTORIAL/STAGE-07/0000.json",
    "TRAINING/S0-keys/STAGE-01",
    "TRAINING/S1-rivers/STAGE-03",
    "TRAINING/S2-pits/STAGE-03",
    "TRAINING/S3-full/STAGE-03",
    "EXTENDED/boat/STAGE-01-4x4",
    "EXTENDED/flashlight/STAGE-01-4x4",
    "EXTENDED/grenades/STAGE-01-4x4",
]
CH = {name: i for i, name in enumerate(MAP_CHANNELS)}


def n_actions(env: Any) -> int:
    return int(env.action_space.n)


def unwrapped(env: Any) -> Any:
    return env.unwrapped


def make(path: str, **options: Any) -> AgiMazeNumericObservation:
    return AgiMazeNumericObservation(gym.make("maze_envs/AgiMaze-v0", path=path), **options)


def play(env: gym.Env, seed: int, steps: int) -> list[tuple[Any, dict[str, Any]]]:
    """Uniform random play over several episodes; every (observation, info) returned."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    frames = [(obs, info)]
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(int(rng.integers(n_actions(env))))
        frames.append((obs, info))
        if terminated or truncated:
            obs, info = env.reset()
            frames.append((obs, info))
    return frames


def arrays(obs: Any) -> list[np.ndarray]:
    values = obs.values() if isinstance(obs, dict) else [obs]
    return [v for v in values if isinstance(v, np.ndarray)]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"local_map": 3},
        {"local_map": 2, "flatten": True},
        {"observe_encoding": "discrete", "local_map": 1},
    ],
)
@pytest.mark.parametrize("path", PACKS)
def test_every_observation_lies_in_its_space_and_is_fresh(path: str, options: dict) -> None:
    env = make(path, **options)
    frames = play(env, seed=3, steps=300)
    seen: set[int] = set()
    for obs, _ in frames:
        assert env.observation_space.contains(obs), obs
        for array in arrays(obs):
            assert id(array) not in seen and array.base is None  # its own, fresh buffer
            seen.add(id(array))
    # editing a returned observation changes nothing the env returns later
    obs, _ = env.reset(seed=5)
    for array in arrays(obs):
        array[...] = 1 if array.dtype != np.float32 else 0.5
    again, _ = env.reset(seed=5)
    fresh, _ = make(path, **options).reset(seed=5)
    for a, b in zip(arrays(again), arrays(fresh), strict=True):
        np.testing.assert_array_equal(a, b)
    env.close()


@pytest.mark.filterwarnings("ignore:.*image:UserWarning")  # SB3 flattens a float Box
def test_spaces_are_what_sb3_multiinputpolicy_accepts() -> None:
    env = make("TUTORIAL/STAGE-01/0000.json", local_map=2)
    space = env.observation_space
    assert isinstance(space, spaces.Dict)
    allowed = (spaces.Box, spaces.Discrete, spaces.MultiBinary)
    assert all(isinstance(s, allowed) for s in space.spaces.values())
    events, observe = space["events"], space["observe"]
    assert isinstance(events, spaces.MultiBinary) and isinstance(observe, spaces.MultiBinary)
    assert events.n == len(EVENT_KINDS) and observe.n == len(OBSERVE_KINDS)
    flat = make("TUTORIAL/STAGE-01/0000.json", local_map=2, flatten=True).observation_space
    assert isinstance(flat, spaces.Box) and flat.dtype == np.float32 and flat.shape is not None
    assert flat.shape[0] == max(s.stop for s in env.flat_layout.values())
    check_env = pytest.importorskip("stable_baselines3.common.env_checker").check_env
    check_env(env, warn=True)
    check_env(make("TUTORIAL/STAGE-01/0000.json", local_map=2, flatten=True), warn=True)


def one_hot(n: int, i: int) -> np.ndarray:
    vec = np.zeros(n, dtype=np.float32)
    vec[i] = 1
    return vec


@pytest.mark.parametrize(
    "make_env",
    [
        lambda: gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S1-rivers/STAGE-02"),
        lambda: gym.make("maze_envs/AgiMazeSet-v0"),
    ],
    ids=["AgiMaze-v0", "AgiMazeSet-v0"],
)
def test_flat_vector_is_the_dict_observation_laid_out(make_env: Any) -> None:
    as_dict = AgiMazeNumericObservation(make_env(), local_map=2, observe_encoding="discrete")
    as_flat = AgiMazeNumericObservation(make_env(), local_map=2, flatten=True)
    layout = as_flat.flat_layout
    count = n_actions(as_dict)
    for (d, _), (f, _) in zip(play(as_dict, 1, 250), play(as_flat, 1, 250), strict=True):
        parts = {
            "status": one_hot(2, int(d["status"])),
            "observe": one_hot(len(OBSERVE_KINDS), int(d["observe"])),
            "last_action": one_hot(count + 1, int(d["last_action"])),
            "local_map": d["local_map"].ravel(),
        }
        if "waiting" in d:
            parts["waiting"] = one_hot(2, int(d["waiting"]))
        for key, where in layout.items():
            np.testing.assert_array_equal(f[where], parts.get(key, d[key]), err_msg=key)


def test_budget_and_inventory_features_follow_the_env() -> None:
    env = make("TRAINING/S0-keys/STAGE-01/0005.json")
    obs, info = env.reset(seed=0)
    budget = 5 * info["max_steps"]
    assert obs["budget"].tolist() == [0.0, 0.0] and int(obs["last_action"]) == 4
    for t in range(1, 40):
        obs, _, terminated, truncated, info = env.step(t % 4)
        assert obs["budget"][0] == pytest.approx(info["steps"] / budget)
        assert obs["budget"][1] == pytest.approx(min(1.0, info["steps"] / info["max_steps"]))
        assert int(obs["last_action"]) == t % 4
        held = info["formal"]["inventory"]
        assert obs["inventory"].tolist() == [
            int(bool(held.get(k))) for k in ("key", "treasure", "exit_key", "boat", "flashlight")
        ]
        if terminated or truncated:
            break


def truth(env: gym.Env) -> tuple[Any, Any]:
    """The hidden labyrinth and player state (read by the test only, to check the map)."""
    backend = unwrapped(env).backend
    return backend._compiled, backend.state


@pytest.mark.parametrize("path", PACKS)
def test_local_map_only_holds_facts_true_of_the_hidden_labyrinth(path: str) -> None:
    radius = 6  # covers these boards from any cell
    env = make(path, local_map=radius)
    rng = np.random.default_rng(11)
    checked = {name: 0 for name in MAP_CHANNELS}
    events: set[str] = set()
    # the run must go through what makes dead reckoning hard on this pack
    special = {
        "rivers": "river_carried",
        "pits": "pit_teleport",
        "flashlight": "look",
        "grenades": "bomb_success",
        "full": "river_carried",
    }
    wanted = {event for word, event in special.items() if word in path}
    for episode in range(8):  # two at least; more until a random walk met the pack's hazard
        if episode >= 2 and wanted <= events:
            break
        obs, _ = env.reset(seed=episode)
        for _ in range(300):
            compiled, state = truth(env)
            pos = state.pos
            grid = obs["local_map"]
            assert grid[radius, radius, CH["visited"]] == 1
            for i in range(2 * radius + 1):
                for j in range(2 * radius + 1):
                    cell = (pos[0] + i - radius, pos[1] + j - radius)
                    on_board = cell in compiled.steps
                    if not on_board:
                        assert not grid[i, j].any(), cell  # nothing is known off the board
                        continue
                    for side, d in enumerate(("up", "down", "left", "right")):
                        real = open_towards(compiled, state, cell, side)
                        if grid[i, j, CH[f"wall_{d}"]]:
                            assert real in ("wall", "monolith"), (cell, d, real)
                            checked[f"wall_{d}"] += 1
                        if grid[i, j, CH[f"open_{d}"]]:
                            assert isinstance(real, tuple), (cell, d, real)
                            checked[f"open_{d}"] += 1
                    kind = tile_kind(compiled, state, cell)
                    if grid[i, j, CH["hazard"]]:
                        assert compiled.content.get(cell) in ("river", "pit"), cell
                        checked["hazard"] += 1
                    if grid[i, j, CH["item"]]:
                        assert kind in (
                            "key",
                            "treasure",
                            "exit_key",
                            "boat",
                            "flashlight",
                            "grenade_pack",
                        ), (cell, kind)
                        checked["item"] += 1
                    if grid[i, j, CH["exit"]]:
                        assert "exit" in compiled.steps[cell], cell
                        checked["exit"] += 1
                    checked["visited"] += int(grid[i, j, CH["visited"]])
            action = int(rng.integers(n_actions(env)))
            obs, _, terminated, truncated, info = env.step(action)
            events.update(info["events"])
            if terminated or truncated:
                break
    assert checked["visited"] and checked["wall_up"] and checked["open_down"]
    assert wanted <= events, (path, wanted - events)


def test_set_env_gets_a_fresh_map_per_labyrinth_and_the_waiting_flag() -> None:
    env = AgiMazeNumericObservation(
        gym.make("maze_envs/AgiMazeSet-v0", budget_factor=0.2), local_map=2
    )
    names = unwrapped(env).action_names
    obs, _ = env.reset(seed=0)
    assert int(obs["waiting"]) == 1 and obs["local_map"].sum() == 1  # only "here, visited"
    obs, *_ = env.step(names.index("left"))  # not played while waiting: nothing learnt
    assert int(obs["waiting"]) == 1 and obs["local_map"].sum() == 1
    assert int(obs["last_action"]) == names.index("left")
    obs, *_ = env.step(names.index("start"))
    assert int(obs["waiting"]) == 0 and obs["budget"].tolist() == [0.0, 0.0]
    for _ in range(6):  # 0.2 x 30 steps: the first tutorial's budget runs out
        obs, *_ = env.step(names.index("left"))
        if int(obs["waiting"]):
            break
        assert obs["local_map"].sum() > 1
    assert int(obs["waiting"]) == 1 and obs["local_map"].sum() == 1
    obs, _, _, _, info = env.step(names.index("start"))
    assert info["index"] == 1 and obs["local_map"].sum() == 1
    assert env.observation_space.contains(obs)


def test_bad_arguments_say_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="observe_encoding"):
        make("TUTORIAL/STAGE-01/0000.json", observe_encoding="bits")
    with pytest.raises(ValueError, match="radius"):
        make("TUTORIAL/STAGE-01/0000.json", local_map=-1)
    with pytest.raises(ValueError, match="AGI Maze env"):
        AgiMazeNumericObservation(gym.make("FrozenLake-v1"))
    with pytest.raises(ValueError, match="radius"):
        LocalMapMemory(radius=1.5)  # type: ignore[arg-type]
