"""The AGI Maze text renderer: the single-labyrinth description and step observations."""

from __future__ import annotations

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.model_text import API_DESCRIPTION
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.policies.episodes import agimaze_episode
from maze_envs.text import agimaze_description, render_agimaze


def _tutorial() -> tuple[gym.Env, dict, dict]:  # type: ignore[type-arg]
    # the renderer's wording is checked on a fixed labyrinth: the earlier packs' first tutorial
    env = gym.make(
        "maze_envs/AgiMaze-v0", path="TUTORIAL/STAGE-01/0000.json", pack_version="agimaze-packs-2"
    )
    obs, info = env.reset(seed=0)
    return env, obs, info


def test_description_holds_rules_task_map_actions_and_coordinates() -> None:
    env, _, info = _tutorial()
    episode = agimaze_episode(env, info)
    text = agimaze_description(episode)
    assert API_DESCRIPTION in text
    assert "Rivers: 0. Pit cycles: none. Exit key: no." in text
    assert "Board: 3 rows by 3 columns." in text
    assert "You start at (row, col) = (1, 1)." in text
    assert "Reference step count of this labyrinth: 30; you may use at most 150 actions." in text
    assert episode.public_map is not None and episode.public_map.rstrip("\n") in text
    assert (
        'Actions (reply with one of these ids each step): {"id": "up"}, {"id": "down"}, '
        '{"id": "left"}, {"id": "right"}.' in text
    )
    assert "rows count downward from 0 at the top" in text


def test_hidden_map_and_pits_and_exit_key_are_stated() -> None:
    env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S2-pits/STAGE-03/0000.json")
    _, info = env.reset(seed=0)
    episode = agimaze_episode(env, info)
    text = agimaze_description(episode)
    assert not episode.open_map and episode.public_map  # the closed frame with the player
    assert "Map as you may see it:" in text
    cycles = episode.task["pits_per_cycle"]
    assert cycles, "this pack has pit cycles"
    sizes = "; ".join(f"{n} pits" for n in cycles)
    assert f"Pit cycles: {sizes}." in text


def test_step_observation_lines() -> None:
    env, obs, info = _tutorial()
    obs, _, _, _, info = env.unwrapped.step_name("right")
    observation = AgiMazeObservation.from_env(obs, info, last_action="right", env=env)
    lines = render_agimaze(observation).splitlines()
    assert lines[:6] == [
        "Step 1 of 150.",
        "Your action: right.",
        "Result: You went right and stepped on a tile with a chest. But you don't have a key.",
        "Status: success; you see: treasure.",
        "Events: moved, chest_locked.",
        'Details: {"landed": {"kind": "treasure"}}.',
    ]
    assert "You carry: nothing." in lines
    assert lines[lines.index("Map:") + 1].startswith("+")


def test_inventory_and_error_lines() -> None:
    observation = AgiMazeObservation(
        text="You went up.",
        formal={"status": "blocked", "observe": "other", "events": [], "details": {}},
        inventory={"key": True, "grenades": 2},
        step=4,
        max_steps=10,
        budget=50,
        last_action="jump",
        error={"error": "bad_action", "action": "jump", "allowed": ["up", "down"]},
    )
    text = render_agimaze(observation)
    assert "You carry: key, grenades x2." in text
    assert "Your action was not accepted: bad_action; allowed: up, down. No step was used." in text


def test_labyrinth_set_message_and_waiting() -> None:
    env = gym.make("maze_envs/AgiMazeSet-v0")
    obs, info = env.reset(seed=0)
    observation = AgiMazeObservation.from_env(obs, info, env=env)
    text = render_agimaze(observation)
    assert text.splitlines() == [
        'Message: Please start the first labyrinth by sending the {"id":"start"} action. '
        'Available actions: {"id":"start"}',
        'The labyrinth set is waiting for the start action: {"id": "start"}.',
    ]
