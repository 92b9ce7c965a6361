"""The HTML viewer built by replaying a journal (maze_envs.view)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_from_stored, observation_to_json
from maze_envs.escape.types import Config
from maze_envs.journal import Journal
from maze_envs.view import escape_game_data, escape_game_html, main

SNEAKY = "</script><script>alert(1)</script>"


def play(path: Path, seed: int = 4) -> list[dict[str, list[int]]]:
    """A journaled game whose notebooks carry HTML; returns the true cells seen live."""
    env = maze_escape_v0.parallel_env(
        preset="full", width=6, height=6, max_turns=12, notebook_mode="rolling_log", journal=path
    )
    _, infos = env.reset(seed=seed)
    cells = [{a: list(infos[a]["cell"]) for a in env.possible_agents}]
    turn = 0
    while env.agents:
        action: dict[str, Any] = {"move": turn % 5, "notebook": {"append": SNEAKY}, "radio": ""}
        *_, infos = env.step({a: action for a in env.agents})
        cells.append({a: list(infos[a]["cell"]) for a in env.possible_agents})
        turn += 1
    env.close()
    return cells


def test_page_data_follows_the_game(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    cells = play(path)
    with Journal(path) as journal:
        data = escape_game_data(journal, 1)
        stored = list(journal.turns(1))
    assert data["verified"] and data["verification"] == "game 1: ok, 13 turns verified"
    assert [t["cells"] for t in data["turns"]] == cells
    # what each agent saw, in the readable JSON form of the stored observation
    config = Config.model_validate(data["config"])
    assert [t["observations"] for t in data["turns"]] == [
        {
            a: observation_to_json(observation_from_stored(o, config, a), config, a)
            for a, o in t.observations.items()
        }
        for t in stored
    ]
    assert data["turns"][3]["observations"]["B"]["turn"] == 3
    assert data["turns"][0]["observations"]["A"]["edges"].keys() == {"N", "E", "S", "W"}
    assert [t["actions"] for t in data["turns"]] == [t.actions for t in stored]
    assert (data["width"], data["height"], len(data["maze"])) == (6, 6, 6)
    assert data["agents"] == ["A", "B", "C"] and len(data["landmarks"]) > 0


def test_page_is_self_contained_and_escapes_text(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path)
    with Journal(path) as journal:
        page = escape_game_html(journal, 1)
    assert page.count("</script>") == 2  # the data block and the script: nothing breaks out
    assert not re.search(r"(src|href)=\"?https?:", page)  # no network
    payload = re.search(r'<script id="game" type="application/json">(.*?)</script>', page, re.S)
    assert payload is not None
    data = json.loads(payload.group(1))
    assert SNEAKY in data["turns"][1]["observations"]["A"]["notebook"]


def test_a_tampered_journal_is_drawn_up_to_its_first_bad_turn(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE turns SET actions = '{}' WHERE game_id = 1 AND turn = 5")
    db.close()
    with Journal(path) as journal:
        data = escape_game_data(journal, 1)
    assert not data["verified"] and "FAILED at turn 5" in data["verification"]
    assert len(data["turns"]) == 5


def test_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "games.sqlite"
    play(path)
    assert main([str(path)]) == 0
    assert (tmp_path / "games-game1.html").read_text(encoding="utf-8").startswith("<!DOCTYPE")
    assert main([str(path), "--game", "2"]) == 2
    assert main([str(tmp_path / "none.sqlite")]) == 2
    out = capsys.readouterr().out
    assert "wrote" in out and "no game 2" in out and "no journal at" in out
