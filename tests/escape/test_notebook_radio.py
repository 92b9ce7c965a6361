"""Notebook (splice, rolling log) and radio rules, through the environment and directly."""

from __future__ import annotations

from maze_envs.escape.notebook import append_line, splice
from maze_envs.escape.radio import check_message
from maze_envs.escape.vocab import NotebookResult, RadioResult
from tests.escape.boards import N, act, comb_env, log_act, step


def test_splice_inserts_deletes_and_replaces_by_character_position() -> None:
    env = comb_env()
    env.reset(seed=0)
    obs, *_ = step(env, A=act(edit=(0, 0, "hello world")))
    assert obs["A"]["notebook"] == "hello world"
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.APPLIED
    obs, *_ = step(env, A=act(edit=(6, 11, "maze")))
    assert obs["A"]["notebook"] == "hello maze"
    obs, *_ = step(env, A=act(edit=(0, 6, "")))
    assert obs["A"]["notebook"] == "maze"
    obs, *_ = step(env, A=act(edit=(4, 4, "→é")))  # positions count characters, not bytes
    obs, *_ = step(env, A=act(edit=(6, 6, "!")))
    assert obs["A"]["notebook"] == "maze→é!"
    assert obs["B"]["notebook"] == ""  # an edit touches only the editor's notebook


def test_rejected_splices_leave_the_notebook_and_say_why() -> None:
    env = comb_env()
    env.reset(seed=0)
    step(env, A=act(edit=(0, 0, "abc")))
    obs, *_, infos = step(env, A=act(edit=(2, 9, "x")))
    assert obs["A"]["notebook"] == "abc"
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.REJECTED
    assert (
        "end 9 is beyond the notebook's 3 characters" in obs["A"]["last_action"]["notebook_reason"]
    )
    assert infos["A"]["events"]["notebook"] == "rejected"
    obs, *_ = step(env, A=act(edit=(2, 1, "x")))
    assert obs["A"]["notebook"] == "abc"
    assert obs["A"]["last_action"]["notebook_reason"] == "start 2 is after end 1"
    obs, *_ = step(env, A=act(N))  # no edit: the result goes back to none
    assert (
        obs["A"]["last_action"]["notebook"] == NotebookResult.NONE
        and obs["A"]["last_action"]["notebook_reason"] == ""
    )


def test_new_text_per_turn_limit_is_exact_in_utf8_bytes() -> None:
    env = comb_env(notebook_turn_bytes=1024)
    env.reset(seed=0)
    obs, *_ = step(env, A=act(edit=(0, 0, "é" * 512)))  # 1024 bytes
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.APPLIED
    assert len(obs["A"]["notebook"]) == 512
    obs, *_ = step(env, B=act(edit=(0, 0, "é" * 512 + "x")))  # 1025 bytes
    assert obs["B"]["notebook"] == ""
    assert obs["B"]["last_action"]["notebook_reason"] == (
        "new text is 1025 bytes; at most 1024 bytes of new text per turn"
    )


def test_notebook_size_limit_is_exact_and_never_trims() -> None:
    env = comb_env(notebook_max_bytes=10, notebook_turn_bytes=10)
    env.reset(seed=0)
    obs, *_ = step(env, A=act(edit=(0, 0, "12345678é")))  # 8 + 2 = 10 bytes
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.APPLIED
    obs, *_ = step(env, A=act(edit=(9, 9, "x")))
    assert obs["A"]["notebook"] == "12345678é"
    assert "would be 11 bytes; it holds at most 10" in obs["A"]["last_action"]["notebook_reason"]
    obs, *_ = step(env, A=act(edit=(8, 9, "y")))  # replacing é (2 bytes) with y fits
    assert obs["A"]["notebook"] == "12345678y"


def test_rolling_log_appends_lines_and_drops_the_oldest_whole_lines() -> None:
    env = comb_env(notebook_mode="rolling_log", notebook_max_bytes=12, notebook_turn_bytes=8)
    env.reset(seed=0)
    obs, *_ = step(env, A=log_act(append="one"))
    assert obs["A"]["notebook"] == "one\n"
    obs, *_ = step(env, A=log_act(append="two\n"))  # an ending newline is not doubled
    assert obs["A"]["notebook"] == "one\ntwo\n"
    obs, *_ = step(env, A=log_act(append="three"))  # 14 bytes > 12: "one\n" goes
    assert obs["A"]["notebook"] == "two\nthree\n"
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.APPLIED
    assert obs["A"]["last_action"]["notebook_reason"] == "dropped 1 oldest line(s) to fit 12 bytes"
    obs, *_ = step(env, A=log_act(append="123456789"))  # 9 bytes of new text > 8
    assert obs["A"]["notebook"] == "two\nthree\n"
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.REJECTED
    obs, *_ = step(env, A=log_act(append=""))  # empty append = no edit
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.NONE


