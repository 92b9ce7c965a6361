"""Games recorded before the observation path was rewritten still replay, identically.

``data/landed_games.sqlite.gz`` holds Maze Escape games (v0 and v1, every optional feature alone
and together, both notebook modes, one to four agents, small limits that get hit, typed and dict
actions, team success) recorded by the landed code, and ``data/landed_forms.json.gz`` what that
code derived from each observation: the typed model's JSON form, the text a model reads and the
numeric wrapper's encodings (v1). ``data/make_landed_games.py`` wrote both, once. Here every game
is verified by replay, and replayed again to compare every observation and every form.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.escape.convert import observation_from_stored
from maze_envs.escape.generator import generator_from_description
from maze_envs.escape.replay import stored_action
from maze_envs.escape.types import Config, Observation
from maze_envs.journal import GameInfo, Journal, TurnRecord
from maze_envs.text import render_escape
from maze_envs.verify import verify_journal
from wrappers.escape_numeric import EscapeNumericObservation
from wrappers.text import EscapeTextObservation

DATA = Path(__file__).parent / "data"
MODULES = {"maze_envs/MazeEscape-v0": maze_escape_v0, "maze_envs/MazeEscape-v1": maze_escape_v1}
NUMERIC: dict[str, dict[str, Any]] = {
    "numeric_dict": {},
    "numeric_flat": {"flatten": True},
    "numeric_hash": {"text": "hash", "hash_buckets": 8},
    "numeric_codes": {"edges": "codes"},
}


@pytest.fixture(scope="module")
def journal_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("landed") / "landed_games.sqlite"
    path.write_bytes(gzip.decompress((DATA / "landed_games.sqlite.gz").read_bytes()))
    return path


@cache
def landed_forms() -> dict[int, list[dict[str, Any]]]:
    games = orjson.loads(gzip.decompress((DATA / "landed_forms.json.gz").read_bytes()))
    return {game["game"]: game["turns"] for game in games}


def games(path: Path) -> Iterator[tuple[GameInfo, list[TurnRecord]]]:
    with Journal(path, readonly=True) as journal:
        for info in journal.games():
            yield info, list(journal.turns(info.id))


def build(info: GameInfo) -> Any:
    generator = None if info.generator is None else generator_from_description(info.generator)
    config = Config.model_validate(info.config)
    return MODULES[info.env_id].parallel_env(config=config, generator=generator)


def replay(
    env: Any, info: GameInfo, turns: list[TurnRecord]
) -> Iterator[tuple[TurnRecord, dict[str, Any]]]:
    """Each recorded turn with what ``env`` (the bare env or a wrapper) returns for it."""
    observations, _ = env.reset(seed=info.seed)
    yield turns[0], observations
    for record in turns[1:]:
        observations, *_ = env.step({a: stored_action(x) for a, x in record.actions.items()})
        yield record, observations


def assert_same(live: Any, stored: Any, where: str) -> None:
    """Equal values, keys in the same order, arrays of the same dtype and shape."""
    if isinstance(stored, dict):
        assert isinstance(live, dict), where
        assert list(live) == list(stored), where
        for key in stored:
            assert_same(live[key], stored[key], f"{where}.{key}")
    elif isinstance(stored, np.ndarray):
        assert isinstance(live, np.ndarray), where
        assert (live.dtype, live.shape) == (stored.dtype, stored.shape), where
        assert np.array_equal(live, stored), where
    else:
        assert type(live) is type(stored) and live == stored, where


def test_the_landed_games_are_all_there(journal_path: Path) -> None:
    infos = [info for info, _ in games(journal_path)]
    assert len(infos) == 14
    assert {info.env_id for info in infos} == set(MODULES)
    assert sorted(landed_forms()) == [info.id for info in infos]
    assert any((info.outcome or {}).get("success") for info in infos)


def test_every_landed_game_verifies(journal_path: Path) -> None:
    reports = verify_journal(journal_path)
    assert [report.describe() for report in reports if not report.ok] == []
    assert len(reports) == 14


def test_every_observation_equals_the_recorded_one(journal_path: Path) -> None:
    for info, turns in games(journal_path):
        env = build(info)
        for record, observations in replay(env, info, turns):
            assert list(observations) == list(record.observations)
            for agent, live in observations.items():
                stored = observation_from_stored(record.observations[agent], env.config, agent)
                assert_same(live, stored, f"game {info.id} turn {record.turn} {agent}")
                assert env.observation_space(agent).contains(live)


def test_typed_models_and_texts_equal_the_landed_ones(journal_path: Path) -> None:
    for info, turns in games(journal_path):
        env = build(info)
        config = env.config
        expected = landed_forms()[info.id]
        for record, observations in replay(env, info, turns):
            for agent, obs in observations.items():
                landed = expected[record.turn][agent]
                where = f"game {info.id} turn {record.turn} {agent}"
                model = Observation.from_space(obs, config, agent)
                assert model.model_dump(mode="json") == landed["typed"], where
                assert render_escape(model, config) == landed["text"], where
                # the stored observation (no env behind it) gives the same model
                stored = observation_from_stored(record.observations[agent], config, agent)
                assert Observation.from_space(stored, config, agent) == model, where
                # and the model maps back to the observation exactly
                assert_same(model.to_space(config, agent, env.version), obs, where)


def test_text_wrapper_equals_the_landed_texts(journal_path: Path) -> None:
    for info, turns in games(journal_path):
        # the landed texts were recorded under prompt v13, whose user message is the observation
        env = EscapeTextObservation(build(info), prompt_version="v13")
        expected = landed_forms()[info.id]
        for record, texts in replay(env, info, turns):
            for agent, text in texts.items():
                assert text == expected[record.turn][agent]["text"], (info.id, record.turn)


@pytest.mark.parametrize("form", sorted(NUMERIC))
def test_numeric_observations_equal_the_landed_ones(journal_path: Path, form: str) -> None:
    replayed = 0
    for info, turns in games(journal_path):
        if info.env_id != "maze_envs/MazeEscape-v1":
            continue
        env = EscapeNumericObservation(build(info), **NUMERIC[form])
        expected = landed_forms()[info.id]
        for record, observations in replay(env, info, turns):
            for agent, obs in observations.items():
                landed = expected[record.turn][agent][form]
                where = f"game {info.id} turn {record.turn} {agent}"
                assert env.observation_space(agent).contains(obs), where
                if isinstance(obs, np.ndarray):
                    assert obs.dtype == np.float32, where
                    assert obs.tolist() == landed, where
                else:
                    assert list(obs) == list(landed), where
                    assert {k: np.asarray(v).tolist() for k, v in obs.items()} == landed, where
            replayed += 1
    assert replayed > 100
