"""Turn rules on the hand-made comb board (see boards.py for the picture and distances)."""

from __future__ import annotations

import pytest

from maze_envs.escape.vocab import MoveResult
from tests.escape.boards import STAY, E, N, S, W, act, as_list, comb_env, step


def test_bumps_leave_the_agent_in_place_and_are_counted_by_kind() -> None:
    env = comb_env()
    env.reset(seed=0)
    obs, *_, infos = step(env, A=act(W), B=act(E))  # both interior walls
    assert infos["A"]["row_col"] == (4, 4) and infos["B"]["row_col"] == (4, 2)
    assert obs["A"]["last_action"]["move"] == MoveResult.BUMPED_INTERIOR_WALL
    assert infos["A"]["events"]["move"] == "bumped_interior_wall"
    obs, *_, infos = step(env, A=act(E), B=act(S))  # outer brick on the east and south sides
    assert obs["A"]["last_action"]["move"] == MoveResult.BUMPED_OUTER_BRICK
    assert infos["B"]["events"]["move"] == "bumped_outer_brick"
    assert infos["A"]["wall_bumps"] == 2 and infos["B"]["wall_bumps"] == 2
    assert infos["C"]["wall_bumps"] == 0
    obs, *_, infos = step(env, A=act(N))
    assert infos["A"]["row_col"] == (3, 4) and obs["A"]["last_action"]["move"] == MoveResult.MOVED
    assert infos["A"]["wall_bumps"] == 2
    assert obs["C"]["last_action"]["move"] == MoveResult.STAYED


def test_edges_name_walls_brick_and_the_open_doorway() -> None:
    env = comb_env()
    obs, _ = env.reset(seed=0)
    # A at the south-east corner: N open, E brick, S brick, W interior wall.
    assert as_list(obs["A"]["edges"]) == [0, 2, 2, 1]
    # C at the north-west corner: N brick, E open, S open, W brick.
    assert as_list(obs["C"]["edges"]) == [2, 0, 0, 2]
    for _ in range(4):
        obs, *_ = step(env, C=act(S))
    # The exit: N open, E interior wall, S the doorway (reads open), W brick.
    assert as_list(obs["C"]["edges"]) == [0, 1, 0, 2]
    assert obs["C"]["on_exit"] == 1


def test_moving_out_through_the_doorway_stays_on_the_exit_and_is_not_a_wall_bump() -> None:
    env = comb_env()
    env.reset(seed=0)
    for _ in range(4):
        step(env, C=act(S))
    obs, rewards, *_, infos = step(env, C=act(S))
    assert infos["C"]["row_col"] == (4, 0)
    assert obs["C"]["last_action"]["move"] == MoveResult.DOORWAY
    assert infos["C"]["events"]["move"] == "doorway"
    assert infos["C"]["doorway_moves"] == 1 and infos["C"]["wall_bumps"] == 0
    assert rewards["C"] == 0.0  # the first visit was paid on arrival


def test_simultaneous_moves_and_shared_cells() -> None:
    env = comb_env()
    env.reset(seed=0)
    # C walks east along the top row while A walks north up column 4: both end on (0, 4).
    for _ in range(4):
        step(env, A=act(N), C=act(E))
    obs, *_, infos = step(env)
    assert infos["A"]["row_col"] == infos["C"]["row_col"] == (0, 4)
    assert obs["A"]["teammate_notebooks"]["C"]["shown"] == 1
    # Moving apart at the same time: swap-free simultaneous resolution.
    obs, *_, infos = step(env, A=act(S), C=act(W))
    assert infos["A"]["row_col"] == (1, 4) and infos["C"]["row_col"] == (0, 3)


