"""radio_symbols=K in the scalar env: the radio carries one of K symbols, heard next turn, under
the radio's cooldown; off (0) nothing changes; a game with symbols journals and verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gymnasium import spaces

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.config import Config
from maze_envs.escape.types import Action, Observation
from maze_envs.text import render_escape
from maze_envs.verify import verify_journal
from wrappers.move_only import MoveOnlyActions

SMALL: dict[str, Any] = {"width": 6, "height": 6, "max_turns": 30}
NO_EDIT = {"edit": 0, "start": 0, "end": 0, "text": ""}


def act(move: int = 4, symbol: int = 0, radio: str = "") -> dict[str, Any]:
    return {"move": move, "notebook": dict(NO_EDIT), "radio": radio, "radio_symbol": symbol}


def test_off_by_default_and_left_out_of_every_dump() -> None:
    config = Config()
    assert config.radio_symbols == 0
    assert (
        "radio_symbols" not in config.model_dump()
        and "radio_symbols" not in config.model_dump_json()
    )
    assert Config(radio_symbols=3).model_dump()["radio_symbols"] == 3
    env = maze_escape_v1.parallel_env(**SMALL)
    assert "radio_symbol" not in env.action_space("A").spaces
    assert "radio_symbols" not in env.observation_space("A").spaces
    assert "radio_symbol" not in Action(move="N").model_dump()
    observations, _ = env.reset(seed=1)
    assert (
        "radio_symbols"
        not in Observation.from_space(observations["A"], env.config, "A").model_dump()
    )


def test_spaces_with_symbols() -> None:
    env = maze_escape_v1.parallel_env(radio_symbols=4, **SMALL)
    assert env.action_space("B")["radio_symbol"] == spaces.Discrete(5)
    assert env.observation_space("B")["radio_symbols"] == spaces.MultiDiscrete([5, 5, 5])
    v0 = maze_escape_v0.parallel_env(radio_symbols=4, **SMALL)
    assert v0.observation_space("B")["radio_symbols"] == spaces.MultiDiscrete([5, 5])


def test_a_symbol_is_heard_next_turn_by_the_others_then_the_radio_cools_down() -> None:
    env = maze_escape_v1.parallel_env(radio_symbols=4, radio_cooldown=2, **SMALL)
    observations, _ = env.reset(seed=3)
    assert observations["B"]["radio_symbols"].tolist() == [0, 0, 0]
    observations, *_ = env.step({"A": act(symbol=3), "B": act(), "C": act(symbol=1)})
    assert observations["B"]["radio_symbols"].tolist() == [3, 0, 1]
    assert observations["A"]["radio_symbols"].tolist() == [0, 0, 1]  # its own slot is blank
    assert observations["A"]["last_action"]["radio"] == 1  # sent
    assert observations["A"]["last_action"]["radio_cooldown"] == 2
    observations, *_ = env.step({"A": act(symbol=2), "B": act(), "C": act()})
    assert observations["B"]["radio_symbols"].tolist() == [0, 0, 0]  # refused: cooling down
    assert observations["A"]["last_action"]["radio"] == 2
    assert "cooling down" in observations["A"]["last_action"]["radio_reason"]
    env.step({"A": act(), "B": act(), "C": act()})
    observations, *_ = env.step({"A": act(symbol=2), "B": act(), "C": act()})
    assert observations["C"]["radio_symbols"].tolist() == [2, 0, 0]


def test_text_and_symbol_go_out_together_and_the_switched_off_radio_refuses_both() -> None:
    env = maze_escape_v1.parallel_env(radio_symbols=2, **SMALL)
    env.reset(seed=3)
    observations, *_ = env.step({"A": act(symbol=2, radio="north"), "B": act(), "C": act()})
    assert observations["B"]["radio"]["A"] == "north"
    assert observations["B"]["radio_symbols"].tolist() == [2, 0, 0]
    off = maze_escape_v1.parallel_env(radio_symbols=2, radio=False, **SMALL)
    off.reset(seed=3)
    observations, *_ = off.step({"A": act(symbol=2), "B": act(), "C": act()})
    assert observations["B"]["radio_symbols"].tolist() == [0, 0, 0]
    assert observations["A"]["last_action"]["radio"] == 2
    assert "switched off" in observations["A"]["last_action"]["radio_reason"]


def test_bad_symbols_are_clear_errors_before_anything_changes() -> None:
    env = maze_escape_v1.parallel_env(radio_symbols=2, **SMALL)
    env.reset(seed=0)
    without = {"move": 0, "notebook": dict(NO_EDIT), "radio": ""}
    with pytest.raises(ValueError, match=r"agent A: in a game with radio_symbols=2 .*radio_symbol"):
        env.step({"A": without, "B": act(), "C": act()})
    with pytest.raises(ValueError, match=r"agent B: radio_symbol must be an integer 0\.\.2"):
        env.step({"A": act(), "B": act(symbol=3), "C": act()})
    with pytest.raises(ValueError, match=r"agent C: radio_symbol must be an integer 0\.\.2"):
        env.step({"A": act(), "B": act(), "C": Action(move="N", radio_symbol=5)})
    fresh = maze_escape_v1.parallel_env(radio_symbols=2, **SMALL)
    fresh.reset(seed=0)
    assert env.state_digest() == fresh.state_digest()  # nothing changed
    plain = maze_escape_v1.parallel_env(**SMALL)
    plain.reset(seed=0)
    with pytest.raises(ValueError, match="this game has no radio symbols"):
        plain.step({"A": Action(radio_symbol=1), "B": Action(), "C": Action()})


def test_typed_actions_and_the_move_only_wrapper_carry_symbols() -> None:
    env = maze_escape_v1.parallel_env(radio_symbols=3, **SMALL)
    env.reset(seed=4)
    observations, *_ = env.step(
        {"A": Action(move="E", radio_symbol=3), "B": Action(), "C": Action()}
    )
    model = Observation.from_space(observations["B"], env.config, "B")
    assert model.radio_symbols == {"A": 3}
    assert "Radio symbols from last turn: A sent 3." in render_escape(model, env.config)
    assert model.to_space(env.config, "B", 1)["radio_symbols"].tolist() == [3, 0, 0]
    moves = MoveOnlyActions(maze_escape_v1.parallel_env(radio_symbols=3, **SMALL))
    moves.reset(seed=4)
    observations, *_ = moves.step({"A": 1, "B": 2, "C": 3})
    assert observations["A"]["radio_symbols"].tolist() == [0, 0, 0]


def test_a_game_with_symbols_journals_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "symbols.sqlite"
    env = maze_escape_v1.parallel_env(preset="full", radio_symbols=3, journal=path, **SMALL)
    env.reset(seed=8)
    env.action_space("A").seed(1)
    turn = 0
    while env.agents:
        actions: dict[str, Any] = {a: env.action_space(a).sample() for a in env.agents}
        if turn % 4 == 0:
            actions["B"] = Action(move="W", radio_symbol=1 + turn % 3)
        env.step(actions)
        turn += 1
    env.close()
    reports = verify_journal(path)
    assert [report.describe() for report in reports] == [f"game 1: ok, {turn + 1} turns verified"]


def test_the_state_digest_covers_the_symbols() -> None:
    digests = []
    for symbol in (1, 2):
        env = maze_escape_v1.parallel_env(radio_symbols=2, **SMALL)
        env.reset(seed=6)
        env.step({"A": act(symbol=symbol), "B": act(), "C": act()})
        digests.append(env.state_digest())
    assert digests[0] != digests[1]
