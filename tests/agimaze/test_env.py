"""AgiMaze-v0: spaces, check_env, determinism, budget, rewards, info, step by name, packs."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.api import HttpBackend
from maze_envs.agimaze.bundle import save_bundle
from maze_envs.agimaze.env import AgiMazeEnv, action_name
from maze_envs.agimaze.generator import GeneratorConfig, LabyrinthGenerator, PitSpec, RiverSpec
from maze_envs.agimaze.packs import PackPathError, list_bundles
from maze_envs.agimaze.spaces import EVENT_KINDS, OBSERVE_KINDS
from maze_envs.agimaze.types import Bundle, ExitGap, Labyrinth


def corridor(max_steps: int | None = 4, open_map: bool = False) -> Labyrinth:
    """``S K T`` in a row with the exit on the right: right, right, right wins in 3 steps."""
    return Labyrinth(
        rows=1,
        cols=3,
        open_edges=[[2, 10, 8]],
        exit=ExitGap(cell=(0, 2), side="right"),
        start=(0, 0),
        key=(0, 1),
        chest=(0, 2),
        max_steps=max_steps,
        open_map=open_map,
    )


def generated(seed: int = 1, **config: object) -> Labyrinth:
    """A 5x5 labyrinth with keys, an exit key, a river and a pit cycle (or ``config``)."""
    settings: dict[str, object] = {
        "rows": 5,
        "cols": 5,
        "loops": 2,
        "exit_key": True,
        "rivers": RiverSpec(count=1),
        "pits": PitSpec(cycles=1),
    }
    settings.update(config)
    return LabyrinthGenerator(GeneratorConfig.model_validate(settings))(np.random.default_rng(seed))


def extended(seed: int = 3) -> Labyrinth:
    """A labyrinth with a flashlight and a grenade pack (look_* and bomb_* actions)."""
    return generated(seed, rows=4, cols=4, flashlight=True, grenade_packs=1, exit_key=False)


def packs_available() -> bool:
    return bool(list_bundles("TRAINING/"))


needs_packs = pytest.mark.skipif(not packs_available(), reason="the shipped packs are not built")


def random_rollout(env: gym.Env, seed: int, steps: int) -> list[tuple]:
    """Play uniform random actions; check every observation lies in its space."""
    space = env.observation_space
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    assert space.contains(obs), obs
    trace = [(obs["text"], info["steps"])]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        assert space.contains(obs), obs
        trace.append((obs["text"], reward, terminated, truncated, info["steps"]))
        if terminated or truncated:
            obs, info = env.reset()
            assert space.contains(obs)
    return trace


@pytest.mark.parametrize(
    "lab",
    [corridor(), corridor(open_map=True), generated(), extended()],
    ids=["corridor", "tutorial", "rivers-pits", "extended"],
)
def test_check_env_passes(lab: Labyrinth) -> None:
    env = gym.make("maze_envs/AgiMaze-v0", labyrinth=lab, render_mode="ansi")
    check_env(env.unwrapped, skip_render_check=False)
    random_rollout(env, seed=0, steps=400)


def test_every_observation_lies_in_its_space_on_long_rollouts() -> None:
    for lab in (generated(2), generated(5, boat=True), extended(4)):
        random_rollout(AgiMazeEnv(labyrinth=lab, budget_factor=1), seed=7, steps=1500)


def test_spaces_cover_the_engine_vocabulary() -> None:
    env = AgiMazeEnv(labyrinth=extended())
    formal = env.observation_space["formal"]
    assert formal["observe"].n == len(OBSERVE_KINDS)
    assert formal["events"].n == len(EVENT_KINDS)
    assert env.action_names == [
        "up", "down", "left", "right",
        "look_up", "look_down", "look_left", "look_right",
        "bomb_up", "bomb_down", "bomb_left", "bomb_right",
    ]  # fmt: skip
    assert "map" not in env.observation_space.spaces
    assert "map" in AgiMazeEnv(labyrinth=corridor(open_map=True)).observation_space.spaces


def test_win_terminates_with_reward_and_rhae() -> None:
    env = AgiMazeEnv(labyrinth=corridor(max_steps=4))
    obs, info = env.reset(seed=0)
    assert obs["text"] == "Game has started."
    assert info == {
        "name": "<labyrinth>",
        "steps": 0,
        "max_steps": 4,
        "solved": False,
        "events": [],
        "formal": {
            "status": "success",
            "observe": "empty",
            "events": [],
            "inventory": {},
            "details": {},
        },
        "error": None,
    }
    texts, rewards = [], []
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step_name("right")
        texts.append(obs["text"])
        rewards.append(reward)
    assert texts == [
        "You went right and stepped on a tile with a key. You pick up the key.",
        "You went right and stepped on a tile with a chest. "
        "You open the chest with your key and take the treasure.",
        "You leave the labyrinth with the treasure.",
    ]
    assert rewards == [0.0, 0.0, 1.0]
    assert terminated and not truncated
    assert info["solved"] and info["steps"] == 3 and info["events"] == ["exited"]
    assert info["rhae"] == pytest.approx(min(1.0, (0.7 * 4 / 3) ** 2))
    assert obs["inventory"]["key"] == 1 and obs["inventory"]["treasure"] == 1
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_truncation_at_five_times_max_steps() -> None:
    env = AgiMazeEnv(labyrinth=corridor(max_steps=4))
    env.reset(seed=0)
    for step in range(1, 21):
        obs, _, terminated, truncated, info = env.step_name("left")  # the monolith
        assert obs["text"] == "You tried to go left, but a monolith blocks the way."
        assert info["steps"] == step
        assert truncated == (step == 20) and not terminated
    assert info["budget"] == 20 and info["rhae"] == 0.0 and not info["solved"]
    custom = AgiMazeEnv(labyrinth=corridor(max_steps=4), budget_factor=1.5, max_steps=10)
    custom.reset(seed=0)
    results = [custom.step_name("up")[3] for _ in range(15)]
    assert results == [False] * 14 + [True]


def test_fallback_budget_when_the_labyrinth_has_none() -> None:
    env = AgiMazeEnv(labyrinth=corridor(max_steps=None))
    _, info = env.reset(seed=0)
    assert info["max_steps"] == 200


def test_determinism_same_seed_same_trajectory() -> None:
    lab = generated(9)
    a = random_rollout(AgiMazeEnv(labyrinth=lab), seed=11, steps=300)
    b = random_rollout(AgiMazeEnv(labyrinth=lab), seed=11, steps=300)
    assert a == b


def test_step_by_name_and_bad_names() -> None:
    env = AgiMazeEnv(labyrinth=corridor())
    env.reset(seed=0)
    assert env.action_index("right") == 3
    with pytest.raises(ValueError, match=r"unknown action 'jump'.*up, down, left, right"):
        env.step_name("jump")
    with pytest.raises(ValueError, match="outside Discrete"):
        env.step(7)
    with pytest.raises(ValueError, match="outside Discrete"):
        env.step(-1)
    for not_an_index in (1.7, 3.0, "3", np.array([3])):  # never rounded or parsed into a move
        with pytest.raises(ValueError, match="outside Discrete"):
            env.step(not_an_index)  # type: ignore[arg-type]
    assert env.step(np.int64(3))[4]["steps"] == 1 and env.step(np.array(3))[4]["steps"] == 2


def test_action_names_accept_exactly_the_action_space() -> None:
    names = ["up", "down", "left", "right"]
    space = gym.spaces.Discrete(len(names))
    candidates = [0, 3, 4, -1, True, np.int64(2), np.uint8(1), np.array(2), np.array([2])]
    candidates += [1.0, 1.7, "1", np.float64(1), np.bool_(True), np.array(1.0), None]
    for action in candidates:
        if space.contains(action):
            assert action_name(names, action) == names[int(action)]
        else:
            with pytest.raises(ValueError, match="outside Discrete"):
                action_name(names, action)


def test_observations_are_fresh_objects() -> None:
    env = AgiMazeEnv(labyrinth=corridor())
    obs1, _ = env.reset(seed=0)
    obs1["formal"]["events"][:] = 1
    obs1["inventory"]["key"] = 1
    obs2, _, _, _, info = env.step_name("up")
    assert obs2["formal"]["events"].sum() == 1 and obs2["inventory"]["key"] == 0
    info["formal"]["inventory"]["treasure"] = True
    obs3, *_ = env.step_name("up")
    assert obs3["inventory"]["treasure"] == 0


def test_render_ansi_shows_the_map_with_the_player() -> None:
    env = AgiMazeEnv(labyrinth=corridor(), render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == "+---+---+---+\n| S   K   T  \n+---+---+---+"
    env.step_name("right")
    frame = env.render()
    assert frame is not None and "S" in frame.splitlines()[1][4:8]


def test_tutorial_observation_has_the_open_map() -> None:
    env = AgiMazeEnv(labyrinth=corridor(open_map=True))
    obs, _ = env.reset(seed=0)
    assert obs["map"] == "+---+---+---+\n| S   K   T  \n+---+---+---+"
    obs, *_ = env.step_name("right")
    assert obs["map"].splitlines()[1] == "|     S   T  "


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "exactly one of path"),
        ({"path": "x", "labyrinth": corridor()}, "exactly one of path"),
        ({"labyrinth": corridor(), "budget_factor": 0}, "budget_factor"),
        ({"labyrinth": corridor(), "budget_factor": float("inf")}, "finite"),
        ({"path": 5}, "pack path string, got int"),
        ({"labyrinth": "TRAINING/S0-keys"}, "Labyrinth or a Bundle, got str"),
        ({"labyrinth": corridor(), "max_steps": 0}, "max_steps"),
        ({"labyrinth": corridor(), "render_mode": "rgb"}, "render_mode"),
        ({"labyrinth": corridor(), "backend": "ftp"}, "backend"),
        ({"labyrinth": corridor(), "backend": "http"}, "backend= is a backend object"),
        ({"labyrinth": corridor(), "backend": HttpBackend("http://x")}, "plays pack paths"),
    ],
)
def test_constructor_validates_arguments(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        AgiMazeEnv(**kwargs)


def test_unknown_or_escaping_pack_paths_are_refused() -> None:
    for path in ("../../etc/passwd", "/etc/passwd", "NOPE/STAGE-01"):
        with pytest.raises(PackPathError):
            AgiMazeEnv(path=path)


def test_pack_root_serves_a_bundle_tree_of_ones_own(tmp_path: Path) -> None:
    stage = tmp_path / "MINE" / "STAGE-01"
    save_bundle(Bundle(labyrinth=corridor()), stage / "0000.json")
    save_bundle(Bundle(labyrinth=generated(4)), stage / "0001.json")
    env = AgiMazeEnv(path="MINE/STAGE-01/0000.json", pack_root=tmp_path)
    assert env.reset(seed=0)[1]["name"] == "MINE/STAGE-01/0000.json"
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step_name("right")
    assert terminated and not truncated and reward == 1.0 and info["steps"] == 3
    drawn = AgiMazeEnv(path="MINE/STAGE-01", pack_root=str(tmp_path))
    names = {drawn.reset(seed=s)[1]["name"] for s in range(12)}
    assert names == {"MINE/STAGE-01/0000.json", "MINE/STAGE-01/0001.json"}
    (tmp_path / "LINK").symlink_to(stage)
    for path in ("LINK/0000.json", "../MINE/STAGE-01/0000.json", "TRAINING/S0-keys/STAGE-01"):
        with pytest.raises(PackPathError):
            AgiMazeEnv(path=path, pack_root=tmp_path)
    with pytest.raises(PackPathError, match="not a directory"):
        AgiMazeEnv(path="MINE/STAGE-01", pack_root=tmp_path / "missing")
    with pytest.raises(ValueError, match="pack root goes with a pack path"):
        AgiMazeEnv(labyrinth=corridor(), pack_root=tmp_path)
    with pytest.raises(ValueError, match="pack_root= is for the local backend"):
        AgiMazeEnv(path="MINE", backend=HttpBackend("http://x"), pack_root=tmp_path)


@needs_packs
def test_pack_file_through_gymnasium_make() -> None:
    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0005.json")
    obs, info = env.reset(seed=0)
    assert obs["text"] == "Game has started."
    assert info["name"] == "TRAINING/S0-keys/STAGE-01/0005.json"
    assert info["max_steps"] == 70
    assert env.unwrapped.action_names == ["up", "down", "left", "right"]
    check_env(env.unwrapped)


@needs_packs
def test_pack_directory_draws_a_bundle_from_the_seed() -> None:
    env = AgiMazeEnv(path="TRAINING/S0-keys/STAGE-01")
    names = {env.reset(seed=seed)[1]["name"] for seed in range(30)}
    assert len(names) > 3
    assert all(n.startswith("TRAINING/S0-keys/STAGE-01/") for n in names)
    first = [env.reset(seed=s)[1]["name"] for s in range(10)]
    again = [
        AgiMazeEnv(path="TRAINING/S0-keys/STAGE-01").reset(seed=s)[1]["name"] for s in range(10)
    ]
    assert first == again


def test_an_action_the_labyrinth_lacks_is_reported_not_played() -> None:
    env = AgiMazeEnv(labyrinth=corridor())
    env.reset(seed=0)
    env.step_name("right")
    outcome = env.backend.step("bomb_up")  # a union action this labyrinth does not offer
    assert outcome.error == {
        "error": "bad_action",
        "action": "bomb_up",
        "allowed": ["up", "down", "left", "right"],
    }
    assert outcome.text == "Invalid action 'bomb_up': this labyrinth allows up, down, left, right."
    assert outcome.formal["inventory"] == {"key": True} and not outcome.won
    obs, *_ = env.step_name("right")  # the game state did not move
    assert "open the chest" in obs["text"]
