"""Viewer and analysis performance: page size and time to first paint, and ``maze-envs analyze``.

Measures, in one run:

* a 600-turn 41x41 Maze Escape game with 3 agents (random moves, a rolling-log note every turn,
  radio messages, and a language-model-like decision record per agent and turn: a 3 KB stable
  prompt prefix stored once as a journal blob, the changing part with the notebook, a raw
  reply): page size, time to build the page, and time to first paint in headless Chromium
  (navigation start to the first frame drawn after the data was read, the page's
  ``maze-envs-painted`` mark; first contentful paint beside it);
* a 1,000-step AGI Maze episode (random actions on a 10x10 CLASSIC labyrinth): the same figures;
* ``maze-envs analyze`` on a journal of 1,000 Maze Escape games (11x11, 120 turns, random moves
  with notes and radio), with 1 and 2 worker processes.

Goals: each page under 5 MB and painted in under 2 s; the 1,000-game analysis under 10 s on 2
cores. The machine is shared and noisy: the script reports wall and CPU time and the load
average, and takes the median of several loads. Usage::

    python benchmarks/viewer_bench.py [--games 1000] [--loads 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from maze_envs import maze_escape_v0
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.bench.analysis import analyze_journal
from maze_envs.journal import Blob, Journal
from maze_envs.view import game_html

PROMPT_PREFIX = (
    "You are one of three agents in a maze. Each turn you see the four edges of your cell, "
    "your notebook and the radio. Reply with one JSON action. "
) * 24  # about 3 KB, identical every turn: stored once


def escape_game(path: Path, turns: int = 600) -> None:
    env = maze_escape_v0.parallel_env(
        preset="navigator", width=41, height=41, max_turns=turns, journal=path
    )
    rng = np.random.default_rng(1)
    prefix = Blob(PROMPT_PREFIX)
    observations, _ = env.reset(seed=1)
    t = 0
    while env.agents:
        actions = {}
        for agent in env.agents:
            note = f"t{t}: at {observations[agent]['position'].tolist()} tried {t % 4}"
            radio = f"{agent} at [{t},{-t}] {agent}-frame near the tree" if t % 6 == 0 else ""
            actions[agent] = {
                "move": int(rng.integers(5)),
                "notebook": {"append": note},
                "radio": radio,
            }
            assert env.recorder is not None
            env.recorder.note(
                agent,
                {
                    "prompt": {
                        "stable": prefix,
                        "turn": f"turn {t}\nnotebook:\n{observations[agent]['notebook']}",
                    },
                    "raw_reply": f'{{"move": "N", "notebook": "{note}", "radio": "{radio}"}}',
                    "usage": {"input_tokens": 1200 + t, "output_tokens": 40},
                },
            )
        observations, *_ = env.step(actions)
        t += 1
    env.close()


def agimaze_game(path: Path, steps: int = 1000) -> int:
    """A random player's episode of exactly ``steps`` steps on a 10x10 labyrinth (seeds are
    tried until one does not escape before); returns the steps recorded."""
    for seed in range(50):
        path.unlink(missing_ok=True)
        env = AgiMazeEnv(path="CLASSIC/HARD/keys/10x10/0000.json", budget_factor=50.0, journal=path)
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        played, over = 0, False
        while played < steps and not over:
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            played, over = played + 1, terminated or truncated
        env.close()
        if played == steps and not terminated:
            return played
    raise RuntimeError(f"no seed gave a {steps}-step episode")


def many_games(path: Path, games: int) -> None:
    env = maze_escape_v0.parallel_env(
        preset="full", width=11, height=11, max_turns=120, notebook_mode="rolling_log", journal=path
    )
    for seed in range(games):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        t = 0
        while env.agents:
            actions: dict[str, Any] = {}
            for agent in env.agents:
                actions[agent] = {
                    "move": int(rng.integers(5)),
                    "notebook": {"append": f"t{t} edges N open E wall" if t % 2 == 0 else ""},
                    "radio": f"{agent} at [{t},2] {agent}-frame" if t % 6 == 0 else "",
                }
            env.step(actions)
            t += 1
    env.close()


def measure_page(journal_path: Path, out: Path, loads: int) -> dict[str, Any]:
    started = time.perf_counter()
    with Journal.open_readonly(journal_path) as journal:
        page = game_html(journal, journal.game_ids()[0])
    build = time.perf_counter() - started
    out.write_text(page, encoding="utf-8")
    result: dict[str, Any] = {"bytes": len(page.encode()), "build_s": build}
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the driver lives with the tests
    from tests.chromium import Chromium, file_url, find_chromium

    if find_chromium() is None:
        result["paint_ms"] = None
        return result
    paints, fcps = [], []
    with Chromium(timeout=60) as browser:
        for _ in range(loads):
            browser.open(file_url(out) + "#turn=0")
            browser.wait_for("document.body.dataset.ready")
            painted = browser.wait_for(
                "(performance.getEntriesByName('maze-envs-painted')[0] || {}).startTime"
            )
            fcp = browser.evaluate(
                "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime"
            )
            paints.append(float(painted))
            if fcp:
                fcps.append(float(fcp))
        browser.press("End", 35)  # scrubbing to the end works on the big page too
        result["last_turn"] = browser.evaluate("document.body.dataset.turn")
    result["paint_ms"] = statistics.median(paints)
    result["paint_ms_all"] = [round(x) for x in paints]
    result["fcp_ms"] = statistics.median(fcps) if fcps else None
    return result


def measure_analysis(path: Path, workers: int) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    rows = analyze_journal(path, workers=workers).escape
    return time.perf_counter() - wall, time.process_time() - cpu, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games in the analysis journal")
    parser.add_argument("--loads", type=int, default=5, help="page loads per page (median)")
    parser.add_argument("--out", type=Path, help="keep the journals and pages here")
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="viewer-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()}; files in {folder}")

    escape = folder / "escape600.sqlite"
    escape.unlink(missing_ok=True)
    escape_game(escape)
    page = measure_page(escape, folder / "escape600.html", args.loads)
    print(
        f"Maze Escape 41x41, 600 turns, 3 agents, decision records: page "
        f"{page['bytes'] / 2**20:.2f} MB, built in {page['build_s']:.2f} s, first paint "
        f"{page['paint_ms']} ms (median of {page.get('paint_ms_all')}), "
        f"FCP {page.get('fcp_ms')} ms, scrubbed to turn {page.get('last_turn')}"
    )
    agimaze = folder / "agimaze1000.sqlite"
    agimaze.unlink(missing_ok=True)
    played = agimaze_game(agimaze)
    page = measure_page(agimaze, folder / "agimaze1000.html", args.loads)
    print(
        f"AGI Maze, {played} steps (10x10): page {page['bytes'] / 2**20:.2f} MB, built in "
        f"{page['build_s']:.2f} s, first paint {page['paint_ms']} ms "
        f"(median of {page.get('paint_ms_all')}), FCP {page.get('fcp_ms')} ms"
    )
    games = folder / f"games{args.games}.sqlite"
    if not games.exists():
        started = time.perf_counter()
        many_games(games, args.games)
        print(f"built {args.games} games in {time.perf_counter() - started:.1f} s")
    for workers in (1, 2):
        wall, cpu, rows = measure_analysis(games, workers)
        print(
            f"maze-envs analyze, {args.games} games ({rows} rows), {workers} worker(s): "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU in the main process; load {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
