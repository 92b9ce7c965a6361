"""The Maze Escape viewer page built from a journal (maze_envs.view): data, page, command."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_from_stored, observation_to_json
from maze_envs.escape.types import Config
from maze_envs.journal import Blob, Journal
from maze_envs.view import escape_game_data, escape_game_html, game_html, main
from maze_envs.view.page import read_payload
from tests.journal.tamper import edit_turn

SNEAKY = "</script><script>alert(1)</script><!--"


def undelta(deltas: list[Any]) -> list[str]:
    """What the page's script does with a text stream (UTF-16 positions)."""
    out, previous = [], ""
    for d in deltas:
        if d is not None and len(d) > 3:
            previous = previous.encode("utf-16-le")[2 * d[3] :].decode("utf-16-le")
        if d is not None:
            units = previous.encode("utf-16-le")
            previous = (
                units[: 2 * d[0]].decode("utf-16-le") + d[2] + units[2 * d[1] :].decode("utf-16-le")
            )
        out.append(previous)
    return out


def play(path: Path, seed: int = 4, turns: int = 12) -> dict[str, Any]:
    """A journaled game whose notebooks carry HTML; returns what the live game reported."""
    env = maze_escape_v0.parallel_env(
        preset="full",
        width=6,
        height=6,
        max_turns=turns,
        notebook_mode="rolling_log",
        journal=path,
    )
    _, infos = env.reset(seed=seed)
    live: dict[str, Any] = {
        "cells": [{a: list(infos[a]["row_col"]) for a in env.possible_agents}],
        "path": [{a: infos[a]["path_distance_to_exit"] for a in env.possible_agents}],
        "rewards": [dict.fromkeys(env.possible_agents, 0.0)],
    }
    turn = 0
    while env.agents:
        radio = f"at [{turn},1] A-frame é😀" if turn % 6 == 0 else ""
        action: dict[str, Any] = {
            "move": turn % 5,
            "notebook": {"append": SNEAKY + f" {turn} 😀"},
            "radio": radio,
        }
        _, rewards, _, _, infos = env.step({a: action for a in env.agents})
        live["cells"].append({a: list(infos[a]["row_col"]) for a in env.possible_agents})
        live["path"].append({a: infos[a]["path_distance_to_exit"] for a in env.possible_agents})
        live["rewards"].append(rewards)
        turn += 1
    env.close()
    return live


