"""The Maze Escape text renderer: every field, the legend per feature, the notebook first."""

from __future__ import annotations

import pytest

from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.types import Config, LastActionResult, Observation
from maze_envs.policies.interface import EscapeEpisode
from maze_envs.text import escape_legend, load_wording, render_escape


def _obs(**overrides: object) -> Observation:
    base: dict[str, object] = {
        "edges": {"N": "open", "E": "interior_wall", "S": "outer_brick", "W": "open"},
        "on_exit": False,
        "landmark": "piano",
        "turn": 7,
        "turns_left": 113,
        "notebook": "junction at [1, 2]\n",
        "radio": {"B": "exit is 3 W of the piano"},
        "teammate_notebooks": {"C": "C was here"},
        "last_action": LastActionResult(
            move="bumped_interior_wall",
            notebook="rejected",
            notebook_reason="end 99 is beyond the notebook's 3 characters (0..3)",
            radio="refused",
            radio_reason="radio cooling down: 2 more turn(s) before you can send",
            radio_cooldown=2,
        ),
    }
    base.update(overrides)
    return Observation.model_validate(base)


def test_every_always_on_field_is_rendered_with_exact_lines() -> None:
    text = render_escape(_obs(), Config(distance_sensor=False))
    lines = text.splitlines()
    assert lines[:5] == [
        "Your notebook:",
        "<<<notebook",
        "junction at [1, 2]",
        "notebook>>>",
        "Notebook size: 19 of 8192 bytes.",
    ]
    assert "  B: exit is 3 W of the piano" in lines
    assert lines[lines.index("<<<C's notebook") + 1] == "C was here"
    assert "Turn: 7 (113 turns left)." in lines
    assert "Cell: N open, E interior_wall, S outer_brick, W open." in lines
    assert "On the exit: no." in lines
    assert "Landmark: piano." in lines
    assert "Last move: you walked into an interior wall and stayed where you were." in lines
    assert (
        "Last notebook edit: rejected (end 99 is beyond the notebook's 3 characters (0..3)); "
        "your notebook is unchanged." in lines
    )
    assert "Radio cooldown: 2 turn(s) before you can send." in lines
    # optional features are off: none of their lines appear
    for prefix in ("Distances", "Position", "Trail", "Teammates here", "Used exits"):
        assert not any(line.startswith(prefix) for line in lines), prefix


def test_optional_features_render_in_cells_and_frames() -> None:
    config = Config.from_preset("full")
    obs = _obs(
        distance_to_exit=42,
        distance_to_teammates={"B": 10, "C": 5},
        position=(3, -2),
        trail=[(1, -2), (2, -2)],
        colocated_with=["C"],
        used_exits=["W", "N"],
    )
    lines = render_escape(obs, config).splitlines()
    assert "Distances: exit 4.2, B 1.0, C 0.5." in lines
    assert "Position: [3, -2]." in lines
    assert "Trail (oldest first): [1, -2], [2, -2]." in lines
    assert "Teammates here: C." in lines
    assert "Used exits: N, W." in lines  # always in N, E, S, W order


def test_notebook_comes_first_and_changes_only_at_its_end_for_appends() -> None:
    config = Config.from_preset("navigator")
    before = render_escape(_obs(notebook="a\nb\n", turn=3), config)
    after = render_escape(_obs(notebook="a\nb\nc\n", turn=4), config)
    shared = len("Your notebook:\n<<<notebook\na\nb")
    assert before[:shared] == after[:shared]


def test_legend_lists_only_the_features_that_are_on() -> None:
    sparse = escape_legend(Config.from_preset("sparse"))
    assert "Distances:" in sparse and "ignore walls" in sparse
    assert "Position:" not in sparse and "Trail:" not in sparse
    nav = escape_legend(Config.from_preset("navigator"))
    assert "counted from your own start cell" in nav
    assert "It is a log: you can only append text" in nav
    assert "Distances:" not in nav
    shared = escape_legend(Config.from_preset("shared_frame"))
    assert "whose [0, 0] is agent A's start cell" in shared
    assert "- Radio: switched off in this game." in escape_legend(Config(radio=False))


def test_trail_wording_precise_and_plain() -> None:
    config = Config.from_preset("navigator")
    precise = escape_legend(config, trail="precise")
    plain = escape_legend(config, trail="plain")
    assert "It ends with last turn's cell, so it never includes where you are now" in precise
    assert "Trail: where you were on each of the last 30 turns, oldest first." in plain
    assert "ends with last turn's cell" not in plain


def test_legend_states_the_configured_limits() -> None:
    legend = escape_legend(
        Config(
            notebook_max_bytes=2000, notebook_turn_bytes=100, radio_max_bytes=50, radio_cooldown=3
        )
    )
    assert "(2000 bytes at most)" in legend and "At most 100 bytes of new text" in legend
    assert "(50 bytes at most); afterwards your radio needs 3 turns" in legend


def test_render_accepts_an_episode_and_a_real_env_observation() -> None:
    env = maze_escape_v0.parallel_env(preset="full", width=6, height=6)
    observations, _ = env.reset(seed=5)
    episode = EscapeEpisode("maze_envs/MazeEscape-v0", "B", env.config.agents, env.config)
    model = observation_to_model(observations["B"], env.config, "B")
    text = render_escape(model, episode, legend=True)
    assert text.startswith("How to read each turn's observation:")
    assert "Turn: 0 (120 turns left)." in text
    assert "Position: [0, 0]." in text
    assert "Trail: empty (this is your first turn)." in text


def test_wording_versions_are_data_and_unknown_ones_are_refused() -> None:
    assert load_wording("escape").version == "escape-v1"
    with pytest.raises(ValueError, match="no escape wording version 'v9'; shipped: v1"):
        load_wording("escape", "v9")
    with pytest.raises(ValueError, match="unknown environment kind"):
        load_wording("chess")  # type: ignore[arg-type]
