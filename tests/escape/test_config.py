"""Configuration: presets, keyword overrides, validation messages, JSON round trips."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from maze_envs import maze_escape_v0
from maze_envs.escape.types import PRESETS, Config


def test_sparse_preset_is_the_study_default() -> None:
    config = Config.from_preset("sparse")
    assert config.distance_sensor and config.coordinates is None
    assert config.notebook_mode == "splice" and config.radio
    assert config.trail_length == 0 and not config.meeting_alert and not config.used_exits
    assert config.notebook_max_bytes == 8192 and config.notebook_turn_bytes == 1024
    assert config.radio_max_bytes == 280 and config.radio_cooldown == 5
    assert config.num_agents == 3 and Config() == config


def test_navigator_preset() -> None:
    config = Config.from_preset("navigator")
    assert config.coordinates == "own" and config.trail_length == 30
    assert not config.distance_sensor and config.meeting_alert
    assert config.notebook_mode == "rolling_log"


def test_full_and_shared_frame_presets() -> None:
    full = Config.from_preset("full")
    assert full.distance_sensor and full.coordinates and full.trail_length
    assert full.meeting_alert and full.used_exits
    assert Config.from_preset("shared_frame").coordinates == "shared"
    assert set(PRESETS) >= {"sparse", "navigator", "shared_frame", "full"}


def test_keyword_overrides_on_a_preset() -> None:
    env = maze_escape_v0.parallel_env(preset="navigator", width=17, height=15, max_turns=600)
    assert (env.config.width, env.config.height, env.config.max_turns) == (17, 15, 600)
    assert env.config.coordinates == "own"
    obs, _ = env.reset(seed=0)
    assert len(obs) == 3
    four = maze_escape_v0.parallel_env(num_agents=4)
    assert four.possible_agents == ["A", "B", "C", "D"]


@pytest.mark.parametrize("agents", [1, 2, 26])
def test_any_team_size_plays(agents: int) -> None:
    preset = "navigator" if agents > 1 else "sparse"
    env = maze_escape_v0.parallel_env(
        preset=preset, num_agents=agents, width=9, height=7, max_turns=15
    )
    obs, _ = env.reset(seed=1)
    assert env.possible_agents[-1] == chr(ord("A") + agents - 1)
    for agent in env.agents:
        env.action_space(agent).seed(0)
    while env.agents:
        for agent, o in obs.items():
            assert env.observation_space(agent).contains(o)
        obs, *_ = env.step({a: env.action_space(a).sample() for a in env.agents})


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"width": 4}, "width"),
        ({"height": 42}, "height"),
        ({"num_agents": 0}, "num_agents"),
        ({"coordinates": "polar"}, "coordinates"),
        ({"trail_length": 30}, "trail_length > 0 needs a coordinate frame"),
        ({"notebook_turn_bytes": 9000}, "must not exceed notebook_max_bytes"),
        ({"notebook_mode": "wiki"}, "notebook_mode"),
        ({"landmark_count": 25}, "landmark_count"),
        ({"colour": "red"}, "colour"),
        ({"num_agents": 1, "meeting_alert": True}, "meeting_alert needs at least 2 agents"),
    ],
)
def test_invalid_configs_are_rejected_with_the_field_named(overrides: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Config(**overrides)


def test_unknown_preset_and_maze_algorithm() -> None:
    with pytest.raises(ValueError, match="unknown preset 'fast'; choose one of"):
        maze_escape_v0.parallel_env(preset="fast")
    with pytest.raises(ValueError, match="unknown maze_algorithm 'prim'"):
        maze_escape_v0.parallel_env(maze_algorithm="prim")
    with pytest.raises(ValueError, match="render_mode 'human3d'"):
        maze_escape_v0.parallel_env(render_mode="human3d")
    with pytest.raises(ValueError, match="either config or preset"):
        maze_escape_v0.parallel_env(config=Config(), width=7)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_configs_are_json_round_trippable(preset: str) -> None:
    config = Config.from_preset(preset, width=11)
    text = config.model_dump_json()
    assert Config.model_validate_json(text) == config
    assert json.loads(text)["width"] == 11


def test_config_is_immutable() -> None:
    config = Config()
    with pytest.raises(ValidationError):
        config.width = 12


def test_min_start_distance_is_respected_or_explained() -> None:
    env = maze_escape_v0.parallel_env(width=9, height=9, min_start_distance=10)
    for seed in range(5):
        env.reset(seed=seed)
        assert min(env.ground_truth()["shortest_path_to_exit"].values()) >= 10
    impossible = maze_escape_v0.parallel_env(width=5, height=5, min_start_distance=200)
    with pytest.raises(ValueError, match="lower min_start_distance"):
        impossible.reset(seed=0)
