"""Schema version 4's change storage: every turn reads back byte for byte, whatever changes.

The stored forms the issue asks for are checked on real games: a notebook is an edit against
its previous version, a teammate's notebook and a repeated radio message are references,
counters that tick cost nothing; and random sequences of values of every JSON kind (texts that
grow, slide, shrink or change anywhere, integers, floats, arrays, nested objects whose keys come
and go, objects that look like the markers) always read back exactly.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maze_envs import maze_escape_v1
from maze_envs.journal.changes import ChangeWriter, whole
from maze_envs.journal.edits import text_edit
from maze_envs.journal.format import encode_json_bytes
from maze_envs.journal.rebuild import ChangeReader


def round_trip(values: list[Any], actions: list[bytes] | None = None) -> list[bytes]:
    """Encode the turns, read them back, check each against its JSON; the stored texts."""
    writer, reader = ChangeWriter(), ChangeReader()
    stored = []
    for index, value in enumerate(values):
        acts = actions[index] if actions else b"{}"
        text = writer.encode(value, acts)
        stored.append(text)
        assert reader.decode(text, acts) == encode_json_bytes(value), (index, text)
    return stored


# -- real games --------------------------------------------------------------------------------


def escape_turns(turns: int) -> list[tuple[dict[str, Any], bytes]]:
    """Observations of a small navigator game with notes and radio, and each turn's actions."""
    env = maze_escape_v1.parallel_env(preset="navigator", width=5, height=5, max_turns=turns)
    rng = np.random.default_rng(4)
    observations, _ = env.reset(seed=38)  # a seed where the agents meet often
    result = [(observations, b"{}")]
    for turn in range(1, turns + 1):
        actions = {
            agent: {
                "move": int(rng.integers(5)),
                "notebook": {"append": f"turn {turn}: {agent} saw the piano at {turn % 7} o'clock"},
                "radio": f"{agent} to all: heading north from the piano" if turn % 5 == 0 else "",
            }
            for agent in env.agents
        }
        observations, *_ = env.step(actions)
        result.append((observations, encode_json_bytes(actions)))
        if not env.agents:
            break
    return result


def test_a_game_reads_back_and_stores_notebooks_as_edits_and_references() -> None:
    turns = escape_turns(60)
    stored = round_trip([obs for obs, _ in turns], [acts for _, acts in turns])
    texts = [orjson.loads(text) for text in stored]
    assert texts[0].pop("$w") == 1  # the first turn is read without a turn before it
    assert "notebook" in texts[0]["A"] and "turn" in texts[0]["A"]  # turn 0: whole
    later = texts[30]["A"]
    assert "turn" not in later and "turns_left" not in later  # counters: predicted
    # the notebook: a copy of its previous version and of the note in this turn's action
    edit = later["notebook"]["$s"]
    assert edit[0] == [0, len(turns[29][0]["A"]["notebook"])] and "a" in edit[1]
    shown = [
        (turn, agent, name)
        for turn, text in enumerate(texts)
        for agent, observation in text.items()
        for name, entry in observation.get("teammate_notebooks", {}).items()
        if isinstance(entry, dict) and isinstance(entry.get("text"), dict)
    ]
    refs = [(t, a, n) for t, a, n in shown if "$r" in texts[t][a]["teammate_notebooks"][n]["text"]]
    assert refs, "a teammate's notebook shown on a shared cell is stored as a reference"
    turn, agent, name = refs[0]
    assert texts[turn][agent]["teammate_notebooks"][name]["text"]["$r"] == [name, "notebook"]
    heard = [text for text in texts if any("radio" in obs for obs in text.values())]
    assert heard
    assert any("$r" in str(text) for text in heard)  # a message every teammate hears: once
    whole = sum(len(encode_json_bytes(obs)) for obs, _ in turns)
    assert sum(map(len, stored)) < whole / 10


def test_a_notebook_rolling_past_its_cap_is_a_copy_a_note_and_a_newline() -> None:
    old = "".join(f"line {i}: a note about the maze\n" for i in range(40))
    new = old[old.index("\n") + 1 :] + "line 40: the note from the action\n"
    actions = orjson.dumps({"A": {"notebook": {"append": "line 40: the note from the action"}}})
    stored = text_edit(old, new, actions)
    assert stored is not None
    ops = orjson.loads(stored)["$s"]
    assert ops[0] == [old.index("\n") + 1, len(old)] and list(ops[1]) == ["a"] and ops[2] == "\n"
    assert len(stored) < 40


# -- anything ----------------------------------------------------------------------------------

WORDS = ["north", "piano", "the exit", "été", "日本", "\\", '"', "\n", "$n", "$s", "{", "😀"]
texts = st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join)
scalars = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    texts,
)
leaves = st.one_of(scalars, st.lists(scalars, max_size=6))
keys = st.sampled_from(["a", "b", "c", "$n", "$s", "$r", "$e", "$l", "x y", "é"])


