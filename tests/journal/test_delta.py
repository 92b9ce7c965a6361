"""Schema version 5's change storage: every turn reads back byte for byte, whatever changes.

The stored forms the issues ask for are checked on real games: a notebook is an edit against its
previous version, a teammate's notebook and a long radio message every teammate hears are
references, counters that tick cost nothing, and a game stores a small fraction of its
observations; and random sequences of values of every JSON kind (texts that grow, slide, shrink
or change anywhere, integers, floats, arrays, nested objects whose keys come and go, objects that
look like the markers), with and without change hints, always read back exactly. A wrong hint
fails loudly (the test run checks every hint).
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maze_envs import maze_escape_v1
from maze_envs.journal import Journal, JournalError
from maze_envs.journal.body import BodyPacker, BodyUnpacker
from maze_envs.journal.delta import DeltaWriter, Hint, WrongHintError, checking_hints, text_edit
from maze_envs.journal.delta_reader import DeltaReader
from maze_envs.journal.format import encode_json_bytes
from maze_envs.verify import verify_journal
from tests.journal.tamper import stored_turns


def round_trip(values: list[Any], hints: list[Hint | None] | None = None) -> list[bytes]:
    """Encode the turns (with hints, checked), read them back, check each against its JSON."""
    writer, reader = DeltaWriter(check_hints=True), DeltaReader()
    stored = []
    for index, value in enumerate(values):
        text = writer.encode(value, hints[index] if hints else None)
        stored.append(text)
        assert reader.text(text) == encode_json_bytes(value), (index, text)
    return stored


def exact_hints(values: list[dict[str, Any]]) -> list[Hint | None]:
    """For each turn, the keys of each agent's value whose JSON changed (what a hint lists)."""
    hints: list[Hint | None] = [None]
    for before, after in itertools.pairwise(values):
        hint = {}
        for agent, value in after.items():
            old = before.get(agent)
            if isinstance(value, dict) and isinstance(old, dict):
                hint[agent] = {
                    key
                    for key, item in value.items()
                    if key not in old or encode_json_bytes(item) != encode_json_bytes(old[key])
                }
        hints.append(hint)
    return hints


# -- real games --------------------------------------------------------------------------------

LONG_MESSAGE = "{agent} to all: heading north from the piano, the exit is past the tree"


def escape_turns(turns: int) -> list[tuple[dict[str, Any], Hint | None]]:
    """Observations of a small navigator game with notes and radio, and each turn's hint."""
    env = maze_escape_v1.parallel_env(preset="navigator", width=5, height=5, max_turns=turns)
    rng = np.random.default_rng(4)
    observations, _ = env.reset(seed=38)  # a seed where the agents meet often
    observer = env.unwrapped._observer
    result: list[tuple[dict[str, Any], Hint | None]] = [(observations, None)]
    for turn in range(1, turns + 1):
        actions = {
            agent: {
                "move": int(rng.integers(5)),
                "notebook": {"append": f"turn {turn}: {agent} saw the piano at {turn % 7} o'clock"},
                "radio": LONG_MESSAGE.format(agent=agent) if turn % 5 == 0 else "",
            }
            for agent in env.agents
        }
        observations, *_ = env.step(actions)
        result.append((observations, observer.changes(env.unwrapped._state)))
        if not env.agents:
            break
    return result


def test_a_game_reads_back_and_stores_notebooks_as_edits_and_references() -> None:
    turns = escape_turns(60)
    values = [obs for obs, _ in turns]
    stored = round_trip(values)
    assert round_trip(values, [hint for _, hint in turns]) != stored  # hinted: written apart
    texts = [orjson.loads(text) for text in stored]
    assert "notebook" in texts[0]["A"] and "turn" in texts[0]["A"]  # turn 0: whole
    later = texts[30]["A"]
    assert "turn" not in later and "turns_left" not in later  # counters: predicted
    # the notebook: a copy of its previous version and the new note
    edit = later["notebook"]["$s"]
    assert edit[0] == [0] and edit[1] == values[30]["A"]["notebook"][-len(edit[1]) :]
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
    # what the game's stream stores of them (each turn compressed against the last few): a
    # small fraction of the observations
    whole = sum(len(encode_json_bytes(obs)) for obs in values)
    packer = BodyPacker()
    bodies = [packer.pack([b"{}", text, b"{}", b"{}"]) for text in stored]
    assert sum(map(len, stored)) < whole / 5 and sum(map(len, bodies)) < whole / 25


