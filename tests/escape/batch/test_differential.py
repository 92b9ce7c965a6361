"""Same rules, proven: every game of the batched engine, exported and played in the scalar env
with the same moves and radio symbols, agrees with it turn by turn on every numeric observation,
reward, termination and truncation.

Over the scenarios below together: more than a million agent-steps (one agent of one game, one
turn), random and scripted (wall-following) moves, sizes 5x5 to 41x41, every preset (all four
batch: a batched agent's notebook stays empty whatever its mode), 1 to 8 agents, radio symbols
on and off, the radio switched off, both autoreset modes, and the games that automatic resets
start (each is exported when it starts and replayed from there).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v1
from tests.escape.batch.replay import Replay, wall_follower

#: (id, config, games, steps, moves): each scenario compares games * steps * agents agent-steps
SCENARIOS: list[tuple[str, dict[str, Any], int, int, str]] = [
    (
        "sparse-5x5-1",
        {"preset": "sparse", "width": 5, "height": 5, "num_agents": 1, "max_turns": 25},
        40,
        400,
        "random",
    ),
    (
        "sparse-7x7-3",
        {"preset": "sparse", "width": 7, "height": 7, "max_turns": 60},
        64,
        400,
        "random",
    ),
    (
        "sparse-7x7-3-walls",
        {"preset": "sparse", "width": 7, "height": 7, "max_turns": 200},
        48,
        500,
        "scripted",
    ),
    (
        "full-7x7-3-symbols",
        {"preset": "full", "width": 7, "height": 7, "radio_symbols": 4, "max_turns": 80},
        64,
        400,
        "random",
    ),
    (
        "full-6x9-4-symbols-walls",
        {
            "preset": "full",
            "width": 6,
            "height": 9,
            "num_agents": 4,
            "radio_symbols": 2,
            "radio_cooldown": 2,
            "max_turns": 150,
        },
        40,
        400,
        "scripted",
    ),
    (
        "navigator-9x9-2",
        {"preset": "navigator", "width": 9, "height": 9, "num_agents": 2, "max_turns": 90},
        64,
        400,
        "random",
    ),
    (
        "shared-frame-5x8-5",
        {
            "preset": "shared_frame",
            "width": 5,
            "height": 8,
            "num_agents": 5,
            "max_turns": 45,
            "trail_length": 7,
        },
        40,
        400,
        "random",
    ),
    (
        "absolute-11x6-8-walls",
        {
            "preset": "full",
            "width": 11,
            "height": 6,
            "num_agents": 8,
            "coordinates": "absolute",
            "radio_symbols": 3,
            "reward_mode": "team_sparse",
            "max_turns": 150,
        },
        30,
        400,
        "scripted",
    ),
    (
        "sparse-8x8-6-radio-off",
        {
            "preset": "sparse",
            "width": 8,
            "height": 8,
            "num_agents": 6,
            "radio_symbols": 2,
            "radio": False,
            "exit_reward": 0.5,
            "team_bonus": 3.0,
            "min_start_distance": 4,
            "max_turns": 70,
        },
        40,
        400,
        "random",
    ),
    (
        "full-17x17-3-symbols",
        {"preset": "full", "width": 17, "height": 17, "radio_symbols": 4, "max_turns": 120},
        40,
        300,
        "random",
    ),
    (
        "full-9x9-7-walls",
        {"preset": "full", "width": 9, "height": 9, "num_agents": 7, "max_turns": 250},
        24,
        400,
        "scripted",
    ),
    (
        "sparse-41x41-2",
        {"preset": "sparse", "width": 41, "height": 41, "num_agents": 2, "max_turns": 60},
        8,
        200,
        "random",
    ),
    (
        "navigator-41x35-4-next-step",
        {
            "preset": "navigator",
            "width": 41,
            "height": 35,
            "num_agents": 4,
            "max_turns": 50,
            "autoreset_mode": "NextStep",
        },
        6,
        200,
        "random",
    ),
    (
        "full-5x5-2-next-step-symbols",
        {
            "preset": "full",
            "width": 5,
            "height": 5,
            "num_agents": 2,
            "radio_symbols": 1,
            "autoreset_mode": "NextStep",
            "max_turns": 30,
        },
        48,
        400,
        "random",
    ),
    (
        "full-12x12-8-symbols",
        {
            "preset": "full",
            "width": 12,
            "height": 12,
            "num_agents": 8,
            "radio_symbols": 6,
            "radio_cooldown": 1,
            "max_turns": 100,
        },
        30,
        400,
        "random",
    ),
    (
        "sparse-23x13-7",
        {"preset": "sparse", "width": 23, "height": 13, "num_agents": 7, "max_turns": 100},
        16,
        300,
        "random",
    ),
    (
        "shared-frame-6x6-8-walls",
        {"preset": "shared_frame", "width": 6, "height": 6, "num_agents": 8, "max_turns": 100},
        40,
        400,
        "scripted",
    ),
]


def planned(scenario: tuple[str, dict[str, Any], int, int, str]) -> int:
    _, config, games, steps, _ = scenario
    return games * steps * config.get("num_agents", 3)


def test_the_scenarios_cover_a_million_agent_steps_sizes_presets_and_teams() -> None:
    assert sum(planned(s) for s in SCENARIOS) >= 1_000_000
    configs = [s[1] for s in SCENARIOS]
    assert {c["preset"] for c in configs} == {"sparse", "navigator", "shared_frame", "full"}
    sizes = {c["width"] for c in configs} | {c["height"] for c in configs}
    assert min(sizes) == 5 and max(sizes) == 41
    assert {c.get("num_agents", 3) for c in configs} == set(range(1, 9))
    assert {s[4] for s in SCENARIOS} == {"random", "scripted"}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_every_game_plays_the_same_in_the_scalar_env(
    scenario: tuple[str, dict[str, Any], int, int, str],
) -> None:
    name, config, games, steps, moves = scenario
    vec = maze_escape_v1.vector_env(num_games=games, **config)
    seed = sum(map(ord, name))
    replay = Replay.start(vec, seed)
    rng = np.random.default_rng(seed)
    heading = rng.integers(0, 4, vec.num_envs)
    symbols = vec.config.radio_symbols
    for turn in range(1, steps + 1):
        if moves == "scripted":
            chosen = wall_follower(replay.observations, heading)
            stay = rng.random(vec.num_envs) < 0.05  # now and then a STAY
            chosen[stay] = 4
        else:
            chosen = rng.integers(0, 5, vec.num_envs)
        sent = None
        if symbols:
            sent = rng.integers(1, symbols + 1, vec.num_envs) * (rng.random(vec.num_envs) < 0.4)
        replay.step(chosen, sent, turn)
    assert replay.compared == planned(scenario)
    # the automatic resets were exercised, and games both succeeded and ran out of turns
    assert replay.games > games  # automatic resets started new games, replayed too
    if moves == "scripted":  # wall followers reach the exit: games end in team success
        assert replay.endings["success"] > 0
    else:  # random walks mostly run out of turns
        assert replay.endings["truncated"] > 0
