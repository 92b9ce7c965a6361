// maze-envs viewer: AGI Maze (the labyrinth, the player, narration, inventory, steps and budget).
const UP = 1, RIGHT = 2, DOWN = 4, LEFT = 8;
const ITEM_COLOUR = {K: "#d6aa28", T: "#965f28", E: "#8c3cbe", B: "#149696", F: "#ebc828", G: "#3c823c"};
const ARROWS = {up: "^", down: "v", left: "<", right: ">"};

function viewer(D) {
  const count = D.n;
  const steps = D.steps;
  const labs = D.labyrinths;
  const known = labs.filter((l) => l);
  const maxRows = Math.max(1, ...known.map((l) => l.rows)), maxCols = Math.max(1, ...known.map((l) => l.cols));
  const cs = Math.max(24, Math.min(64, Math.floor(560 / Math.max(maxRows, maxCols))));
  const pad = 26;
  const canvas = $("maze");
  canvas.width = maxCols * cs + 2 * pad;
  canvas.height = maxRows * cs + 2 * pad;
  $("legend").style.maxWidth = canvas.width + "px";
  canvas.dataset.cell = cs;  // the geometry, for tools and tests that read the picture
  canvas.dataset.pad = pad;
  const g = canvas.getContext("2d");
  let reveal = false;
  let history = null;  // the decoded prompt messages of each decision (lazily)

  function contents(lab) {
    const out = new Map();
    const put = (cell, glyph, item) => { if (cell) out.set(cell[0] + "," + cell[1], {glyph, item}); };
    put(lab.key, "K", 0); put(lab.chest, "T", 1); put(lab.exit_key, "E", 2);
    put(lab.boat, "B", 3); put(lab.flashlight, "F", 4);
    lab.grenade_packs.forEach((p, i) => put(p.cell, "G", "pack" + i));
    lab.rivers.forEach((river) => {
      const path = [...river.cells, river.mouth];
      river.cells.forEach((cell, i) => {
        const next = path[i + 1];
        const dir = next[0] < cell[0] ? "up" : next[0] > cell[0] ? "down" : next[1] < cell[1] ? "left" : "right";
        put(cell, ARROWS[dir], "water");
      });
      put(river.mouth, "m", "water");
    });
    lab.pits.forEach((cycle, i) => cycle.cells.forEach((cell) => put(cell, String(i + 1), "pit")));
    return out;
  }
  const glyphs = labs.map((lab) => lab ? contents(lab) : null);

  // The labyrinth shown at step t: the running one, else the last one played.
  function labAt(t) {
    for (let s = t; s >= 0; s--) if (steps[s].lab >= 0 && labs[steps[s].lab]) return [steps[s].lab, s];
    return [-1, -1];
  }

  function draw(t) {
    g.fillStyle = "#faf6ea"; g.fillRect(0, 0, canvas.width, canvas.height);
    const [L, shownAt] = labAt(t);
    if (L < 0) {
      g.fillStyle = "#667"; g.font = "14px sans-serif"; g.textAlign = "left";
      g.fillText("waiting for the first start", pad, pad + 20);
      return;
    }
    const lab = labs[L], here = steps[shownAt];
    const hidden = !lab.open_map && !reveal;
    const visited = new Set();
    const trail = [];
    for (let s = 0; s <= shownAt; s++) {
      if (steps[s].lab !== L || !steps[s].pos) continue;
      const [r, c] = steps[s].pos;
      trail.push([r, c]);
      if (r >= 0 && r < lab.rows && c >= 0 && c < lab.cols) visited.add(r + "," + c);
    }
    const isKnown = (r, c) => !hidden || visited.has(r + "," + c);
    const blown = new Set((here.blown || []).map((p) => p.join(",")));
    const isOpen = (r, c, bit) => {
      if (lab.open_edges[r][c] & bit) return true;
      const [nr, nc] = bit === UP ? [r - 1, c] : bit === DOWN ? [r + 1, c] : bit === LEFT ? [r, c - 1] : [r, c + 1];
      const [a, b] = [[r, c], [nr, nc]].sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      return blown.has([...a, ...b].join(","));
    };
    const held = here.held || [0, 0, 0, 0, 0, 0];
    const taken = (item) => typeof item === "number" ? !!held[item]
      : typeof item === "string" && item.startsWith("pack") ? !!(held[5] & (1 << +item.slice(4))) : false;
    g.textAlign = "center"; g.textBaseline = "middle";
    for (let r = 0; r < lab.rows; r++) for (let c = 0; c < lab.cols; c++) {
      const x = pad + c * cs, y = pad + r * cs;
      if (!isKnown(r, c)) {
        g.fillStyle = "#d9d4c5"; g.fillRect(x + 1, y + 1, cs - 2, cs - 2);
        g.fillStyle = "#9a937f"; g.font = Math.floor(cs / 2.5) + "px sans-serif"; g.fillText("?", x + cs / 2, y + cs / 2);
        continue;
      }
      const item = glyphs[L].get(r + "," + c);
      if (item && !taken(item.item)) {
        if (item.item === "water") { g.fillStyle = "#b0d6f5"; g.fillRect(x + 1, y + 1, cs - 2, cs - 2); g.fillStyle = "#26469f"; }
        else if (item.item === "pit") { g.fillStyle = "#787878"; g.beginPath(); g.arc(x + cs / 2, y + cs / 2, cs * 0.28, 0, 7); g.fill(); g.fillStyle = "#fff"; }
        else { g.fillStyle = ITEM_COLOUR[item.glyph]; g.fillRect(x + cs * 0.2, y + cs * 0.2, cs * 0.6, cs * 0.6); g.fillStyle = "#fff"; }
        g.font = "bold " + Math.floor(cs / 2.6) + "px sans-serif";
        g.fillText(item.glyph, x + cs / 2, y + cs / 2);
      }
    }
    g.lineCap = "round";
    for (let r = 0; r < lab.rows; r++) for (let c = 0; c < lab.cols; c++) {
      if (!isKnown(r, c)) continue;
      const x = pad + c * cs, y = pad + r * cs;
      const sides = [[UP, x, y, x + cs, y, r > 0], [DOWN, x, y + cs, x + cs, y + cs, r < lab.rows - 1],
                     [LEFT, x, y, x, y + cs, c > 0], [RIGHT, x + cs, y, x + cs, y + cs, c < lab.cols - 1]];
      for (const [bit, x0, y0, x1, y1, inside] of sides) {
        if (!inside || isOpen(r, c, bit)) continue;
        g.strokeStyle = "#26469f"; g.lineWidth = 3;
        g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
      }
    }
    g.strokeStyle = "#464646"; g.lineWidth = 5;
    g.strokeRect(pad - 2, pad - 2, lab.cols * cs + 4, lab.rows * cs + 4);
    const [er, ec] = lab.exit.cell;
    if (isKnown(er, ec)) {
      const x = pad + ec * cs, y = pad + er * cs;
      const seg = {up: [x + 4, y - 2, x + cs - 4, y - 2], down: [x + 4, y + cs + 2, x + cs - 4, y + cs + 2],
                   left: [x - 2, y + 4, x - 2, y + cs - 4], right: [x + cs + 2, y + 4, x + cs + 2, y + cs - 4]}[lab.exit.side];
      g.strokeStyle = "#ff7f50"; g.lineWidth = 7;
      g.beginPath(); g.moveTo(seg[0], seg[1]); g.lineTo(seg[2], seg[3]); g.stroke();
    }
    if (trail.length > 1) {
      g.strokeStyle = "rgba(214,40,40,0.45)"; g.lineWidth = 3; g.beginPath();
      trail.forEach(([r, c], k) => { const x = pad + (c + 0.5) * cs, y = pad + (r + 0.5) * cs; if (k) g.lineTo(x, y); else g.moveTo(x, y); });
      g.stroke();
    }
    if (here.pos) {
      const [r, c] = here.pos;
      g.fillStyle = "#d62828"; g.beginPath(); g.arc(pad + (c + 0.5) * cs, pad + (r + 0.5) * cs, cs * 0.27, 0, 7); g.fill();
      g.strokeStyle = "#000"; g.lineWidth = 1.5; g.stroke();
    }
    if (steps[t].dead) {  // unwinnable from here: say so on the board itself
      g.fillStyle = "#b00020"; g.font = "bold 13px sans-serif";
      g.fillText("lost: no win possible", canvas.width / 2, pad / 2 + 4);
    }
    if (steps[t].lab < 0) {
      g.fillStyle = "rgba(250,246,234,0.7)"; g.fillRect(0, 0, canvas.width, canvas.height);
      g.fillStyle = "#223"; g.font = "bold 15px sans-serif"; g.fillText("waiting for start", canvas.width / 2, canvas.height / 2);
    }
  }

  // where the player entered a state from which no action sequence wins (per labyrinth)
  const lostTurn = new Map((D.lost || []).map((x) => [x.turn, x]));
  function winnable(t) {
    const s = steps[t];
    if (s.dead === null || s.dead === undefined) return undefined;
    if (!s.dead) return "yes";
    const first = (D.lost || []).find((x) => x.lab === s.lab);
    return el("span", {class: "lost"}, pill("no", "bad"),
      first ? " lost at step " + first.step + ": no action sequence wins from here" : "");
  }

  function inventoryNode(inv) {
    const items = Object.entries(inv || {}).filter(([, v]) => v !== false);
    if (!items.length) return el("span", {class: "muted"}, "nothing");
    return el("span", {}, items.map(([k, v]) => pill(k === "grenades" ? v + " grenades" : k.replace("_", " "), "good")));
  }

  function panel(t) {
    const s = steps[t];
    const box = $("panel");
    box.replaceChildren();
    const [L] = labAt(t);
    const lab = L >= 0 ? labs[L] : null;
    box.append(el("h2", {}, lab ? lab.name : "labyrinth set"));
    if (lab) {
      box.append(facts([
        ["board", lab.rows + "x" + lab.cols + " · " + (lab.open_map ? "open map (tutorial)" : "hidden map")],
        ["labyrinth", D.is_set ? (L + 1) + " of " + labs.length : undefined],
      ].filter(([, v]) => v !== undefined)));
      if (!lab.open_map) {
        const box2 = el("label", {}, el("input", {type: "checkbox", id: "reveal", onchange: (ev) => { reveal = ev.target.checked; draw(t); }}),
          " reveal the cells the player has not seen (spectator)");
        box2.querySelector("input").checked = reveal;
        box.append(box2);
      }
    }
    const budget = s.budget || 0;
    const bar = el("span", {class: "bar", title: s.steps + " of " + budget},
      el("span", {style: "width:" + (budget ? Math.min(100, 100 * s.steps / budget) : 0) + "%"}));
    box.append(el("h3", {}, "step " + t));
    box.append(facts([
      ["position", s.pos ? "row " + s.pos[0] + ", column " + s.pos[1] : s.waiting ? "waiting for start" : null],
      ["steps used", el("span", {}, s.steps + " of " + budget + " (reference max_steps " + s.max_steps + ") ", bar)],
      ["action", s.action === null ? "— (start)" : s.action],
      ["reward", s.reward],
      ["inventory", inventoryNode(s.inventory)],
      ["solved", s.solved === null || s.solved === undefined ? undefined : s.solved ? "yes" : "no"],
      ["can still win", winnable(t)],
    ]));
    box.append(el("h3", {}, "narration"));
    box.append(pre(s.text || ""));
    if (s.message) { box.append(el("h3", {}, "message of the set")); box.append(pre(s.message)); }
    if (s.error) { box.append(el("h3", {}, "error (the action was not played)")); box.append(valueNode(s.error, 0)); }
    const f = s.formal || {};
    box.append(el("h3", {}, "formal observation"));
    box.append(facts([
      ["status", f.status], ["observe", f.observe],
      ["events", (f.events || []).length ? el("span", {}, f.events.map((e) => pill(e))) : "none"],
      ["details", f.details && Object.keys(f.details).length ? valueNode(f.details, 0) : "none"],
    ]));
    box.append(el("h3", {}, "next action (step " + (t + 1) + ")"));
    if (t + 1 >= count) box.append(el("div", {class: "muted"}, "none: the game ended at step " + t));
    else {
      box.append(el("div", {}, steps[t + 1].action));
      const record = D.decisions ? D.decisions[t + 1] : null;
      if (record !== null && record !== undefined) {
        if (!history) history = messageHistory(D.decisions);
        box.append(el("h3", {}, "decision record (prompt, raw reply, ...)"));
        box.append(decisionNode(record, D.blobs || {}, history[t + 1]));
      }
    }
  }

  $("logtitle").textContent = "Narration (click a step to go to it)";
  const log = $("log");
  const rows = steps.map((s, t) => {
    const lost = lostTurn.get(t);
    const row = el("div", {onclick: () => window.VIEW.show(t)}, el("b", {}, "step " + t),
      s.action ? " " + s.action + ": " : ": ", s.text || "", s.message ? el("span", {class: "muted"}, " — " + s.message) : "",
      lost ? el("span", {class: "lost"}, " ⚠ lost here (step " + lost.step + "): no win possible after this move") : "");
    log.append(row);
    return row;
  });
  $("legend").append(
    el("span", {}, "K key, T chest, E exit key, B boat, F flashlight, G grenades, arrows river, m mouth, digits pits"),
    el("span", {}, el("b", {style: "color:#ff7f50"}, "▮"), " exit gap"),
    el("span", {}, el("b", {style: "color:#d62828"}, "●"), " player"));

  function show(t) {
    draw(t);
    panel(t);
    rows.forEach((row, k) => { row.className = k > t ? "future" : k === t ? "now" : ""; });
    scrollLog(rows[t]);
  }
  function label(t) {
    const s = steps[t];
    return "step " + t + " of " + (count - 1) + (s.budget ? " · " + s.steps + "/" + s.budget + " used" : "");
  }
  return {count, agents: [], show, label};
}
