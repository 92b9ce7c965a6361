"""A self-contained HTML page for one journaled Maze Escape game.

The page shows the whole maze (walls, exit doorway, landmarks), every agent's true position and
path up to the chosen turn, and, per agent, exactly what it was shown that turn (the journaled
observation, in its JSON form: names instead of indices), the events of the turn and the action
it chose next. A slider, buttons and the arrow keys move through the turns. Everything (data,
script, style) is inside the one file.

Agent positions are not journaled (observations may not contain them), so the page data is made
by replaying the game; the journal is verified on the way and the result is shown on the page.
A corrupt journal is drawn up to its first bad turn.

Usage: ``python -m maze_envs.view JOURNAL [--game N] [--out FILE]``.

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs import maze_escape_v0
    >>> from maze_envs.journal import Journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> env = maze_escape_v0.parallel_env(width=6, height=5, max_turns=3, journal=path)
    >>> _ = env.reset(seed=1)
    >>> while env.agents:
    ...     _ = env.step({a: env.action_space(a).sample() for a in env.agents})
    >>> env.close()
    >>> with Journal(path) as journal:
    ...     page = escape_game_html(journal, 1)
    >>> page.startswith("<!DOCTYPE html>"), "game 1: ok, 4 turns verified" in page
    (True, True)
"""

from __future__ import annotations

import argparse
import html
import json
from pathlib import Path
from typing import Any, Final

from maze_envs.escape.convert import observation_from_stored, observation_to_json
from maze_envs.escape.env import MazeEscapeEnv
from maze_envs.escape.generator import generator_from_description
from maze_envs.escape.replay import EscapeReplayer, stored_action
from maze_envs.escape.types import Config
from maze_envs.escape.viewer import AGENT_COLOURS, CORAL
from maze_envs.journal import Journal, JournalError, Problem, scan_turns, verify_game


