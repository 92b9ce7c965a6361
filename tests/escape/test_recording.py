"""The environment's journal hook: what it records each turn (the journal itself is tested
elsewhere). Observations are stored as delivered (arrays as JSON lists), actions as received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.convert import (
    observation_from_stored,
    observation_to_json,
    observation_to_model,
)
from maze_envs.journal import Journal
from tests.escape.boards import N, act


def test_a_game_is_recorded_turn_by_turn_and_finished(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    env = maze_escape_v0.parallel_env(preset="full", width=6, height=5, max_turns=4, journal=path)
    obs0, _ = env.reset(seed=9)
    sent = []
    delivered = [obs0]
    digests = [env.state_digest()]
    while env.agents:
        actions = {a: act(N, edit=(0, 0, "x"), radio="hey") for a in env.agents}
        sent.append(actions)
        obs, *_ = env.step(actions)
        delivered.append(obs)
        digests.append(env.state_digest())
    env.close()
    with Journal(path, create=False) as journal:
        [game] = journal.games()
        assert game.env_id == "maze_envs/MazeEscape-v0" and game.seed == 9
        assert game.config == env.config.model_dump(mode="json")
        assert game.outcome is not None and game.outcome["turns"] == 4
        assert game.outcome["success"] is False
        turns = list(journal.turns(game.id))
    assert [t.turn for t in turns] == [0, 1, 2, 3, 4]
    assert turns[0].actions == {}
    for record, obs in zip(turns, delivered, strict=True):
        assert record.observations.keys() == obs.keys()
        for agent, stored in record.observations.items():
            rebuilt = observation_from_stored(stored, env.config, agent)
            assert_same_observation(rebuilt, obs[agent])
            assert env.observation_space(agent).contains(rebuilt)
            assert observation_to_model(rebuilt, env.config, agent) == observation_to_model(
                obs[agent], env.config, agent
            )
            assert observation_to_json(rebuilt, env.config, agent)["turn"] == record.turn
    for record, actions in zip(turns[1:], sent, strict=True):
        assert record.actions == actions
        assert record.events["A"]["radio"] in {"sent", "refused"}
    # The same seed and actions give the same chain of state hashes in a second journal.
    again = maze_escape_v0.parallel_env(
        preset="full", width=6, height=5, max_turns=4, journal=tmp_path / "again.sqlite"
    )
    again.reset(seed=9)
    for actions in sent:
        again.step(actions)
    again.close()
    with Journal(tmp_path / "again.sqlite", create=False) as second:
        hashes = [t.state_hash for t in second.turns(second.game_ids()[0])]
    assert hashes == [t.state_hash for t in turns]


def assert_same_observation(rebuilt: Any, delivered: Any) -> None:
    """Equal values, and arrays of the same dtype and shape (a lossless round trip)."""
    if isinstance(delivered, dict):
        assert isinstance(rebuilt, dict) and list(rebuilt) == list(delivered)
        for key, value in delivered.items():
            assert_same_observation(rebuilt[key], value)
    elif isinstance(delivered, np.ndarray):
        assert isinstance(rebuilt, np.ndarray) and rebuilt.dtype == delivered.dtype
        np.testing.assert_array_equal(rebuilt, delivered)
    else:
        assert type(rebuilt) is type(delivered) and rebuilt == delivered


def test_a_reset_mid_game_finishes_the_old_game_as_aborted(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    env = maze_escape_v0.parallel_env(width=5, height=5, journal=str(path))
    env.reset(seed=1)
    env.step({a: act() for a in env.agents})
    env.reset(seed=2)
    env.close()
    with Journal(path, create=False) as journal:
        first, second = journal.games()
    assert first.outcome is not None and first.outcome["aborted"] is True
    assert first.turn_count == 2
    assert second.outcome is not None and second.outcome["aborted"] is True


def test_an_injected_journal_stays_open(tmp_path: Path) -> None:
    with Journal(tmp_path / "shared.sqlite") as journal:
        for seed in (1, 2):
            env = maze_escape_v0.parallel_env(width=5, height=5, max_turns=2, journal=journal)
            env.reset(seed=seed)
            while env.agents:
                env.step({a: act() for a in env.agents})
            env.close()
        assert [g.seed for g in journal.games()] == [1, 2]


def test_the_state_digest_covers_every_text_and_ignores_string_identity() -> None:
    env = maze_escape_v0.parallel_env(preset="full", width=6, height=5)
    env.reset(seed=2)
    state = env._state
    assert state is not None
    long_note = "left at the piano, then north " * 10  # hashed, not copied, into the digest
    seen = set()
    for slot in ("notebooks", "radio_outbox", "notebook_reason", "radio_reason"):
        for text in ("short", long_note):
            getattr(state, slot)[1] = text
            digest = env.state_digest()
            assert digest not in seen, (slot, text)
            seen.add(digest)
            getattr(state, slot)[1] = "".join(list(text))  # equal text, another str object
            assert env.state_digest() == digest
        getattr(state, slot)[1] = ""
    state.used_exits[2][7] ^= 1
    assert env.state_digest() not in seen


def test_the_recorder_carries_meta_and_decision_records(tmp_path: Path) -> None:
    from maze_envs.journal import Blob, Recorder

    path = tmp_path / "games.sqlite"
    env = maze_escape_v0.parallel_env(width=5, height=5, max_turns=3, journal=path)
    assert isinstance(env.recorder, Recorder)
    env.recorder.set_game_meta({"run_key": "escape/5", "policies": ["explorer"] * 3})
    env.reset(seed=5)
    game_id = env.recorder.game_id
    turn = 0
    while env.agents:
        turn += 1
        env.recorder.note("B", {"prompt": Blob("the rules of the maze " * 20), "turn": turn})
        env.step({a: act() for a in env.agents})
    env.close()
    with Journal(path, readonly=True) as journal:
        info = journal.game(game_id)
        turns = list(journal.turns(game_id))
        assert info.meta == {"run_key": "escape/5", "policies": ["explorer"] * 3}
        assert [sorted(t.decisions) for t in turns] == [[], ["B"], ["B"], ["B"]]
        assert journal.resolve(turns[2].decisions)["B"] == {
            "prompt": "the rules of the maze " * 20,
            "turn": 2,
        }
        assert journal.completed_keys() == {"escape/5"}


def test_a_journal_failure_stops_the_game_honestly(tmp_path: Path) -> None:
    import pytest

    from maze_envs.journal import JournalError
    from maze_envs.verify import verify_journal
    from tests.journal.faults import inject

    path = tmp_path / "games.sqlite"
    journal = Journal(path, durability="turn")  # every turn committed before step returns
    faults = inject(journal)
    env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=50, journal=journal)
    env.reset(seed=3)
    for _ in range(4):
        env.step({a: act(N) for a in env.agents})
    faults.fail["INSERT INTO turns"] = "disk I/O error"
    with pytest.raises(JournalError, match=r"cannot write turn 5 of game 1 .*disk I/O error"):
        env.step({a: act(N) for a in env.agents})
    faults.fail.clear()
    # the game takes no more steps: nothing changes, every time
    digest = env.state_digest()
    for _ in range(2):
        with pytest.raises(JournalError, match=r"game 1 is no longer being recorded.*reset\(\)"):
            env.step({a: act(N) for a in env.agents})
        assert env.state_digest() == digest
    (report,) = verify_journal(path)
    assert (report.status, report.ok, report.turns_verified) == ("aborted", True, 5)
    with Journal(path, readonly=True) as reader:
        (game,) = reader.games()
    assert game.outcome is not None and game.turn_count == 5
    assert game.outcome["aborted"] is True and game.outcome["turns"] == 4  # what the file holds
    assert "disk I/O error" in game.outcome["journal_error"]
    # a new game is recorded again
    env.reset(seed=4)
    while env.agents:
        env.step({a: act() for a in env.agents})
    env.close()
    journal.close()
    reports = verify_journal(path)
    assert [(r.status, r.turns_verified) for r in reports] == [("aborted", 5), ("ok", 51)]


def test_with_group_commit_a_failure_raises_from_a_later_step_and_stops_the_game(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import pytest

    from maze_envs.journal import JournalError, batch
    from maze_envs.verify import verify_journal
    from tests.journal.faults import inject

    monkeypatch.setattr(batch, "BATCH_ROWS", 4)
    path = tmp_path / "games.sqlite"
    journal = Journal(path)  # durability="batch", the default
    faults = inject(journal)
    env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=50, journal=journal)
    env.reset(seed=3)
    for _ in range(3):
        env.step({a: act(N) for a in env.agents})
    assert journal.committed_turn(1) == 3  # turns 0-3: the batch of 4 rows was committed
    faults.fail["INSERT INTO turns"] = "disk I/O error"
    for _ in range(3):
        env.step({a: act(N) for a in env.agents})  # turns 4-6 wait in the batch
    with pytest.raises(JournalError, match=r"cannot write turns 4-7 of game 1 .*disk I/O error"):
        env.step({a: act(N) for a in env.agents})  # the step that commits raises
    faults.fail.clear()
    digest = env.state_digest()
    with pytest.raises(JournalError, match=r"game 1 is no longer being recorded.*reset\(\)"):
        env.step({a: act(N) for a in env.agents})
    assert env.state_digest() == digest
    with Journal(path, readonly=True) as reader:
        (game,) = reader.games()
    assert game.outcome is not None and game.turn_count == 4
    assert (game.outcome["aborted"], game.outcome["turns"]) == (True, 3)  # what the file holds
    assert game.outcome["turns_played"] == 6  # what env.step returned before it raised
    (report,) = verify_journal(path)
    assert (report.status, report.turns_verified) == ("failed", 4)
    assert report.problem is not None and report.problem.turn == 4
    assert report.problem.reason.startswith("turns 4-6 were played but never stored")
    env.reset(seed=4)  # a new game is recorded again, every turn of it once it ends
    while env.agents:
        env.step({a: act() for a in env.agents})
    reports = verify_journal(path)  # read by another connection while the journal is open
    assert [(r.status, r.turns_verified) for r in reports] == [("failed", 4), ("ok", 51)]
    env.close()
    journal.close()


def test_a_stored_observation_without_the_spaces_layout_is_refused_saying_where() -> None:
    """observation_from_stored rebuilds the delivered dict (arrays with the space's dtype and
    shape, nested dicts in the stored order) and names the first place a stored form breaks
    the layout: a key missing or extra, an array of the wrong shape, a dict that is not one."""
    env = maze_escape_v1.parallel_env(preset="full", width=9, height=9)
    obs, _ = env.reset(seed=3)
    stored = orjson.loads(orjson.dumps(obs["B"], option=orjson.OPT_SERIALIZE_NUMPY))
    rebuilt = observation_from_stored(stored, env.config, "B")
    assert list(rebuilt) == list(obs["B"]) and env.observation_space("B").contains(rebuilt)
    assert rebuilt["trail"].dtype == obs["B"]["trail"].dtype
    assert list(rebuilt["last_action"]) == list(obs["B"]["last_action"])
    broken = {**stored, "edges": [0, 1, 2]}
    with pytest.raises(ValueError, match=r"^edges: expected shape \(4,\), got \(3,\)$"):
        observation_from_stored(broken, env.config, "B")
    broken = {**stored, "last_action": {**stored["last_action"], "extra": 1}}
    with pytest.raises(ValueError, match=r"^last_action: expected the keys .*'extra'"):
        observation_from_stored(broken, env.config, "B")
    broken = {**stored, "teammate_notebooks": {**stored["teammate_notebooks"], "A": "text"}}
    with pytest.raises(ValueError, match=r"^teammate_notebooks\.A: expected the keys .*got str$"):
        observation_from_stored(broken, env.config, "B")
    with pytest.raises(ValueError, match=r"^observation: expected the keys"):
        observation_from_stored({k: v for k, v in stored.items() if k != "turn"}, env.config, "B")