def test_a_notebook_rolling_past_its_cap_is_a_copy_and_the_new_note() -> None:
    old = "".join(f"line {i}: a note about the maze\n" for i in range(40))
    new = old[old.index("\n") + 1 :] + "line 40: the note from the action\n"
    stored = text_edit(old, new)
    assert stored is not None
    ops = orjson.loads(stored)["$s"]
    assert ops == [[old.index("\n") + 1], "line 40: the note from the action\n"]
    assert len(stored) < 70


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
keys = st.sampled_from(["a", "b", "c", "$n", "$s", "$r", "$t", "$l", "x y", "é"])


def objects(depth: int) -> st.SearchStrategy[Any]:
    inner = leaves if depth >= 4 else st.one_of(leaves, objects(depth + 1))
    return st.dictionaries(keys, inner, max_size=4)


def changing_turns(values: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Turns of agents A and B: A's value each turn is the previous one changed a little (6 in
    10) or the next of ``values``; B's is A's very object (3 in 10) or a fixed one."""
    turns: list[dict[str, Any]] = []
    for value in values:
        if turns and rng.random() < 0.6:
            value = mutate(turns[-1]["A"], rng)
        turns.append({"A": value, "B": value if rng.random() < 0.3 else {"k": [1, 2]}})
    return turns


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(objects(1), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_any_sequence_of_values_reads_back_exactly(
    values: list[dict[str, Any]], rng: random.Random
) -> None:
    turns = changing_turns(values, rng)
    round_trip(turns)
    round_trip(turns, exact_hints(turns))  # hinted: the same values back
    round_trip(turns, [None] + [{"A": set(t["A"]), "B": set(t["B"])} for t in turns[1:]])


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
                "C": {"$t": "a key like a marker", "count": turn},
            }
        )
    stored = round_trip(turns)
    round_trip(turns, exact_hints(turns))
    assert b'"turn"' not in stored[5] and b'"left"' not in stored[5]


def test_an_array_that_moved_on_by_one_element_is_stored_as_the_new_one() -> None:
    trail = [np.array([[i, -i] for i in range(t, t + 10)]) for t in range(4)]
    stored = round_trip([{"A": {"trail": value}} for value in trail])
    assert orjson.loads(stored[3]) == {"A": {"trail": {"$t": [1, [12, -12]]}}}


@pytest.mark.parametrize(
    "bad",
    [b"[1]", b'{"A":{"text":{"$s":[[0,999]]}}}', b'{"A":{"text":{"$r":["Z"]}}}', b"{x", b'{"Q":1}'],
)
def test_stored_changes_that_cannot_be_applied_are_a_value_error(bad: bytes) -> None:
    writer, reader = DeltaWriter(), DeltaReader()
    reader.text(writer.encode({"A": {"text": "a notebook of sixty-four characters or more......"}}))
    with pytest.raises(ValueError):
        reader.text(bad)


def test_turns_that_start_a_stream_read_back_and_mix_with_changes() -> None:
    turns = [obs for obs, _ in escape_turns(30)]
    packer, unpacker, reader = BodyPacker(), BodyUnpacker(), DeltaReader()
    writer = DeltaWriter()
    for index, value in enumerate(turns):
        if index % 7 in (3, 4):  # a journal that starts a stream, then changes again
            writer, packer = DeltaWriter(), BodyPacker()
        body = packer.pack([b"{}", writer.encode(value), b"{}", b"{}"])
        starts, parts = unpacker.unpack(body)
        assert starts == (index == 0 or index % 7 in (3, 4))
        if starts:
            reader.reset()
        assert reader.text(parts[1]) == encode_json_bytes(value), index
    with pytest.raises(TypeError, match="agent names must be texts not starting with"):
        DeltaWriter().encode({"$w": 1})


def test_a_journal_that_stores_turns_whole_reads_and_verifies_the_same(tmp_path: Path) -> None:
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
        assert all(turn.starts for turn in stored_turns(path, 1)) == (not changes)
    assert texts[True] == texts[False]
    assert (tmp_path / "True.sqlite").stat().st_size < (tmp_path / "False.sqlite").stat().st_size


def test_after_a_turn_that_could_not_be_recorded_the_next_starts_a_stream(
    tmp_path: Path,
) -> None:
    """The journal forgets what its writers knew when a turn cannot be recorded; the next turn
    starts a new stream, read without the turn before, and the game reads back."""
    path = tmp_path / "games.sqlite"
    values = [
        {"A": {"turn": t, "left": 10 - 2 * t, "text": "one note " * (t + 8)}} for t in range(8)
    ]
    with Journal(path, durability="turn") as journal:
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
        assert [t.observations for t in journal.turns(game)] == values
    starts = [turn.starts for turn in stored_turns(path, game)]
    assert starts == [True, False, False, False, True, False, False, False]


# -- change hints ------------------------------------------------------------------------------


def test_the_test_run_checks_every_hint() -> None:
    assert checking_hints()


def test_a_hint_that_leaves_out_a_changed_key_fails_loudly() -> None:
    writer = DeltaWriter(check_hints=True)
    writer.encode({"A": {"x": 1, "y": "a"}})
    writer.encode({"A": {"x": 2, "y": "a"}}, {"A": {"x"}})  # right
    with pytest.raises(WrongHintError, match=r"the change hint for 'A' leaves out \['y'\]"):
        writer.encode({"A": {"x": 3, "y": "b"}}, {"A": {"x"}})


def test_a_wrong_hint_from_an_environment_fails_the_step(tmp_path: Path) -> None:
    env = maze_escape_v1.parallel_env(width=6, height=6, max_turns=5, journal=tmp_path / "g.sqlite")
    env.reset(seed=1)
    observer = env.unwrapped._observer
    real = observer.changes
    observer.changes = lambda state: {name: frozenset() for name in real(state)}  # says nothing
    stay = {"move": 4, "notebook": {"edit": 0, "start": 0, "end": 0, "text": ""}, "radio": ""}
    with pytest.raises(WrongHintError, match="leaves out"):
        env.step({agent: stay for agent in env.agents})  # the turn counter moved


# -- reading a few keys, shared ----------------------------------------------------------------


@pytest.mark.parametrize("preset", ["navigator", "full"])
def test_reading_a_few_keys_shared_gives_the_values_of_the_whole_read(
    tmp_path: Path, preset: str
) -> None:
    """The analysis's reading (a few observation and event keys, what did not change shared
    from turn to turn) gives exactly those keys of the turns read whole, on crowded games whose
    notebooks are shown to teammates, and never changes an earlier turn's values."""
    path = tmp_path / "games.sqlite"
    env = maze_escape_v1.parallel_env(
        preset=preset, width=5, height=5, num_agents=3, max_turns=50, journal=path
    )
    splice = env.config.notebook_mode == "splice"
    rng = np.random.default_rng(2)
    for seed in range(3):
        env.reset(seed=38 + seed)
        turn = 0
        while env.agents:
            turn += 1
            text = LONG_MESSAGE.format(agent=turn) if turn % 3 else ""
            notebook = (
                {"edit": 1, "start": 0, "end": 0, "text": text} if splice else {"append": text}
            )
            env.step({a: {"move": int(rng.integers(5)), "notebook": notebook,
                          "radio": "hi" if turn % 4 == 0 else ""} for a in env.agents})  # fmt: skip
    env.close()
    keys = ("notebook", "teammate_notebooks", "trail", "turn", "radio", "last_action")
    events = ("move", "radio", "team_success")
    with Journal(path, readonly=True) as journal:
        for game in journal.game_ids():
            whole = list(journal.turns(game))
            shared = list(journal.turns(game, observations=keys, events=events, shared=True))
            snapshot = [orjson.dumps([t.observations, t.events]) for t in shared]
            assert len(shared) == len(whole)
            for full, part in zip(whole, shared, strict=True):
                expected = {
                    agent: {key: obs[key] for key in keys if key in obs}
                    for agent, obs in full.observations.items()
                }
                assert part.observations == expected, (game, full.turn)
                assert part.events == {
                    agent: {key: value[key] for key in events if key in value}
                    for agent, value in full.events.items()
                }
                assert (part.actions, part.state_hash) == (full.actions, full.state_hash)
            # later turns never changed what an earlier turn handed out
            assert snapshot == [orjson.dumps([t.observations, t.events]) for t in shared]
            unchanged = [
                (a, b)
                for a, b in itertools.pairwise(shared)
                if a.observations["A"] == b.observations["A"]
            ]
            assert all(a.observations["A"] is b.observations["A"] for a, b in unchanged)