def test_page_data_follows_the_game(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    live = play(path)
    with Journal.open_readonly(path) as journal:
        data = escape_game_data(journal, 1)
        stored = list(journal.turns(1))
    assert data["verified"] and data["verification"] == "game 1: ok, 13 turns verified"
    assert data["n"] == 13 and data["agents"] == ["A", "B", "C"]
    width = data["width"]
    for a in data["agents"]:
        assert [divmod(c, width) for c in data["cells"][a]] == [
            tuple(turn[a]) for turn in live["cells"]
        ]
        assert data["path"][a] == [turn[a] for turn in live["path"]]
        assert data["reward"][a] == [turn[a] for turn in live["rewards"]]
    config = Config.model_validate(data["config"])
    for t, record in enumerate(stored):
        for a, obs in record.observations.items():
            readable = observation_to_json(observation_from_stored(obs, config, a), config, a)
            shown = readable.pop("teammate_notebooks")
            notebook = readable.pop("notebook")
            assert data["obs"][a][t] == {**readable, "teammate_notebooks": sorted(shown)}
            assert undelta(data["notebook"][a])[t] == notebook
            for mate in shown:  # a shown notebook is that teammate's own of the same turn
                assert undelta(data["notebook"][mate])[t] == shown[mate]
    assert data["obs"]["B"][3]["turn"] == 3
    assert data["obs"]["A"][0]["edges"].keys() == {"N", "E", "S", "W"}
    assert data["action"]["A"][1] == {
        "move": "N",
        "notebook": {"text": SNEAKY + " 0 😀"},
        "radio": "at [0,1] A-frame é😀",
    }
    assert data["action"]["A"][0] is None
    assert data["events"]["C"][2] == stored[2].events["C"]
    assert data["radio"][:3] == [
        [1, "A", "at [0,1] A-frame é😀", "sent", ""],
        [1, "B", "at [0,1] A-frame é😀", "sent", ""],
        [1, "C", "at [0,1] A-frame é😀", "sent", ""],
    ]
    assert (data["width"], data["height"], len(data["maze"])) == (6, 6, 36)
    assert data["decisions"] is None and data["blobs"] == {}


def test_page_is_self_contained_and_escapes_text(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path)
    with Journal.open_readonly(path) as journal:
        for compress in (False, True):
            page = escape_game_html(journal, 1, compress=compress)
            assert page.count("</script>") == 3  # two data blocks and the script: no breakout
            assert "<!--" not in page.split('<script id="game"')[1].split("</script>")[0]
            assert not re.search(r"(src|href)\s*=\s*[\"']?\s*(https?:)?//", page)  # no network
            assert "http://" not in page and "https://" not in page
            data = read_payload(page)
            assert undelta(data["notebook"]["A"])[1] == SNEAKY + " 0 😀\n"
        assert game_html(journal, 1) == escape_game_html(journal, 1)


def test_large_games_are_compressed(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path, turns=300)
    with Journal.open_readonly(path) as journal:
        auto = escape_game_html(journal, 1)
        plain = escape_game_html(journal, 1, compress=False)
    assert 'type="application/x-gzip-base64"' in auto
    assert len(auto) < len(plain) / 3
    assert read_payload(auto) == read_payload(plain)


def test_a_tampered_journal_is_drawn_up_to_its_first_bad_turn(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    play(path)
    edit_turn(path, 1, 5, "actions", lambda _: "{}")
    with Journal.open_readonly(path) as journal:
        data = escape_game_data(journal, 1)
    assert not data["verified"] and "FAILED at turn 5" in data["verification"]
    assert data["n"] == 5 and len(data["cells"]["A"]) == 5 and len(data["obs"]["A"]) == 5
    assert data["problem"].startswith("turn 5")


def test_main_writes_pages_and_explains_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    play(path)
    play(path, seed=5)
    assert main([str(path)]) == 0  # every game
    assert read_payload((tmp_path / "games-game1.html").read_text(encoding="utf-8"))["game"] == 1
    assert read_payload((tmp_path / "games-game2.html").read_text(encoding="utf-8"))["seed"] == 5
    assert main([str(path), "--game", "2", "--out", str(tmp_path / "two.html")]) == 0
    assert read_payload((tmp_path / "two.html").read_text(encoding="utf-8"))["game"] == 2
    assert main([str(path), "--out", str(tmp_path / "pages")]) == 0
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == [
        "games-game1.html",
        "games-game2.html",
    ]
    assert main([str(path), "--game", "3"]) == 2
    assert main([str(tmp_path / "none.sqlite")]) == 2
    captured = capsys.readouterr()
    assert "wrote" in captured.out
    assert "no game 3" in captured.err and "games: [1, 2]" in captured.err
    assert "none.sqlite" in captured.err


def test_view_reads_a_read_only_journal_in_a_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "games.sqlite"
    play(path)
    before = path.read_bytes()
    out = tmp_path / "page.html"
    os.chmod(path, stat.S_IRUSR)
    os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert main([str(path), "--out", str(out)]) == 0
    finally:
        os.chmod(folder, stat.S_IRWXU)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["games.sqlite"]
    assert read_payload(out.read_text(encoding="utf-8"))["verified"]


def test_an_empty_file_is_not_a_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    assert main([str(path)]) == 2
    assert path.read_bytes() == b""
    assert "empty.sqlite" in capsys.readouterr().err


def test_version_1_games_are_drawn_like_version_0(tmp_path: Path) -> None:
    """The same game in both layouts: the same page data but the env id (teammates only)."""
    from maze_envs import maze_escape_v1

    pages = []
    for module in (maze_escape_v0, maze_escape_v1):
        path = tmp_path / f"{module.__name__}.sqlite"
        env = module.parallel_env(preset="full", width=6, height=6, max_turns=8, journal=path)
        env.reset(seed=2)
        turn = 0
        while env.agents:
            radio = "hello" if turn == 0 else ""
            edit = {"edit": 1, "start": 0, "end": 0, "text": f"{turn};"}
            env.step({a: {"move": turn % 4, "notebook": edit, "radio": radio} for a in env.agents})
            turn += 1
        env.close()
        with Journal.open_readonly(path) as journal:
            pages.append(escape_game_data(journal, 1))
    v0, v1 = pages
    assert v1["env_id"] == "maze_envs/MazeEscape-v1" and v1["verified"]
    for key in ("cells", "path", "reward", "obs", "notebook", "events", "radio"):
        assert v0[key] == v1[key], key
    assert sorted(v1["obs"]["A"][1]["distance_to_teammates"]) == ["B", "C"]
    assert v1["obs"]["A"][1]["radio"] == {"B": "hello", "C": "hello"}


def test_decision_records_and_their_blobs_reach_the_page(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    env = maze_escape_v0.parallel_env(width=6, height=6, max_turns=4, journal=path)
    env.reset(seed=1)
    prompt = Blob("the rules of the maze " * 50)
    turn = 0
    while env.agents:
        assert env.recorder is not None
        for agent in env.agents:
            env.recorder.note(agent, {"prompt": [prompt, f"turn {turn}"], "reply": "N"})
        env.step({a: {**env.action_space(a).sample(), "move": 0} for a in env.agents})
        turn += 1
    env.close()
    with Journal.open_readonly(path) as journal:
        data = escape_game_data(journal, 1)
        page = escape_game_html(journal, 1, compress=False)
    assert data["decisions"]["A"][0] is None  # turn 0 has no action, so no decision
    assert data["decisions"]["B"][2] == {"prompt": [{"$blob": prompt.key}, "turn 1"], "reply": "N"}
    assert data["blobs"] == {prompt.key: prompt.text}
    assert page.count("the rules of the maze") == 50  # the long text once, not once per turn
