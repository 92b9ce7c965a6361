"""Issue 6 behaviours of Maze Escape not covered elsewhere: action keys that are not strings,
bad actions in the AEC form, and observations independent of one another and of the env."""

from __future__ import annotations

import hashlib
import pydoc
import subprocess
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.vocab import Move, NotebookResult
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal

SMALL: dict[str, Any] = {"preset": "full", "width": 7, "height": 6, "max_turns": 40}
ARRAY_FIELDS = ("edges", "position", "used_exits", "colocated_with", "distances", "trail")


def good(move: int = Move.STAY, text: str = "") -> dict[str, Any]:
    edit: dict[str, Any] = {"edit": int(bool(text)), "start": 0, "end": 0, "text": text}
    return {"move": int(move), "notebook": edit, "radio": ""}


def plus(mapping: dict[str, Any], key: Any, value: Any) -> dict[Any, Any]:
    """``mapping`` with one more entry (``key`` may be anything: that is the point)."""
    out: dict[Any, Any] = dict(mapping)
    out[key] = value
    return out


EACH = r"step needs one action for each of \['A', 'B', 'C'\], got "


@pytest.mark.parametrize("module", [maze_escape_v0, maze_escape_v1])
@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ({"A": good(), 7: good(), "C": good()}, EACH + r"\['A', 'C', 7\]"),  # 7 for "B"
        ({"A": good(), "B": good(), "C": good(), 7: good()}, EACH + r"\['A', 'B', 'C', 7\]"),
        ({"A": good(), "B": good(), "C": good(), None: good()}, EACH + r"\['A', 'B', 'C', None\]"),
        (
            {"A": plus(good(), 7, 1), "B": good(), "C": good()},
            r"agent A: an action is a dict with exactly the keys .* got the keys .*, 7\]",
        ),
        (
            {"A": good(), "B": {**good(), "notebook": plus(good()["notebook"], 3, 1)}, "C": good()},
            r"agent B: notebook must be a dict with exactly the keys .* got the keys .*, 3\]",
        ),
    ],
)
def test_keys_that_are_not_strings_raise_value_error_and_change_nothing(
    module: Any, actions: dict[Any, Any], message: str
) -> None:
    env = module.parallel_env(**SMALL)
    env.reset(seed=1)
    before = env.state_digest()
    with pytest.raises(ValueError, match=message) as raised:
        env.step(actions)
    assert not isinstance(raised.value, TypeError)
    assert env.state_digest() == before
    obs, *_ = env.step({agent: good() for agent in env.agents})  # still usable
    assert obs["A"]["turn"] == 1


def test_a_bad_aec_action_raises_at_its_own_step_stores_nothing_and_the_game_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "aec.sqlite"
    with Journal(path) as journal:
        env = maze_escape_v1.env(**SMALL, journal=journal)
        env.reset(seed=2)
        env.step(good(Move.E))  # A
        assert env.agent_selection == "B"
        with pytest.raises(ValueError, match="agent B"):
            env.step({"move": 9})  # B's bad action raises right here
        assert env.agent_selection == "B"  # nothing stored: still B's turn
        with pytest.raises(ValueError, match="agent B"):
            env.step({"move": Move.E, "notebook": {}, "radio": 5})
        env.step(good(Move.S))  # B again, valid
        env.step(good(Move.W))  # C: the round resolves
        assert env.observe("A")["turn"] == 1
        for _ in range(6):  # two more whole rounds, every step valid
            env.step(good())
        assert env.observe("C")["turn"] == 3
        env.close()
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified, report.problem) == ("aborted", 4, None)
    with Journal(path, readonly=True) as journal:
        (game_id,) = journal.game_ids()
        turns = list(journal.turns(game_id))
    assert [record.turn for record in turns] == [0, 1, 2, 3]
    assert turns[1].actions["B"]["move"] == Move.S  # the valid action, not the refused ones


def test_mapping_actions_in_the_aec_form_are_stored_as_plain_data(tmp_path: Path) -> None:
    path = tmp_path / "aec.sqlite"
    with Journal(path) as journal:
        env = maze_escape_v1.env(**SMALL, journal=journal)
        env.reset(seed=3)
        for agent in ("A", "B", "C"):
            action = good(Move.E, text=agent)
            action["notebook"] = MappingProxyType(action["notebook"])
            env.step(MappingProxyType(action))
        env.close()
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("aborted", 2)


def _arrays(obs: dict[str, dict[str, Any]]) -> list[np.ndarray]:
    return [a[f] for a in obs.values() for f in ARRAY_FIELDS if isinstance(a.get(f), np.ndarray)]


