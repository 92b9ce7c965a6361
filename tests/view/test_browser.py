"""End to end in a real headless Chromium: viewer pages load, scrub, and show the recorded values.

Needs the system's Chromium (``scripts/test.sh`` installs Debian's ``chromium`` when it runs as
root); without it these tests skip and say so. Screenshots are kept in ``out/test-artifacts/``
(or ``$MAZE_ENVS_ARTIFACTS``); each test prints where.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from maze_envs import maze_escape_v0
from maze_envs.agimaze.packs import resolve_pack_path
from maze_envs.journal import Blob, Journal
from maze_envs.view import agimaze_game_data, escape_game_data, main
from tests.chromium import Chromium, file_url, find_chromium
from tests.conftest import REPO_ROOT
from tests.view.journals import record_agimaze

UNKNOWN_CELL = (217, 212, 197)  # #d9d4c5 in agimaze.js
PLAYER = (214, 40, 40)


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    if find_chromium() is None:
        pytest.skip(
            "Chromium is not installed: scripts/test.sh installs Debian's chromium when run as "
            "root (apt-get install chromium), or set $CHROMIUM to a Chromium binary"
        )
    with Chromium() as chromium:
        yield chromium


def artifact(name: str, data: bytes, capsys: pytest.CaptureFixture[str]) -> Path:
    folder = Path(os.environ.get("MAZE_ENVS_ARTIFACTS", REPO_ROOT / "out" / "test-artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    with capsys.disabled():
        print(f"\nscreenshot: {path}")
    return path


def pixel(browser: Chromium, x: float, y: float) -> tuple[int, ...]:
    value = browser.evaluate(
        "Array.from(document.getElementById('maze').getContext('2d')"
        f".getImageData({int(x)}, {int(y)}, 1, 1).data.slice(0, 3))"
    )
    return tuple(value)


def rgb(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"\d+", text))


SYSTEM = "You are agent {agent} in a maze. Reply with one JSON action."


def llm_record(agent: str, turn: int) -> dict[str, Any]:
    """A decision record shaped like llm_policies': system prompt as a blob, message history."""
    return {
        "model": "scripted:test",
        "system": Blob(SYSTEM.format(agent=agent)),
        "messages": {
            "prev": 0,
            "new": [{"role": "user", "content": f"turn {turn}: your cell has edges ..."}],
        },
        "attempts": [{"raw": {"text": f'{{"move": "N", "why": "turn {turn}"}}'}}],
        "status": "ok",
    }