def test_notebook_rule_functions_directly() -> None:
    assert splice("abc", 1, 2, "XY", max_bytes=10, turn_bytes=10) == ("aXYc", "")
    assert splice("abc", 0, 3, "", max_bytes=10, turn_bytes=10) == ("", "")
    assert splice("", 0, 1, "", max_bytes=10, turn_bytes=10)[0] is None
    new, reason = append_line("a\nb\nc\n", "dddd", max_bytes=8, turn_bytes=8)
    assert (new, reason) == ("c\ndddd\n", "dropped 2 oldest line(s) to fit 8 bytes")
    assert append_line("", "12345678", max_bytes=8, turn_bytes=8)[0] is None  # 9 with newline
    multi, _ = append_line("", "x\ny", max_bytes=8, turn_bytes=8)
    assert multi == "x\ny\n"


def test_radio_reaches_every_other_agent_next_turn_only() -> None:
    env = comb_env()
    env.reset(seed=0)
    obs, *_, infos = step(env, A=act(radio="exit is south-west"))
    assert obs["B"]["radio"] == {"A": "exit is south-west", "C": ""}
    assert obs["C"]["radio"]["A"] == "exit is south-west"
    assert "A" not in obs["A"]["radio"]  # not echoed to the sender
    assert obs["A"]["last_action"]["radio"] == RadioResult.SENT
    assert infos["A"]["events"]["radio"] == "sent"
    obs, *_ = step(env)
    assert obs["B"]["radio"] == {"A": "", "C": ""}


def test_radio_size_limit_is_exact_in_bytes() -> None:
    env = comb_env(radio_max_bytes=280)
    env.reset(seed=0)
    obs, *_ = step(env, A=act(radio="é" * 140), B=act(radio="é" * 140 + "x"))
    assert obs["C"]["radio"] == {"A": "é" * 140, "B": ""}
    assert obs["B"]["last_action"]["radio"] == RadioResult.REFUSED
    assert (
        obs["B"]["last_action"]["radio_reason"]
        == "message is 281 bytes; at most 280 bytes per message"
    )
    assert obs["B"]["last_action"]["radio_cooldown"] == 0  # a refusal starts no cooldown


def test_radio_cooldown_counts_down_and_refuses_with_a_reason() -> None:
    env = comb_env(radio_cooldown=5)
    env.reset(seed=0)
    obs, *_ = step(env, A=act(radio="t1"))
    assert obs["A"]["last_action"]["radio_cooldown"] == 5
    for turn, left in zip(range(2, 7), (5, 4, 3, 2, 1), strict=True):
        obs, *_ = step(env, A=act(radio=f"t{turn}"))
        assert obs["A"]["last_action"]["radio"] == RadioResult.REFUSED, turn
        assert obs["A"]["last_action"]["radio_reason"] == (
            f"radio cooling down: {left} more turn(s) before you can send"
        )
        assert obs["A"]["last_action"]["radio_cooldown"] == left - 1
        assert obs["B"]["radio"]["A"] == ""
    obs, *_ = step(env, A=act(radio="t7"))
    assert obs["A"]["last_action"]["radio"] == RadioResult.SENT and obs["B"]["radio"]["A"] == "t7"


def test_radio_switched_off_refuses_everything() -> None:
    env = comb_env(radio=False)
    env.reset(seed=0)
    obs, *_ = step(env, A=act(radio="hello"))
    assert obs["B"]["radio"] == {"A": "", "C": ""}
    assert obs["A"]["last_action"]["radio_reason"] == "the radio is switched off in this game"
    assert check_message("x", enabled=True, max_bytes=1, cooldown_left=0) == ""


def test_teammate_notebooks_are_shown_only_on_the_same_cell() -> None:
    env = comb_env()
    env.reset(seed=0)
    step(env, A=act(edit=(0, 0, "A's notes")), C=act(edit=(0, 0, "C's notes")))
    for _ in range(4):
        obs, *_ = step(env, A=act(N), C=act(1))
    assert obs["A"]["teammate_notebooks"]["C"] == {"shown": 1, "text": "C's notes"}
    assert obs["C"]["teammate_notebooks"]["A"] == {"shown": 1, "text": "A's notes"}
    assert obs["A"]["teammate_notebooks"]["B"] == {"shown": 0, "text": ""}
    assert obs["B"]["teammate_notebooks"]["A"] == {"shown": 0, "text": ""}
    obs, *_ = step(env, A=act(2))
    assert obs["C"]["teammate_notebooks"]["A"]["shown"] == 0