@pytest.mark.parametrize("module", [maze_escape_v0, maze_escape_v1])
def test_observation_arrays_are_independent_across_agents_turns_and_the_env(module: Any) -> None:
    env = module.parallel_env(**SMALL)
    first, _ = env.reset(seed=4)
    second, *_ = env.step({agent: good() for agent in env.agents})  # everyone stays
    arrays = _arrays(first) + _arrays(second)
    assert len(arrays) == 2 * 3 * len(ARRAY_FIELDS)
    for index, array in enumerate(arrays):
        assert array.flags.writeable
        for other in arrays[index + 1 :]:
            assert not np.shares_memory(array, other)
    kept = {f: second["B"][f].copy() for f in ARRAY_FIELDS}
    digest = env.state_digest()
    for array in _arrays(first) + [second["A"][f] for f in ARRAY_FIELDS]:
        array += 1  # a user changing their own copies
    assert env.state_digest() == digest
    for field, value in kept.items():
        np.testing.assert_array_equal(second["B"][field], value)
    third, *_ = env.step({agent: good() for agent in env.agents})
    for agent, obs in third.items():
        space = env.observation_space(agent)
        assert space.contains(obs)
    # nobody moved: the env still shows the values it had before the user's changes
    for field in ("edges", "position", "used_exits"):
        np.testing.assert_array_equal(third["A"][field], second["A"][field] - 1)
        np.testing.assert_array_equal(third["B"][field], kept[field])


def test_the_splice_boundary_is_the_action_space_past_the_text_is_a_rejection() -> None:
    env = maze_escape_v1.parallel_env(**SMALL)
    env.reset(seed=5)
    before = env.state_digest()
    beyond = {**good(), "notebook": {"edit": 1, "start": 0, "end": 65537, "text": ""}}
    with pytest.raises(ValueError, match=r"agent A: .*0\.\.65536"):
        env.step({"A": beyond, "B": good(), "C": good()})
    assert env.state_digest() == before
    past = {**good(), "notebook": {"edit": 1, "start": 40, "end": 65536, "text": "x"}}
    assert env.action_space("A").contains(past)
    obs, *_ = env.step({"A": past, "B": good(), "C": good()})
    assert obs["A"]["notebook"] == ""
    assert obs["A"]["last_action"]["notebook"] == NotebookResult.REJECTED
    assert obs["A"]["last_action"]["notebook_reason"] != ""


def test_the_versioned_modules_load_lazily_from_the_package() -> None:
    code = (
        "import sys, maze_envs\n"
        "assert 'maze_envs.maze_escape_v0' not in sys.modules\n"
        "v0, v1 = maze_envs.maze_escape_v0, maze_envs.maze_escape_v1\n"
        "env = v0.parallel_env(preset='sparse', width=5, height=5)\n"
        "print(v0.__name__, v1.__name__, sorted(env.reset(seed=0)[0]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == (
        "maze_envs.maze_escape_v0 maze_envs.maze_escape_v1 ['A', 'B', 'C']"
    )


@pytest.mark.parametrize("target", [maze_escape_v0, maze_escape_v1, MazeEscapeEnv])
def test_help_shows_the_sections_and_the_conventions(target: Any) -> None:
    renderer = pydoc.plaintext  # type: ignore[attr-defined]
    words = pydoc.render_doc(target, renderer=renderer).split()
    text = " ".join(word for word in words if word != "|")  # a class's help has a margin
    for section in ("Description", "Action Space", "Observation Space", "Rewards"):
        assert f"## {section}" in text  # MiniGrid's headings (issue 17)
    assert "## Episode End" in text
    assert "its last entry is last turn's cell, which equals the current cell after a bump" in text
    assert "``absolute`` has its origin at the south-west corner cell" in text
    assert "``row_col`` (the same cell as ``(row, column)``, row 0 north" in text
    assert "past the end of the notebook's text" in text


def _documented_digest(env: Any) -> bytes:
    """The state digest rebuilt from :class:`~maze_envs.escape.engine.StateDigest`'s
    documented byte layout, independently of its optimised code (journals of earlier runs must
    keep verifying, so the bytes may never change by accident)."""
    state, board = env._state, env._board

    def text(value: str) -> bytes:
        data = value.encode()
        if len(data) < 128:
            return b"\0" + len(data).to_bytes(8, "little") + data
        return b"\1" + hashlib.sha256(data).digest()

    ints = [state.turn, int(state.success)]
    for field in (
        "positions",
        "visited_exit",
        "first_visit_turn",
        "radio_ready_turn",
        "wall_bumps",
        "doorway_moves",
        "moves",
        "move_result",
        "notebook_result",
        "radio_result",
    ):
        ints.extend(int(v) for v in getattr(state, field))
    parts = [b"maze_escape_v0/state/2", board.digest]
    parts += [int(v).to_bytes(8, "little", signed=True) for v in ints]
    parts += [bytes(mask) for mask in state.used_exits]
    for field in ("notebooks", "radio_outbox", "notebook_reason", "radio_reason"):
        parts += [text(value) for value in getattr(state, field)]
    trail = [int(c) for row in state.trail for c in row]
    parts += [c.to_bytes(8, "little", signed=True) for c in trail]
    return hashlib.sha256(b"".join(parts)).digest()


@pytest.mark.parametrize("preset", ["sparse", "full"])
def test_the_state_digest_has_its_documented_bytes_every_turn(preset: str) -> None:
    env = maze_escape_v1.parallel_env(preset=preset, width=6, height=5, max_turns=50)
    env.reset(seed=8)
    for agent in env.possible_agents:
        env.action_space(agent).seed(8)
    turns = 0
    while env.agents:
        assert env.state_digest() == _documented_digest(env)
        env.step({agent: env.action_space(agent).sample() for agent in env.agents})
        turns += 1
    assert env.state_digest() == _documented_digest(env) and turns >= 1