def escape_page(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "games.sqlite"
    env = maze_escape_v0.parallel_env(
        preset="full", width=9, height=9, max_turns=40, notebook_mode="rolling_log", journal=path
    )
    env.reset(seed=11)
    for agent in env.possible_agents:
        env.action_space(agent).seed(3)
    turn = 0
    while env.agents:
        actions = {}
        for agent in env.agents:
            action = env.action_space(agent).sample()
            action["notebook"] = {"append": f"{agent} note {turn}"}
            action["radio"] = f"{agent} at turn {turn}" if turn % 6 == 0 else ""
            actions[agent] = action
            assert env.recorder is not None
            env.recorder.note(agent, llm_record(agent, turn))
        env.step(actions)
        turn += 1
    env.close()
    page = tmp_path / "game.html"
    assert main([str(path), "--out", str(page)]) == 0
    with Journal.open_readonly(path) as journal:
        return page, escape_game_data(journal, 1)


def test_escape_page_scrubs_and_shows_the_recorded_values(
    browser: Chromium, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = escape_page(tmp_path)
    agents, width = data["agents"], data["width"]
    # a turn on which every agent stands alone, so each disc sits at its cell's centre
    turn = next(
        t for t in range(5, data["n"]) if len({data["cells"][a][t] for a in agents}) == len(agents)
    )
    browser.open(file_url(page, f"turn={turn}&agent=B"))
    browser.wait_for("document.body.dataset.ready")
    assert browser.evaluate("document.getElementById('error')") is None
    assert browser.evaluate("document.body.dataset.turn") == str(turn)
    assert browser.evaluate("document.getElementById('turnlabel').textContent").startswith(
        f"turn {turn} of {data['n'] - 1}"
    )
    cs = int(browser.evaluate("document.getElementById('maze').dataset.cell"))
    pad = int(browser.evaluate("document.getElementById('maze').dataset.pad"))
    for i, agent in enumerate(agents):  # every agent's disc on its recorded cell
        r, c = divmod(data["cells"][agent][turn], width)
        x, y = pad + (c + 0.5) * cs, pad + (r + 0.5) * cs
        assert pixel(browser, x - 0.15 * cs, y) == rgb(data["colours"][i]), agent
    panel = browser.evaluate("document.getElementById('panel').innerText")
    obs = data["obs"]["B"][turn]
    r, c = divmod(data["cells"]["B"][turn], width)
    assert "Agent B" in panel
    assert f"row {r}, column {c}" in panel
    assert f"[{obs['position'][0]}, {obs['position'][1]}] (own frame" in panel
    assert f"{obs['distance_to_exit'] / 10:.1f} cells straight line" in panel
    edges = ", ".join(f"{d} {obs['edges'][d].replace('_', ' ')}" for d in "NESW")
    assert edges in panel
    assert f"{obs['turn']} ({obs['turns_left']} left)" in panel
    assert f"B note {turn - 1}" in browser.evaluate(
        "document.querySelector('#panel mark').textContent"
    )  # this turn's notebook line is marked as new
    artifact("viewer-escape.png", browser.screenshot(), capsys)

    # scrub: the slider, the keyboard, agent keys, and the URL fragment follow
    browser.evaluate(
        "(() => { const s = document.getElementById('turn'); s.value = 3;"
        " s.dispatchEvent(new Event('input')); })()"
    )
    assert browser.evaluate("document.body.dataset.turn") == "3"
    assert browser.evaluate("location.hash") == "#turn=3&agent=B"
    browser.press("ArrowRight", 39)
    assert browser.evaluate("document.body.dataset.turn") == "4"
    browser.press("1", 49)
    assert browser.evaluate("document.body.dataset.agent") == "A"
    assert "Agent A" in browser.evaluate("document.getElementById('panel').innerText")
    browser.press("End", 35)
    assert browser.evaluate("document.body.dataset.turn") == str(data["n"] - 1)
    r, c = divmod(data["cells"]["A"][data["n"] - 1], width)
    assert f"row {r}, column {c}" in browser.evaluate("document.getElementById('panel').innerText")
    log = browser.evaluate("document.getElementById('log').innerText")
    assert "turn 1 A: A at turn 0" in log
    # the prompt and the raw reply of the selected agent's decision at this turn (the decision
    # records are read after the first paint)
    browser.wait_for("document.body.dataset.decisions")
    browser.evaluate("document.getElementById('turn').value = 2")
    browser.evaluate("document.getElementById('turn').dispatchEvent(new Event('input'))")
    browser.evaluate("document.querySelectorAll('#panel details').forEach(d => d.open = true)")
    panel = browser.evaluate("document.getElementById('panel').innerText")
    assert "prompt (system + 1 message)" in panel
    assert SYSTEM.format(agent="A") in panel and "turn 2: your cell has edges ..." in panel
    assert '{"move": "N", "why": "turn 2"}' in panel


def test_agimaze_page_hides_unvisited_cells_and_shows_the_narration(
    browser: Chromium, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "TRAINING/S1-rivers/STAGE-04/0001.json"
    labyrinth = resolve_pack_path(name)[1].labyrinth
    actions = [str(a) for a in np.random.default_rng(2).choice(labyrinth.actions, 60)]
    path = tmp_path / "games.sqlite"
    game = record_agimaze(path, {"path": name}, actions)
    page = tmp_path / "agimaze.html"
    assert main([str(path), "--out", str(page)]) == 0
    with Journal.open_readonly(path) as journal:
        data = agimaze_game_data(journal, game)
    turn = 12
    step = data["steps"][turn]
    browser.open(file_url(page, f"turn={turn}"))
    browser.wait_for("document.body.dataset.ready")
    assert browser.evaluate("document.body.dataset.turn") == str(turn)
    cs = int(browser.evaluate("document.getElementById('maze').dataset.cell"))
    pad = int(browser.evaluate("document.getElementById('maze').dataset.pad"))
    r, c = step["pos"]
    assert pixel(browser, pad + (c + 0.5) * cs, pad + (r + 0.5) * cs) == PLAYER
    seen = {tuple(s["pos"]) for s in data["steps"][: turn + 1]}
    hidden = next(
        (r, c) for r in range(labyrinth.rows) for c in range(labyrinth.cols) if (r, c) not in seen
    )
    corner = (pad + hidden[1] * cs + 4, pad + hidden[0] * cs + 4)
    assert pixel(browser, *corner) == UNKNOWN_CELL
    panel = browser.evaluate("document.getElementById('panel').innerText")
    assert step["text"] in panel
    assert f"{step['steps']} of {step['budget']}" in panel
    assert f"row {r}, column {c}" in panel
    artifact("viewer-agimaze.png", browser.screenshot(), capsys)
    browser.evaluate("document.getElementById('reveal').click()")  # the spectator reveals all
    assert pixel(browser, *corner) != UNKNOWN_CELL
