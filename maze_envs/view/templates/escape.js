// maze-envs viewer: Maze Escape (the whole maze, trails, and per agent what it saw and did).
const N = 1, E = 2, S = 4, W = 8;
const EDGE_COLOUR = {open: "#c9c3b2", interior_wall: "#26469f", outer_brick: "#8a4b2a"};
const EDGE_WIDTH = {open: 1, interior_wall: 4, outer_brick: 7};
// Offsets (in fractions of a cell) and radius for k agents on one cell: nobody hides anybody.
function crowd(k) {
  if (k === 1) return [[[0, 0]], 0.27];
  if (k === 2) return [[[-0.22, 0], [0.22, 0]], 0.2];
  if (k === 3) return [[[-0.22, -0.18], [0.22, -0.18], [0, 0.22]], 0.17];
  if (k === 4) return [[[-0.22, -0.22], [0.22, -0.22], [-0.22, 0.22], [0.22, 0.22]], 0.17];
  const grid = [];
  for (const dy of [-0.3, 0, 0.3]) for (const dx of [-0.3, 0, 0.3]) grid.push([dx, dy]);
  return [grid.slice(0, Math.min(k, 9)), 0.14];
}

function viewer(D) {
  const count = D.n;
  const agents = D.agents;
  const colour = Object.fromEntries(agents.map((a, i) => [a, D.colours[i]]));
  const notebooks = Object.fromEntries(agents.map((a) => [a, undelta(D.notebook[a])]));
  const histories = {};  // per agent, the decoded prompt messages of each decision (lazily)
  const cs = Math.max(10, Math.min(36, Math.floor(720 / Math.max(D.width, D.height))));
  const pad = 14;
  const canvas = $("maze");
  canvas.width = D.width * cs + 2 * pad;
  canvas.height = D.height * cs + 2 * pad;
  $("legend").style.maxWidth = canvas.width + "px";
  canvas.dataset.cell = cs;  // the geometry, for tools and tests that read the picture
  canvas.dataset.pad = pad;
  const g = canvas.getContext("2d");
  const rc = (flat) => [Math.floor(flat / D.width), flat % D.width];
  const centre = (flat) => { const [r, c] = rc(flat); return [pad + (c + 0.5) * cs, pad + (r + 0.5) * cs]; };
  const exitFlat = D.exit[0] * D.width + D.exit[1];

  // The static maze, drawn once.
  const back = document.createElement("canvas");
  back.width = canvas.width; back.height = canvas.height;
  const b = back.getContext("2d");
  b.fillStyle = "#faf6ea"; b.fillRect(0, 0, back.width, back.height);
  b.fillStyle = "rgba(255,127,80,0.28)";
  b.fillRect(pad + D.exit[1] * cs, pad + D.exit[0] * cs, cs, cs);
  b.lineCap = "round";
  for (let r = 0; r < D.height; r++) for (let c = 0; c < D.width; c++) {
    const m = D.maze[r * D.width + c], x = pad + c * cs, y = pad + r * cs;
    const sides = [[N, x, y, x + cs, y], [E, x + cs, y, x + cs, y + cs],
                   [S, x, y + cs, x + cs, y + cs], [W, x, y, x, y + cs]];
    for (const [bit, x0, y0, x1, y1] of sides) {
      const door = r === D.exit[0] && c === D.exit[1] && bit === D.doorway;
      if ((m & bit) && !door) continue;
      b.strokeStyle = door ? D.coral : "#26469f"; b.lineWidth = door ? Math.max(4, cs / 5) : 2;
      b.beginPath(); b.moveTo(x0, y0); b.lineTo(x1, y1); b.stroke();
    }
  }
  b.textAlign = "center"; b.textBaseline = "middle";
  b.font = "bold " + Math.max(8, Math.floor(cs / 2.4)) + "px sans-serif";
  D.landmarks.forEach(([r, c], i) => {
    const x = pad + c * cs, y = pad + r * cs;
    b.fillStyle = "#d6aa28"; b.fillRect(x + cs * 0.12, y + cs * 0.12, cs * 0.42, cs * 0.36);
    b.fillStyle = "#3c2d05"; b.fillText(String(i + 1), x + cs * 0.33, y + cs * 0.31);
  });
  const legend = $("legend");
  legend.append(el("span", {}, el("b", {style: "color:" + D.coral}, "▮"), " exit"));
  D.landmarks.forEach(([r, c, name], i) => legend.append(
    el("span", {}, el("b", {style: "color:#b8901e"}, String(i + 1)), " " + name + " (row " + r + ", col " + c + ")")));

  function draw(t, selected) {
    g.drawImage(back, 0, 0);
    agents.forEach((a, i) => {
      const o = (i - (agents.length - 1) / 2) * Math.max(1, cs / 12);
      g.strokeStyle = colour[a]; g.globalAlpha = a === selected ? 0.9 : 0.45;
      g.lineWidth = a === selected ? 3 : 2; g.lineJoin = "round";
      g.beginPath();
      for (let k = 0; k <= t; k++) {
        const [x, y] = centre(D.cells[a][k]);
        if (k === 0) g.moveTo(x + o, y + o); else g.lineTo(x + o, y + o);
      }
      g.stroke(); g.globalAlpha = 1;
    });
    const groups = new Map();
    agents.forEach((a) => {
      const cell = D.cells[a][t];
      if (!groups.has(cell)) groups.set(cell, []);
      groups.get(cell).push(a);
    });
    g.textAlign = "center"; g.textBaseline = "middle";
    for (const [cell, members] of groups) {
      const [x, y] = centre(cell);
      const [offsets, radius] = crowd(members.length);
      const shown = members.length <= offsets.length ? members : members.slice(0, offsets.length - 1);
      shown.forEach((a, k) => {
        const px = x + offsets[k][0] * cs, py = y + offsets[k][1] * cs;
        g.fillStyle = colour[a];
        g.beginPath(); g.arc(px, py, radius * cs, 0, 2 * Math.PI); g.fill();
        g.lineWidth = a === selected ? 2.5 : 1; g.strokeStyle = a === selected ? "#000" : "#333";
        g.stroke();
        if (radius * cs >= 5) {
          g.fillStyle = "#fff"; g.font = "bold " + Math.floor(radius * cs * 1.3) + "px sans-serif";
          g.fillText(a, px, py + 1);
        }
      });
      if (shown.length < members.length) {
        const [dx, dy] = offsets[offsets.length - 1];
        g.fillStyle = "#000"; g.font = Math.floor(cs / 3) + "px sans-serif";
        g.fillText("+" + (members.length - shown.length), x + dx * cs, y + dy * cs);
      }
    }
  }

  // What one agent's cell looks like to it: the four edges drawn around a square.
  function cellPicture(obs) {
    const size = 112, m = 22, s = size - 2 * m;
    const c = el("canvas", {class: "cell", width: size, height: size, "aria-label": "the cell as the agent saw it"});
    const k = c.getContext("2d");
    k.fillStyle = obs.on_exit ? "rgba(255,127,80,0.3)" : "#fbfaf5"; k.fillRect(m, m, s, s);
    const lines = {N: [m, m, m + s, m], E: [m + s, m, m + s, m + s], S: [m, m + s, m + s, m + s], W: [m, m, m, m + s]};
    k.lineCap = "square";
    for (const [dir, [x0, y0, x1, y1]] of Object.entries(lines)) {
      const kind = obs.edges[dir];
      k.strokeStyle = EDGE_COLOUR[kind]; k.lineWidth = EDGE_WIDTH[kind];
      k.setLineDash(kind === "open" ? [3, 4] : []);
      k.beginPath(); k.moveTo(x0, y0); k.lineTo(x1, y1); k.stroke();
    }
    k.setLineDash([]);
    k.fillStyle = "#223"; k.font = "11px sans-serif"; k.textAlign = "center"; k.textBaseline = "middle";
    const label = {N: [size / 2, m / 2 - 1], S: [size / 2, size - m / 2 + 1], E: [size - m / 2, size / 2], W: [m / 2, size / 2]};
    for (const [dir, [x, y]] of Object.entries(label)) {
      const used = obs.used_exits && obs.used_exits.includes(dir);
      k.fillStyle = used ? "#1a7f37" : "#667";
      k.fillText(dir + (used ? "✓" : ""), x, y);
    }
    k.fillStyle = "#3c2d05"; k.font = "bold 12px sans-serif";
    if (obs.landmark) k.fillText(obs.landmark, size / 2, size / 2 - 8);
    if (obs.on_exit) { k.fillStyle = "#b8431b"; k.fillText("EXIT", size / 2, size / 2 + 10); }
    return c;
  }

  function edgesText(obs) {
    return ["N", "E", "S", "W"].map((d) => d + " " + obs.edges[d].replace("_", " ")).join(", ");
  }

  function sparkline(a, t) {
    const w = 320, h = 46;
    const c = el("canvas", {class: "spark", width: w, height: h, title: "path distance to the exit over the game"});
    const k = c.getContext("2d");
    const values = D.path[a];
    const top = Math.max(1, ...values);
    k.strokeStyle = colour[a]; k.lineWidth = 1.5; k.beginPath();
    values.forEach((v, i) => {
      const x = 2 + (w - 4) * i / Math.max(1, values.length - 1), y = h - 3 - (h - 6) * v / top;
      if (i === 0) k.moveTo(x, y); else k.lineTo(x, y);
    });
    k.stroke();
    const x = 2 + (w - 4) * t / Math.max(1, values.length - 1);
    k.strokeStyle = "#000"; k.lineWidth = 1; k.beginPath(); k.moveTo(x, 0); k.lineTo(x, h); k.stroke();
    return c;
  }

  function actionNode(action) {
    if (action === null || action === undefined) return el("span", {class: "muted"}, "none");
    if (typeof action !== "object" || !("move" in action)) return valueNode(action, 0);
    const parts = [facts([["move", action.move], ["notebook edit", action.notebook ? valueNode(action.notebook, 0) : null],
                          ["radio", action.radio === null || action.radio === "" ? null : action.radio]])];
    if (action.raw !== undefined) parts.push(details("as received", valueNode(action.raw, 0)));
    return el("div", {}, parts);
  }

  function eventPills(ev) {
    if (!ev) return el("span", {class: "muted"}, "none");
    const good = {moved: "good", sent: "good", applied: "good", doorway: "warn", stayed: ""};
    const box = el("div", {}, [
      pill("move: " + ev.move, ev.move && ev.move.startsWith("bumped") ? "bad" : good[ev.move] || ""),
      pill("notebook: " + ev.notebook + (ev.notebook_reason ? " (" + ev.notebook_reason + ")" : ""),
           ev.notebook === "rejected" ? "bad" : good[ev.notebook] || ""),
      pill("radio: " + ev.radio + (ev.radio_reason ? " (" + ev.radio_reason + ")" : ""),
           ev.radio === "refused" ? "bad" : good[ev.radio] || ""),
    ]);
    if (ev.first_exit_visit) box.append(pill("first exit visit", "good"));
    if (ev.team_success) box.append(pill("team success", "good"));
    return box;
  }

  function shownNotebooks(a, t, obs) {
    const names = obs.teammate_notebooks || [];
    const texts = obs.teammate_notebooks_text || {};
    if (!names.length && !Object.keys(texts).length) return null;
    const box = el("div", {});
    for (const name of names) box.append(details(name + "'s notebook (same cell)", pre(notebooks[name][t]), false));
    for (const [name, text] of Object.entries(texts)) box.append(details(name + "'s notebook (same cell)", pre(text), false));
    return box;
  }

  function panel(t, a) {
    const box = $("panel");
    box.replaceChildren();
    box.style.borderColor = colour[a];
    const [r, c] = rc(D.cells[a][t]);
    const rewardSoFar = D.reward[a].slice(0, t + 1).reduce((x, y) => x + y, 0);
    box.append(el("h2", {style: "color:" + colour[a]}, "Agent " + a));
    box.append(facts([
      ["true cell (spectator)", "row " + r + ", column " + c + (D.cells[a][t] === exitFlat ? " — on the exit" : "")],
      ["path distance to exit", D.path[a][t] + " moves"],
      ["reward", "this turn " + D.reward[a][t] + ", so far " + rewardSoFar],
      ["first exit visit", D.first_exit[a] === null ? "not yet" : "turn " + D.first_exit[a]
        + (D.first_exit[a] > t ? " (later)" : "")],
    ]));
    box.append(sparkline(a, t));
    if (t > 0) {
      box.append(el("h3", {}, "turn " + t + ": its action and what happened"));
      box.append(el("div", {class: "row"}, actionNode(D.action[a][t]), eventPills(D.events[a][t])));
    }
    const obs = D.obs[a][t];
    box.append(el("h3", {}, "what it saw at turn " + t));
    if (!obs) box.append(el("p", {class: "muted"}, "no observation recorded"));
    else {
      const la = obs.last_action || {};
      const rows = [
        ["edges", edgesText(obs)],
        ["on exit", obs.on_exit ? "yes" : "no"],
        ["landmark", obs.landmark],
        ["turn", obs.turn + " (" + obs.turns_left + " left)"],
      ];
      // the optional features' rows, worded by each feature (maze_envs/escape/features)
      for (const [label, text] of (D.panels && D.panels[a][t]) || []) rows.push([label, text]);
      rows.push(["last move", la.move]);
      rows.push(["last notebook edit", la.notebook + (la.notebook_reason ? ": " + la.notebook_reason : "")]);
      rows.push(["last radio", la.radio + (la.radio_reason ? ": " + la.radio_reason : "")
        + (la.radio_cooldown ? " (cooldown " + la.radio_cooldown + ")" : "")]);
      box.append(el("div", {class: "row"}, cellPicture(obs), facts(rows)));
      const heard = Object.entries(obs.radio || {});
      box.append(el("h3", {}, "radio heard"));
      box.append(heard.length ? facts(heard.map(([who, text]) => [who, text])) : el("div", {class: "muted"}, "nothing"));
      const shown = shownNotebooks(a, t, obs);
      if (shown) { box.append(el("h3", {}, "teammates' notebooks it read")); box.append(shown); }
    }
    box.append(el("h3", {}, "its notebook after turn " + t + (t > 0 ? " (change since turn " + (t - 1) + " marked)" : "")));
    box.append(changed(t > 0 ? notebooks[a][t - 1] : "", notebooks[a][t]));
    box.append(el("h3", {}, "its reply to what it saw (the action of turn " + (t + 1) + ")"));
    if (t + 1 >= count) box.append(el("div", {class: "muted"}, "none: the game ended at turn " + t));
    else {
      box.append(actionNode(D.action[a][t + 1]));
      const record = D.decisions && D.decisions[a] ? D.decisions[a][t + 1] : null;
      if (record !== null && record !== undefined) {
        if (!histories[a]) histories[a] = messageHistory(D.decisions[a]);
        box.append(el("h3", {}, "decision record (prompt, raw reply, ...)"));
        box.append(decisionNode(record, D.blobs || {}, histories[a][t + 1]));
      }
    }
  }

  // Tabs (one per agent) and the radio log across turns.
  const tabs = $("tabs");
  const tabButtons = {};
  agents.forEach((a, i) => {
    const button = el("button", {role: "tab", style: "border-color:" + colour[a] + ";color:" + colour[a],
                                 title: "key " + (i + 1), onclick: () => window.VIEW.show(window.VIEW.turn, a)}, a);
    tabButtons[a] = button; tabs.append(button);
  });
  canvas.addEventListener("click", (ev) => {
    const rect = canvas.getBoundingClientRect();
    const x = (ev.clientX - rect.left) * canvas.width / rect.width, y = (ev.clientY - rect.top) * canvas.height / rect.height;
    const c = Math.floor((x - pad) / cs), r = Math.floor((y - pad) / cs);
    const t = window.VIEW.turn;
    const here = agents.filter((a) => D.cells[a][t] === r * D.width + c);
    if (here.length) {
      const k = here.indexOf(window.VIEW.agent);
      window.VIEW.show(t, here[(k + 1) % here.length]);
    }
  });
  $("logtitle").textContent = "Radio log (" + D.radio.length + " messages; click one to go to its turn)";
  const log = $("log");
  const logRows = D.radio.map(([turn, sender, text, result, reason]) => {
    const row = el("div", {onclick: () => window.VIEW.show(turn, sender)},
      el("b", {style: "color:" + colour[sender]}, "turn " + turn + " " + sender), ": ", text,
      result === "sent" ? "" : el("span", {class: "muted"}, " (" + result + (reason ? ": " + reason : "") + ")"));
    row.dataset.turn = turn;
    log.append(row);
    return [turn, row];
  });
  if (!D.radio.length) log.append(el("div", {class: "muted"}, "no radio messages"));

  function show(t, a) {
    draw(t, a);
    panel(t, a);
    for (const x of agents) {
      tabButtons[x].setAttribute("aria-selected", x === a ? "true" : "false");
      tabButtons[x].textContent = x + (D.first_exit[x] !== null && D.first_exit[x] <= t ? " ✓" : "");
    }
    let next = null;
    for (const [turn, row] of logRows) {
      row.className = turn > t ? "future" : turn === t ? "now" : "";
      if (next === null && turn >= t) next = row;
    }
    scrollLog(next);
  }

  function label(t) {
    const out = agents.filter((a) => D.first_exit[a] !== null && D.first_exit[a] <= t).length;
    return "turn " + t + " of " + (count - 1) + " · " + out + "/" + agents.length + " reached the exit";
  }

  return {count, agents, show, label};
}