def objects(depth: int) -> st.SearchStrategy[Any]:
    inner = leaves if depth >= 4 else st.one_of(leaves, objects(depth + 1))
    return st.dictionaries(keys, inner, max_size=4)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(objects(1), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_any_sequence_of_values_reads_back_exactly(
    values: list[dict[str, Any]], rng: random.Random
) -> None:
    # each turn is the previous one changed a little, or something else entirely
    turns: list[dict[str, Any]] = []
    for value in values:
        if turns and rng.random() < 0.6:
            value = mutate(turns[-1], rng)
        turns.append({"A": value, "B": value if rng.random() < 0.3 else {"k": [1, 2]}})
    round_trip(turns)


def mutate(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        changed = {
            key: mutate(item, rng) if rng.random() < 0.5 else item for key, item in value.items()
        }
        if rng.random() < 0.2:
            changed[rng.choice(["a", "b", "$n", "z"])] = rng.choice([1, "new", {"$s": 1}, []])
        return changed
    if isinstance(value, str):
        cut = rng.randrange(len(value) + 1)
        return rng.choice(
            [
                value + " more",
                value[cut:] + " more",
                "front " + value,
                value[:cut] + "é" + value[cut:],
            ]
        )
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value + rng.choice([0, 1, -1, 7]) if abs(value) < 2**62 else value
    if isinstance(value, list):
        return [*value[1:], rng.choice([1, "x", 2.5])]
    return value


def test_counters_arrays_and_marker_lookalikes_read_back() -> None:
    turns = []
    for turn in range(12):
        turns.append(
            {
                "A": {
                    "turn": turn,
                    "left": 100 - 2 * turn,
                    "cooldown": max(0, 5 - turn),
                    "trail": np.arange(turn, turn + 30).reshape(15, 2),
                    "grid": np.zeros((3, 3), dtype=np.int8) + (turn // 4),
                    "score": np.float32(turn / 3),
                    "id": np.int64(7),
                    "looks": {"$s": [1, 2]} if turn % 2 else {"$n": 1, "x": turn},
                    "deep": {"a": {"b": {"c": {"d": turn // 3}}}},
                },
                "B": turn if turn < 6 else {"now": "an object"},
            }
        )
    stored = round_trip(turns)
    assert b'"turn"' not in stored[5] and b'"left"' not in stored[5]


@pytest.mark.parametrize("bad", [b"[1]", b'{"A":{"$s":[[0,99]]}}', b'{"A":{"$r":["Z"]}}', b"{x"])
def test_stored_changes_that_cannot_be_applied_are_a_value_error(bad: bytes) -> None:
    writer, reader = ChangeWriter(), ChangeReader()
    reader.decode(
        writer.encode({"A": {"text": "a notebook of forty characters or more.."}}, b""), b""
    )
    with pytest.raises(ValueError):
        reader.decode(bad, b"")


def test_turns_stored_whole_read_back_and_mix_with_changes() -> None:
    turns = escape_turns(30)
    writer, reader = ChangeWriter(), ChangeReader()
    for index, (value, actions) in enumerate(turns):
        if index % 7 in (3, 4):  # a journal that stores whole, then changes again
            text = whole(value, actions)
            writer = ChangeWriter()
            assert text.startswith(b'{"$w":1,"A":{"edges":')
        else:
            text = writer.encode(value, actions)
        assert reader.decode(text, actions) == encode_json_bytes(value), index
    odd = {"A": {"$s": "a marker's name as a key", "text": "$5"}}
    assert ChangeReader().decode(whole(odd, b""), b"") == encode_json_bytes(odd)
    with pytest.raises(TypeError, match="agent names may not start"):
        whole({"$w": 1}, b"")


def test_a_journal_that_stores_turns_whole_reads_and_verifies_the_same(tmp_path: Path) -> None:
    from maze_envs.journal import Journal
    from maze_envs.verify import verify_journal

    texts = {}
    for changes in (True, False):
        path = tmp_path / f"{changes}.sqlite"
        with Journal(path, changes=changes) as journal:
            env = maze_escape_v1.parallel_env(preset="navigator", width=6, height=6,
                                              max_turns=40, journal=journal)  # fmt: skip
            rng = np.random.default_rng(1)
            env.reset(seed=2)
            while env.agents:
                env.step({a: {"move": int(rng.integers(5)), "notebook": {"append": "a note"},
                              "radio": ""} for a in env.agents})  # fmt: skip
            env.close()
        assert [r.status for r in verify_journal(path)] == ["ok"]
        with Journal(path, readonly=True) as journal:
            texts[changes] = [(t.raw_observations, t.raw_events) for t in journal.turns(1)]
    assert texts[True] == texts[False]
    assert (tmp_path / "True.sqlite").stat().st_size < (tmp_path / "False.sqlite").stat().st_size


def test_after_a_turn_that_could_not_be_recorded_the_next_is_read_without_its_writer(
    tmp_path: Path,
) -> None:
    """The journal forgets what its change writer knew when a turn cannot be recorded; the next
    turn is stored to be read without the turn before (``$w``), and the game reads back."""
    from maze_envs.journal import Journal, JournalError

    values = [
        {"A": {"turn": t, "left": 10 - 2 * t, "text": "one note " * (t + 6)}} for t in range(8)
    ]
    with Journal(tmp_path / "games.sqlite", durability="turn") as journal:
        game = journal.start_game(env_id="toy", config={}, seed=0, library_version="t")
        for turn in range(4):
            journal.record_turn(game, turn, observations=values[turn], actions={}, events={},
                                state_digest=b"x")  # fmt: skip
        with pytest.raises(JournalError, match="cannot record turn 4"):
            journal.record_turn(game, 4, observations={"A": {"bad": object()}}, actions={},
                                events={}, state_digest=b"x")  # fmt: skip
        for turn in range(4, 8):
            journal.record_turn(game, turn, observations=values[turn], actions={}, events={},
                                state_digest=b"x")  # fmt: skip
        stored = [row[1] for row in journal.raw_turns(game)]
        assert stored[4].startswith('{"$w":1,') and not stored[5].startswith('{"$w"')
        assert [t.observations for t in journal.turns(game)] == values
