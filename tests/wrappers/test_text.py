"""Text observation wrappers: the text a model is sent, in a space that holds it."""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import maze_envs  # noqa: F401  (registers the environments)
from llm_policies.backends.scripted import ScriptedBackend
from llm_policies.policy import AgiMazeLLMPolicy, EscapeLLMPolicy
from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.types import Action
from maze_envs.policies import make_policy
from maze_envs.policies.episodes import agimaze_episode, escape_episode
from wrappers.text import EscapeTextObservation, TextObservation

TUTORIAL = "TUTORIAL/STAGE-01/0000.json"
HIDDEN = "TRAINING/S0-keys/STAGE-01/0005.json"


def _agimaze_policy(env: Any, info: dict[str, Any], **options: Any) -> AgiMazeLLMPolicy:
    policy = AgiMazeLLMPolicy(ScriptedBackend(['{"action": "up"}']), **options)
    policy.reset("player", 0, agimaze_episode(env, info))
    return policy


@pytest.mark.parametrize("path", [TUTORIAL, HIDDEN])
def test_agimaze_text_is_what_the_llm_policy_sends(path: str) -> None:
    env = TextObservation(gym.make("maze_envs/AgiMaze-v0", path=path))
    text, info = env.reset(seed=0)
    policy = _agimaze_policy(env, info, output_mode="prompted")
    names = env.unwrapped.action_names  # type: ignore[attr-defined]
    rng = np.random.default_rng(1)
    for step in range(25):
        assert env.typed is not None
        current, messages = policy.prompt(env.typed)
        assert text == current, f"step {step}"
        assert messages[-1].content == text
        assert env.observation_space.contains(text)
        action = int(rng.integers(len(names)))
        text, _, terminated, truncated, info = env.step(np.int64(action))
        assert env.typed.last_action == names[action]
        if terminated or truncated:
            break
    if path == TUTORIAL:
        assert "Map:" in text and "S" in text.split("Map:")[1]  # the open map is in the text
    else:
        assert "Map:" not in text


def test_agimaze_text_honours_the_wording_option_and_rejects_unknown_versions() -> None:
    env = TextObservation(gym.make("maze_envs/AgiMaze-v0", path=HIDDEN), wording="v1")
    text, info = env.reset(seed=0)
    policy = _agimaze_policy(env, info, output_mode="prompted", wording="v1")
    assert env.typed is not None
    assert policy.prompt(env.typed)[0] == text
    with pytest.raises(ValueError, match="no agimaze wording version 'v99'"):
        TextObservation(gym.make("maze_envs/AgiMaze-v0", path=HIDDEN), wording="v99")


def test_agimaze_set_text_shows_messages_and_the_description_matches_the_policy() -> None:
    env = TextObservation(gym.make("maze_envs/AgiMazeSet-v0", paths=[TUTORIAL, HIDDEN]))
    text, info = env.reset(seed=0)
    assert text.startswith(
        'Message: Please start the first labyrinth by sending the {"id":"start"}'
    )
    assert env.observation_space.contains(text)
    start = env.unwrapped.action_names.index("start")  # type: ignore[attr-defined]
    up = env.unwrapped.action_names.index("up")  # type: ignore[attr-defined]
    text, *_ = env.step(np.int64(up))  # not available while waiting: a message, no step
    assert "is not available now" in text
    text, _, _, _, info = env.step(np.int64(start))
    assert "Result: Game has started." in text and "Map:" in text
    policy = _agimaze_policy(env, info, output_mode="prompted")
    assert env.typed is not None
    assert policy.prompt(env.typed)[0] == text
    assert "Board:" in env.description()


def test_text_observation_refuses_other_environments() -> None:
    with pytest.raises(ValueError, match="TextObservation wraps AGI Maze"):
        TextObservation(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="EscapeTextObservation wraps Maze Escape"):
        EscapeTextObservation(gym.make("CartPole-v1"))


@pytest.mark.parametrize("module", [maze_escape_v0, maze_escape_v1])
@pytest.mark.parametrize("preset", ["sparse", "full"])
def test_escape_text_is_what_the_llm_policy_sends(module: Any, preset: str) -> None:
    env = EscapeTextObservation(module.parallel_env(preset=preset, width=6, height=6))
    twin = module.parallel_env(preset=preset, width=6, height=6)  # the same game, raw
    texts, _ = env.reset(seed=4)
    raw, _ = twin.reset(seed=4)
    config = twin.config
    models, movers = {}, {}
    for agent in env.possible_agents:
        policy = EscapeLLMPolicy(ScriptedBackend(['{"move": "N"}']), output_mode="prompted")
        policy.reset(agent, 0, escape_episode(twin, agent))
        models[agent] = policy
        movers[agent] = make_policy("explorer", "escape")
        movers[agent].reset(agent, 7, escape_episode(twin, agent))
    heard = False
    for turn in range(30):
        actions = {}
        for agent, text in texts.items():
            model = observation_to_model(raw[agent], config, agent)
            (message,) = models[agent].prompt(model)
            assert message.content == text, f"turn {turn}, agent {agent}"
            assert env.observation_space(agent).contains(text)
            heard = heard or bool(re.search(r"\bt\d+\b", text))
            chosen = movers[agent].act(model)
            move = chosen.action.move if hasattr(chosen, "action") else chosen.move
            actions[agent] = Action(move=move, radio=f"t{turn}" if preset == "full" else None)
        texts, *_ = env.step(actions)
        raw, *_ = twin.step(actions)
        if not env.agents:
            break
    if preset == "full":
        assert heard  # the radio messages reach the text


def test_escape_legend_option_and_trail_wording() -> None:
    env = EscapeTextObservation(
        maze_escape_v1.parallel_env(preset="full", width=6, height=6), legend=True, trail="plain"
    )
    texts, _ = env.reset(seed=1)
    assert texts["A"].startswith("How to read")
    assert env.observation_space("A").contains(texts["A"])
    assert env.observation_space("A") == env.observation_space("B")
    with pytest.raises(ValueError, match="trail must be 'precise' or 'plain'"):
        EscapeTextObservation(maze_escape_v1.parallel_env(), trail="fuzzy")


def test_escape_text_stays_in_its_space_with_full_notebooks() -> None:
    env = EscapeTextObservation(
        maze_escape_v1.parallel_env(preset="full", width=5, height=5, notebook_mode="rolling_log"),
        legend=True,
    )
    texts, _ = env.reset(seed=2)
    big = "é" * 400
    for _ in range(12):
        actions = {
            a: Action(move="STAY", notebook={"text": big}, radio="ü" * 60) for a in env.agents
        }
        texts, *_ = env.step(actions)
        for agent, text in texts.items():
            assert env.observation_space(agent).contains(text)