def escape_game_data(journal: Journal, game_id: int) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data (made by replaying the game)."""
    info = journal.game(game_id)
    report = verify_game(journal, game_id, EscapeReplayer)
    config = Config.model_validate(info.config)
    generator = None if info.generator is None else generator_from_description(info.generator)
    env = MazeEscapeEnv(config, generator=generator)
    _, infos = env.reset(seed=info.seed)
    layout = env.layout
    turns: list[dict[str, Any]] = []
    for record in scan_turns(journal, game_id):
        if isinstance(record, Problem):
            break
        if record.turn > 0:
            if not env.agents:
                break
            try:
                actions = {a: stored_action(x) for a, x in record.actions.items()}
                *_, infos = env.step(actions)
            except ValueError:
                break
        try:
            observations = _readable(record.observations, config)
        except (ValueError, KeyError, TypeError):  # a damaged row: the page stops before it
            break
        turns.append(
            {
                "cells": {agent: list(infos[agent]["cell"]) for agent in env.possible_agents},
                "observations": observations,
                "actions": record.actions,
                "events": record.events,
            }
        )
    if report.status == "failed":  # draw only the turns that verified
        del turns[report.turns_verified :]
    return {
        "game": game_id,
        "env_id": info.env_id,
        "seed": info.seed,
        "library_version": info.library_version,
        "created": info.created,
        "config": info.config,
        "outcome": info.outcome,
        "verification": report.describe(),
        "verified": report.ok,
        "width": layout.width,
        "height": layout.height,
        "maze": layout.maze.tolist(),
        "exit": list(layout.exit_cell),
        "doorway": layout.doorway,
        "landmarks": [[*cell, name] for cell, name in layout.landmarks],
        "agents": env.possible_agents,
        "colours": [
            f"rgb{AGENT_COLOURS[i % len(AGENT_COLOURS)]}" for i in range(config.num_agents)
        ],
        "coral": f"rgb{CORAL}",
        "turns": turns,
    }


def _readable(observations: dict[str, Any], config: Config) -> dict[str, Any]:
    """The stored observations in their JSON form (names instead of indices, no padding)."""
    return {
        agent: observation_to_json(observation_from_stored(stored, config, agent), config, agent)
        for agent, stored in observations.items()
    }


def escape_game_html(journal: Journal, game_id: int) -> str:
    """The whole page for one game."""
    data = escape_game_data(journal, game_id)
    # "</" would end the script element early; JSON allows the escaped form.
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    title = html.escape(f"Maze Escape game {game_id}, seed {data['seed']}")
    return _PAGE.replace("{{TITLE}}", title).replace("{{DATA}}", payload)


def main(argv: list[str]) -> int:
    """Write the HTML page of one game (default: the first) of a journal."""
    parser = argparse.ArgumentParser(
        prog="maze-envs view",
        description="Write a self-contained HTML page to step through a journaled Maze Escape "
        "game: the whole maze, and what each agent saw and did every turn.",
    )
    parser.add_argument("journal", help="path of the SQLite journal")
    parser.add_argument("--game", type=int, help="game id (default: the first game)")
    parser.add_argument("--out", help="output file (default: JOURNAL-gameN.html)")
    args = parser.parse_args(argv)
    try:
        with Journal(args.journal, create=False) as journal:
            ids = journal.game_ids()
            game_id = args.game if args.game is not None else (ids[0] if ids else None)
            if game_id not in ids:
                print(f"no game {game_id} in {args.journal}; games: {ids}")
                return 2
            page = escape_game_html(journal, game_id)
    except (JournalError, ValueError) as exc:
        print(f"cannot draw the game: {exc}")
        return 2
    out = Path(args.out or f"{Path(args.journal).with_suffix('')}-game{game_id}.html")
    out.write_text(page, encoding="utf-8")
    print(f"wrote {out}")
    return 0


_PAGE: Final = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{TITLE}}</title>
<style>
body{font:14px system-ui,sans-serif;margin:16px;background:#faf6ea;color:#223}
h1{font-size:18px;margin:0 0 4px}
#meta{color:#555;margin-bottom:8px}
#bad{color:#b00;font-weight:bold}
#controls{margin:8px 0;display:flex;gap:8px;align-items:center}
#turn{width:420px}
#main{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}
#agents{display:flex;gap:12px;flex-wrap:wrap;flex:1;min-width:320px}
.agent{background:#fff;border:2px solid #ccc;border-radius:8px;padding:8px;width:340px}
.agent h2{font-size:15px;margin:0 0 4px}
.agent pre{background:#f4f1e6;max-height:260px;overflow:auto;margin:4px 0;padding:4px;
  font-size:12px;white-space:pre-wrap;word-break:break-word}
.label{font-weight:bold;margin-top:4px}
</style></head><body>
<h1>{{TITLE}}</h1>
<div id="meta"></div>
<div id="controls">
 <button id="prev" title="left arrow">&#9664;</button>
 <button id="play">play</button>
 <button id="next" title="right arrow">&#9654;</button>
 <input id="turn" type="range" min="0" value="0">
 <span id="turnlabel"></span>
</div>
<div id="main"><canvas id="maze"></canvas><div id="agents"></div></div>
<script id="game" type="application/json">{{DATA}}</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("game").textContent);
const N = 1, E = 2, S = 4, W = 8;
const last = D.turns.length - 1;
const cell = Math.max(12, Math.min(36, Math.floor(640 / Math.max(D.width, D.height))));
const pad = 16;
const canvas = document.getElementById("maze");
canvas.width = D.width * cell + 2 * pad;
canvas.height = D.height * cell + 2 * pad;
const g = canvas.getContext("2d");
const slider = document.getElementById("turn");
slider.max = Math.max(last, 0);
const meta = document.getElementById("meta");
const outcome = D.outcome ? (D.outcome.success ? "team escaped" : "not escaped") +
  " after " + D.outcome.turns + " turns" : "unfinished";
meta.innerHTML = "";
meta.append(`env ${D.env_id} · seed ${D.seed} · ${D.width}x${D.height} · ` +
  `${D.agents.length} agents · library ${D.library_version} · ${outcome} · `);
const verdict = document.createElement("span");
verdict.textContent = D.verification;
if (!D.verified) verdict.id = "bad";
meta.append(verdict);

function centre(rc) { return [pad + (rc[1] + 0.5) * cell, pad + (rc[0] + 0.5) * cell]; }

function drawMaze() {
  g.fillStyle = "#faf6ea"; g.fillRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = "rgba(255,127,80,0.25)";
  g.fillRect(pad + D.exit[1] * cell, pad + D.exit[0] * cell, cell, cell);
  g.lineCap = "round";
  for (let r = 0; r < D.height; r++) for (let c = 0; c < D.width; c++) {
    const m = D.maze[r][c], x = pad + c * cell, y = pad + r * cell;
    const sides = [[N, x, y, x + cell, y], [E, x + cell, y, x + cell, y + cell],
                   [S, x, y + cell, x + cell, y + cell], [W, x, y, x, y + cell]];
    for (const [bit, x0, y0, x1, y1] of sides) {
      const door = r === D.exit[0] && c === D.exit[1] && bit === D.doorway;
      if (m & bit && !door) continue;
      g.strokeStyle = door ? D.coral : "#26469f"; g.lineWidth = door ? 5 : 2;
      g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
    }
  }
  g.font = Math.max(8, Math.floor(cell / 3.2)) + "px sans-serif";
  g.textAlign = "center";
  for (const [r, c, name] of D.landmarks) {
    const [x, y] = centre([r, c]);
    g.fillStyle = "#d6aa28"; g.fillRect(x - cell / 8, y - cell / 3, cell / 4, cell / 4);
    g.fillStyle = "#555"; g.fillText(name, x, y + cell / 3);
  }
}

function draw(t) {
  drawMaze();
  D.agents.forEach((a, i) => {
    g.strokeStyle = D.colours[i]; g.globalAlpha = 0.55; g.lineWidth = 3;
    g.beginPath();
    for (let k = 0; k <= t; k++) {
      const [x, y] = centre(D.turns[k].cells[a]);
      const o = (i - (D.agents.length - 1) / 2) * 3;
      if (k === 0) g.moveTo(x + o, y + o); else g.lineTo(x + o, y + o);
    }
    g.stroke(); g.globalAlpha = 1;
  });
  const here = {};
  D.agents.forEach((a, i) => {
    const key = D.turns[t].cells[a].join(",");
    const k = here[key] = (here[key] || 0) + 1;
    const [x, y] = centre(D.turns[t].cells[a]);
    const dx = (k - 1) * cell / 5;
    g.fillStyle = D.colours[i];
    g.beginPath(); g.arc(x - cell / 6 + dx, y - cell / 10, cell / 4.5, 0, 7); g.fill();
    g.fillStyle = "#fff"; g.font = "bold " + Math.floor(cell / 3.5) + "px sans-serif";
    g.fillText(a, x - cell / 6 + dx, y - cell / 10 + cell / 10);
  });
}

function block(parent, label, value) {
  const l = document.createElement("div"); l.className = "label"; l.textContent = label;
  const p = document.createElement("pre");
  p.textContent = typeof value === "string" ? value : JSON.stringify(value, null, 1);
  parent.append(l, p);
}

function panels(t) {
  const box = document.getElementById("agents"); box.innerHTML = "";
  const turn = D.turns[t], next = D.turns[t + 1];
  D.agents.forEach((a, i) => {
    const card = document.createElement("div"); card.className = "agent";
    card.style.borderColor = D.colours[i];
    const h = document.createElement("h2"); h.style.color = D.colours[i];
    const rc = turn.cells[a];
    h.textContent = `${a} (spectator view: row ${rc[0]}, column ${rc[1]})`;
    card.append(h);
    const obs = turn.observations[a];
    if (obs === undefined) { block(card, "observation", "none this turn"); }
    else {
      const {notebook, ...rest} = obs;
      block(card, `saw at turn ${t}`, rest);
      block(card, "its notebook", notebook === "" ? "(empty)" : notebook);
    }
    if (t > 0) block(card, `events of turn ${t}`, turn.events[a] ?? "none");
    block(card, next ? `chose next (turn ${t + 1} action)` : "chose next",
          next && next.actions[a] !== undefined ? next.actions[a] : "(game over)");
    box.append(card);
  });
}

let timer = null;
function show(t) {
  t = Math.max(0, Math.min(last, t));
  slider.value = t;
  document.getElementById("turnlabel").textContent = `turn ${t} of ${last}`;
  draw(t); panels(t);
}
slider.addEventListener("input", () => show(+slider.value));
document.getElementById("prev").onclick = () => show(+slider.value - 1);
document.getElementById("next").onclick = () => show(+slider.value + 1);
document.getElementById("play").onclick = (ev) => {
  if (timer) { clearInterval(timer); timer = null; ev.target.textContent = "play"; return; }
  ev.target.textContent = "pause";
  timer = setInterval(() => {
    if (+slider.value >= last) { clearInterval(timer); timer = null;
      document.getElementById("play").textContent = "play"; return; }
    show(+slider.value + 1);
  }, 250);
};
document.addEventListener("keydown", (ev) => {
  if (ev.key === "ArrowLeft") show(+slider.value - 1);
  if (ev.key === "ArrowRight") show(+slider.value + 1);
});
if (last >= 0) show(0); else meta.append(" (no readable turns)");
</script></body></html>
"""
