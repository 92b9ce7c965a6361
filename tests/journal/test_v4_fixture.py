"""A schema version 4 journal written by the library before the reader was rewritten
(``data/v4_games.sqlite.gz``, written by ``data/make_fixture.py`` at d1b40b4) stays readable and
verifiable, replays with every observation equal, and reads the same through every reading path
(whole text, values of a few keys)."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest

from maze_envs.journal import Journal, TurnRecord
from maze_envs.journal.format import encode_json_bytes
from maze_envs.verify import replayer_for, verify_journal
from tests.journal.tamper import stored_turns

FIXTURE = Path(__file__).parent / "data" / "v4_games.sqlite.gz"
V3_FIXTURE = Path(__file__).parent / "data" / "v3_games.sqlite.gz"
KEYS = ("notebook", "teammate_notebooks", "distances", "turn")


@pytest.fixture
def v4_path(tmp_path: Path) -> Path:
    path = tmp_path / "v4.sqlite"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return path


def all_turns(path: Path, **kwargs: object) -> dict[int, list[TurnRecord]]:
    with Journal(path, readonly=True) as journal:
        return {game: list(journal.turns(game, **kwargs)) for game in journal.game_ids()}  # type: ignore[arg-type]


def test_the_version_4_fixture_verifies(v4_path: Path) -> None:
    db = sqlite3.connect(v4_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 4
    db.close()
    reports = verify_journal(v4_path)
    assert [r.status for r in reports] == ["ok", "ok", "aborted", "aborted", "ok", "ok", "ok"]
    assert sum(r.turns_verified for r in reports) >= 100


def test_every_stored_observation_equals_its_replay(v4_path: Path) -> None:
    turns = all_turns(v4_path)
    replayed = 0
    with Journal(v4_path, readonly=True) as journal:
        for info in journal.games():
            factory = replayer_for(info.env_id)
            if factory is None:  # the toy game has no replayer
                continue
            replayer = factory()
            for record in turns[info.id]:
                step = replayer.reset(info) if record.turn == 0 else replayer.step(record.actions)
                assert encode_json_bytes(step.observations) == record.raw_observations.encode()
                assert encode_json_bytes(step.events) == record.raw_events.encode()
                assert encode_json_bytes(record.observations) == encode_json_bytes(
                    step.observations
                ), (info.id, record.turn)
                replayed += 1
    assert replayed >= 100


@pytest.mark.parametrize("version", [3, 4])
def test_reading_a_few_keys_gives_those_keys_of_the_whole_observations(
    v4_path: Path, tmp_path: Path, version: int
) -> None:
    path = v4_path
    if version == 3:
        path = tmp_path / "v3.sqlite"
        path.write_bytes(gzip.decompress(V3_FIXTURE.read_bytes()))
    whole, kept = all_turns(path), all_turns(path, observations=KEYS)
    compared = 0
    for game, records in whole.items():
        assert len(kept[game]) == len(records)
        for full, part in zip(records, kept[game], strict=True):
            expected = {
                agent: {key: value[key] for key in KEYS if key in value}
                if isinstance(value, dict)
                else value
                for agent, value in full.observations.items()
            }
            assert part.observations == expected, (game, full.turn)
            assert (part.actions, part.events, part.decisions) == (
                full.actions,
                full.events,
                full.decisions,
            )
            assert (part.state_hash, part.record_hash) == (full.state_hash, full.record_hash)
            assert part.raw_observations == part.raw_events == ""
            compared += any(part.observations.values())
    assert compared >= 50


def test_a_kept_text_that_refers_to_a_skipped_one_is_read_again_whole(tmp_path: Path) -> None:
    """The change writer stores a text seen earlier in the same turn as a reference to it; a
    reader that skips the key of the first one reads the game again without skipping."""
    path = tmp_path / "refs.sqlite"
    observations = []
    with Journal(path) as journal:
        game = journal.start_game(env_id="toy-v0", config={}, seed=0, library_version="t")
        for turn in range(6):
            message = f"turn {turn}: the exit is two cells north of the tree, east of the piano"
            value = {"A": {"radio": message, "notebook": message, "turn": turn}}
            observations.append(value)
            journal.record_turn(
                game,
                turn,
                observations=value,
                actions={"A": turn},
                events={"A": {}},
                state_digest=bytes(turn),
            )
    stored = [turn.parts["observations"] for turn in stored_turns(path, game)]
    assert any('"$r"' in text for text in stored), "the writer stored a reference"
    with Journal(path, readonly=True) as journal:
        read = [t.observations for t in journal.turns(game, observations=("notebook",))]
    assert read == [{"A": {"notebook": v["A"]["notebook"]}} for v in observations]


@pytest.mark.parametrize("bad", ["notebook", [1, 2]])
def test_observation_keys_must_be_a_collection_of_names(v4_path: Path, bad: object) -> None:
    with Journal(v4_path, readonly=True) as journal, pytest.raises(TypeError, match="keys"):
        list(journal.turns(1, observations=bad))  # type: ignore[arg-type]
