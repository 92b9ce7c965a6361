"""The analysis' fast reading (a few observation and event keys, shared from turn to turn, the
metrics on one-pass columns) gives every row exactly as the metrics computed on the games read
whole (every observation and event rebuilt, nothing shared), on crowded games that exercise every
metric: notes with self-positions, frame offsets and trail doubts, radio with coordinates, frames
and landmarks, notebooks copied between colocated agents, splice compactions, decisions of every
status; and the version 3 and 4 journals shipped with the tests analyse through both paths alike.
The quick tests in front of the text patterns never change a verdict.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from maze_envs import maze_escape_v1
from maze_envs.bench.analysis import analyze_journal, patterns
from maze_envs.bench.analysis.escape_metrics import EVENT_KEYS, OBSERVATION_KEYS, game_metrics
from maze_envs.journal import Journal
from maze_envs.reading.tracks import escape_track, is_escape_game

DATA = Path(__file__).parent.parent / "journal" / "data"
NOTES = [
    "t{turn}: at [{x}, {y}]; exit near the piano",
    "B = A + (2,-1)",
    "trail lagged, position conflicts with trail",
    "C: exit is 5W,1N of the picture; route N3,W,S,W,S,E then south; keep right",
    "",
]
MESSAGES = ["A-frame [1, 2] near the piano", "exit at (3,4)", "my coords [0,0]", "hi", ""]


def _play(path: Path, preset: str, games: int) -> None:
    env = maze_escape_v1.parallel_env(
        preset=preset, width=5, height=5, num_agents=3, max_turns=40, journal=path
    )
    splice = env.config.notebook_mode == "splice"
    rng = np.random.default_rng(7)
    for seed in range(games):
        env.reset(seed=100 + seed)
        turn = 0
        while env.agents:
            turn += 1
            actions = {}
            for agent in env.agents:
                note = NOTES[int(rng.integers(len(NOTES)))].format(
                    turn=turn, x=int(rng.integers(-2, 3)), y=int(rng.integers(-2, 3))
                )
                if splice:
                    cut = int(rng.integers(0, 30))
                    notebook: dict[str, Any] = {"edit": 1, "start": 0, "end": cut, "text": note}
                else:
                    notebook = {"append": note}
                message = MESSAGES[int(rng.integers(len(MESSAGES)))]
                actions[agent] = {
                    "move": int(rng.integers(5)),
                    "notebook": notebook,
                    "radio": message,
                }
            env.step(actions)
    env.close()


def _rows_both_ways(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    fast, whole = [], []
    with Journal(path, readonly=True) as journal:
        for game in journal.game_ids():
            info = journal.game(game)
            if not is_escape_game(info):
                continue
            read = escape_track(
                journal,
                game,
                info,
                observations=OBSERVATION_KEYS,
                events=EVENT_KEYS,
                shared=True,
            )
            fast += [row.row() for row in game_metrics(read)]
            whole += [row.row() for row in game_metrics(escape_track(journal, game, info))]
    return fast, whole


@pytest.mark.parametrize("preset", ["navigator", "full"])
def test_the_fast_reading_gives_the_rows_of_the_whole_reading(tmp_path: Path, preset: str) -> None:
    path = tmp_path / "games.sqlite"
    _play(path, preset, games=3)
    fast, whole = _rows_both_ways(path)
    assert len(fast) == 3 * 4  # three agents and the team, per game
    assert fast == whole
    # the games exercise the metrics the fast path changed (not all zero)
    team = [row for row in fast if row["agent"] == "team"]
    for column in ("reversals", "exit_choices", "radio_with_coordinates", "trail_doubts"):
        assert sum(row[column] or 0 for row in team) > 0, column
    # and the command's path (analyze_journal) is the fast one
    assert [row.row() for row in analyze_journal(path, workers=1).escape] == fast


@pytest.mark.parametrize("name", ["v3_games.sqlite.gz", "v4_games.sqlite.gz"])
def test_older_journals_analyse_alike_both_ways(tmp_path: Path, name: str) -> None:
    path = tmp_path / name.removesuffix(".gz")
    path.write_bytes(gzip.decompress((DATA / name).read_bytes()))
    fast, whole = _rows_both_ways(path)
    assert fast
    assert fast == whole


#: Letters every pattern needs, and letters outside ASCII that match ASCII ones in any case
#: (the Kelvin sign and ``k``, the long s and ``s``, the dotted and dotless i).
LETTERS = "trailTRAIL frameFRAME coordsabsolutekeyKEY=:[](),0123-+x\n\u212a\u017f\u0130\u0131é"
TEXTS = st.text(alphabet=st.sampled_from(list(LETTERS)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
@example("the ab\u017folute exit [1,2]")  # the long s is an s in any case
@example("tra\u0130l lagged")  # the dotted capital I is an i in any case
@example("near the \u212aEY")  # the Kelvin sign is a k in any case
def test_the_pattern_shortcuts_agree_with_the_patterns(text: str) -> None:
    """The quick tests in front of the radio and note patterns (a text without the characters or
    words every match needs) never change a verdict, in ASCII and outside it (the Kelvin sign
    matches ``k`` case-insensitively, the long s ``s``)."""
    assert patterns.has_coordinates(text) == (patterns._PAIR.search(text) is not None)
    assert patterns.names_frame(text) == bool(
        patterns._FRAME_WORDS.search(text)
        or patterns._WHOSE.search(text)
        or patterns._OFFSET.search(text)
    )
    assert patterns.doubts_trail(text) == (
        patterns._TRAIL.search(text) is not None and patterns._DOUBT.search(text) is not None
    )
    assert patterns.states_offset(text) == (patterns._OFFSET_NOTE.search(text) is not None)
    assert patterns.self_positions(text) == [
        (int(m.group("x")), int(m.group("y"))) for m in patterns._SELF_POSITION.finditer(text)
    ]
    for names in (["key"], ["Key", "trail"], ["\u212aey"], ["frames", "é"]):
        whole = re.compile(rf"\b(?:{'|'.join(re.escape(name) for name in names)})\b", re.IGNORECASE)
        assert patterns.names_landmark(text, names) == (whole.search(text) is not None)