def test_exit_visit_pays_once_keeps_the_agent_in_play_and_success_terminates() -> None:
    env = comb_env(max_turns=50)
    env.reset(seed=0)
    for turn in range(1, 5):
        obs, rewards, terms, truncs, infos = step(env, C=act(S))
        assert infos["C"]["events"]["first_exit_visit"] is (turn == 4)
    assert obs["C"]["on_exit"] == 1
    assert rewards == {"A": 0.0, "B": 0.0, "C": 1.0}
    assert not any(terms.values()) and env.agents == ["A", "B", "C"]
    # C leaves and comes back: no second reward, still visited.
    obs, rewards, *_, infos = step(env, C=act(N))
    assert infos["C"]["visited_exit"] is True and rewards["C"] == 0.0
    obs, rewards, *_ = step(env, C=act(S))
    assert rewards["C"] == 0.0
    # B: up column 2 (4 moves), west along the top (2), down column 0 (4) = 10 moves.
    route_b = [N] * 4 + [W] * 2 + [S] * 4
    route_a = [N] * 4 + [W] * 4 + [S] * 4
    for k in range(12):
        moves = {"A": act(route_a[k])}
        if k < len(route_b):
            moves["B"] = act(route_b[k])
        _obs, rewards, terms, truncs, infos = step(env, **moves)
        if k == 9:
            assert rewards["B"] == 1.0 and not any(terms.values())
    # A's 12th move reaches the exit: A's visit reward plus the team bonus for everyone.
    assert rewards == {"A": 2.0, "B": 1.0, "C": 1.0}
    assert all(terms.values()) and not any(truncs.values())
    assert all(info["events"]["team_success"] for info in infos.values())
    assert env.agents == []
    assert env.outcome()["success"] is True and env.outcome()["turns"] == 18
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})


def test_team_sparse_pays_only_the_team_bonus() -> None:
    env = comb_env(reward_mode="team_sparse", team_bonus=3.0)
    env.reset(seed=0)
    routes = {"A": [N] * 4 + [W] * 4 + [S] * 4, "B": [N] * 4 + [W] * 2 + [S] * 4, "C": [S] * 4}
    for k in range(12):
        moves = {a: act(r[k]) for a, r in routes.items() if k < len(r)}
        _obs, rewards, terms, *_ = step(env, **moves)
        if k < 11:
            assert set(rewards.values()) == {0.0}
    assert rewards == {"A": 3.0, "B": 3.0, "C": 3.0} and all(terms.values())


def test_turn_limit_truncates_everyone() -> None:
    env = comb_env(max_turns=3)
    obs, _ = env.reset(seed=0)
    assert obs["A"]["turn"] == 0 and obs["A"]["turns_left"] == 3
    for turn in (1, 2, 3):
        obs, _rewards, terms, truncs, _ = step(env)
        assert obs["B"]["turn"] == turn and obs["B"]["turns_left"] == 3 - turn
    assert all(truncs.values()) and not any(terms.values())
    assert env.agents == []
    assert env.outcome()["success"] is False


def test_ground_truth_and_analysis_infos() -> None:
    env = comb_env()
    obs, infos = env.reset(seed=0)
    truth = env.ground_truth()
    assert truth["shortest_path_to_exit"] == {"A": 12, "B": 10, "C": 4}
    assert truth["fastest_possible_finish"] == 12
    assert infos["A"]["path_distance_to_exit"] == 12 and infos["A"]["xy"] == (4, 0)
    assert infos["C"]["fastest_possible_finish"] == 12
    for key in ("path_distance_to_exit", "position", "cell", "wall_bumps"):
        assert key not in obs["A"]
    step(env, A=act(N))
    _, _, _, _, infos = step(env, A=act(N))
    assert infos["A"]["path_distance_to_exit"] == 10 and infos["A"]["row_col"] == (2, 4)


def test_stay_keeps_everything() -> None:
    env = comb_env()
    env.reset(seed=0)
    obs, *_, infos = step(env, A=act(STAY))
    assert infos["A"]["row_col"] == (4, 4) and obs["A"]["last_action"]["move"] == MoveResult.STAYED
    assert infos["A"]["wall_bumps"] == 0
