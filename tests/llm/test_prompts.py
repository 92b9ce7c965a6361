"""Prompt versions: a cumulative ladder in data files, each rung documented with its habit."""

from __future__ import annotations

from importlib import resources

import pytest

from llm_policies.prompts import escape_rules_for, escape_version, escape_versions, resolve_version
from llm_policies.prompts.escape import escape_system
from llm_policies.schema import escape_schema
from maze_envs.escape.types import Config

LADDER = ["base", "v3", "v4", "v5", "v8", "v9", "v10", "v11", "v12", "v13", "v14"]


def test_the_ladder_and_its_habits() -> None:
    versions = escape_versions()
    assert [v.name for v in versions] == LADDER
    habits = {v.name: v.habit for v in versions}
    assert "straight-line distance" in habits["v3"]
    assert "looping" in habits["v4"]
    assert "camping on the exit" in habits["v8"]
    assert "own start cell" in habits["v10"]
    assert "trail's last entry" in habits["v13"]
    assert "prefix cache" in habits["v14"]
    assert all(v.habit for v in versions)


def test_each_rung_targets_the_issue_list_in_order() -> None:
    rules = {v.name: v.rule for v in escape_versions()}
    assert "straight lines through walls" in rules["v3"]
    assert "junction" in rules["v4"] and "not tried yet" in rules["v4"]
    assert "coordinates" in rules["v5"]
    assert "leave it and go find a teammate" in rules["v8"]
    assert "relative to a landmark" in rules["v9"]
    assert "start cell is not a landmark" in rules["v10"]
    assert "copy into your own notebook" in rules["v11"] and "Do not stand still" in rules["v11"]
    assert "keep exploring" in rules["v12"] and "split the maze" in rules["v12"]


def test_versions_are_cumulative() -> None:
    previous: tuple[str, ...] = ()
    for name in LADDER:
        rules = escape_rules_for(name)
        assert rules[: len(previous)] == previous, name
        assert len(rules) - len(previous) == (1 if escape_version(name).rule else 0)
        previous = rules
    assert len(escape_rules_for("latest")) == 8


def test_trail_wording_switches_at_v13() -> None:
    config = Config.from_preset("navigator")
    schema = escape_schema(config)
    v12 = escape_system(config, "A", schema, "tool", version="v12")
    v13 = escape_system(config, "A", schema, "tool", version="v13")
    assert "ends with last turn's cell, so it never includes where you are now" in v13
    assert "ends with last turn's cell" not in v12
    assert "where you were on each of the last 30 turns" in v12


def test_from_v14_the_system_prompt_is_shared_and_the_agent_part_comes_last() -> None:
    from llm_policies.prompts.escape import escape_user
    from maze_envs.escape.env import MazeEscapeEnv

    config = Config.from_preset("navigator")
    schema = escape_schema(config)
    systems = {a: escape_system(config, a, schema, "tool", version="v14") for a in config.agents}
    assert len(set(systems.values())) == 1  # one system prompt for every agent of the game
    assert "You are agent" not in systems["A"]
    # the old layout stays selectable, unchanged: v13 names the agent in its first lines
    v13 = escape_system(config, "B", schema, "tool", version="v13")
    assert v13.index("You are agent B") < 100
    assert systems["A"].replace("Prompt version v14", "Prompt version v13") != v13
    env = MazeEscapeEnv(config)
    observations, _ = env.reset(seed=3)
    from maze_envs.escape.types import Observation

    obs = Observation.from_space(observations["B"], config, "B")
    user = escape_user(obs, config, "B", version="v14")
    assert user.startswith("You are agent B.\n\n")
    assert escape_user(obs, config, "B", version="v13") == user.removeprefix("You are agent B.\n\n")


def test_system_prompt_names_the_version_and_is_byte_stable() -> None:
    config = Config.from_preset("full")
    schema = escape_schema(config, check="required")
    one = escape_system(config, "C", schema, "prompted", version="v9", check="required")
    two = escape_system(config, "C", schema, "prompted", version="v9", check="required")
    assert one == two
    assert one.startswith("Maze Escape. Prompt version v9; observation wording escape-v1.")
    assert "relative to a landmark" in one and "start cell is not a landmark" not in one
    assert "Fill in check in every reply." in one
    assert schema.schema_text in one  # prompted mode shows the schema


def test_unknown_version_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown prompt version 'v6'; choose one of base, v3"):
        resolve_version("v6")


def test_prompts_are_package_data_files() -> None:
    data = resources.files("llm_policies.prompt_data").joinpath("data")
    names = {p.name for p in data.joinpath("escape").iterdir()}
    assert {"ladder.toml", "rules.toml", "reply.toml"} <= names
    assert {p.name for p in data.joinpath("agimaze").iterdir()} >= {"history.toml", "prompt.toml"}
