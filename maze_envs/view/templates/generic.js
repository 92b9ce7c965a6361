// maze-envs viewer: a game of any other environment (recorded by wrappers.recording), shown as
// recorded: per turn and agent the observation, the action, the reward, flags, info and events,
// and the decision record; the board plots every agent's return so far.
const PALETTE = ["#d62828", "#1d6fb8", "#2a9d3f", "#8c3cbe", "#e08a00", "#149696", "#7a5230", "#555"];

// A JSON value as readable text: lists of plain values on one line, objects one key a line.
function pretty(value, indent) {
  const pad = "  ".repeat(indent || 0);
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = "  ".repeat((indent || 0) + 1);
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) return "[" + value.map((v) => JSON.stringify(v)).join(", ") + "]";
    return "[\n" + value.map((v) => inner + pretty(v, (indent || 0) + 1)).join(",\n") + "\n" + pad + "]";
  }
  const keys = Object.keys(value);
  if (!keys.length) return "{}";
  return "{\n" + keys.map((k) => inner + JSON.stringify(k) + ": " + pretty(value[k], (indent || 0) + 1)).join(",\n") + "\n" + pad + "}";
}

function viewer(D) {
  const count = D.n;
  const agents = D.agents;
  const colour = {};
  agents.forEach((a, i) => { colour[a] = PALETTE[i % PALETTE.length]; });
  // the header: never shown as verified (the game cannot be replayed)
  const verdict = document.querySelector("#meta span.bad");
  if (verdict && D.rows_intact) verdict.className = "pill warn";

  // every agent's return after each turn
  const returns = {};
  for (const a of agents) {
    let sum = 0;
    returns[a] = D.rewards[a].map((r) => { if (typeof r === "number") sum += r; return sum; });
  }
  const all = agents.flatMap((a) => returns[a]);
  const low = Math.min(0, ...all), high = Math.max(0, ...all);
  const canvas = $("maze");
  canvas.width = 560; canvas.height = 240;
  canvas.setAttribute("aria-label", "return so far per agent");
  const g = canvas.getContext("2d");
  const pad = 30;
  const xOf = (t) => pad + (canvas.width - 2 * pad) * (count > 1 ? t / (count - 1) : 0);
  const yOf = (v) => canvas.height - pad - (canvas.height - 2 * pad) * (high > low ? (v - low) / (high - low) : 0);

  function draw(t, selected) {
    g.fillStyle = "#faf6ea"; g.fillRect(0, 0, canvas.width, canvas.height);
    g.strokeStyle = "#ccc"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(pad, yOf(0)); g.lineTo(canvas.width - pad, yOf(0)); g.stroke();
    g.fillStyle = "#667"; g.font = "11px sans-serif"; g.textAlign = "left"; g.textBaseline = "middle";
    g.fillText(String(+high.toPrecision(4)), 2, yOf(high)); g.fillText(String(+low.toPrecision(4)), 2, yOf(low));
    g.fillText("return so far, turns 0-" + (count - 1), pad, 12);
    for (const a of agents) {
      g.strokeStyle = colour[a]; g.lineWidth = a === selected ? 2.5 : 1.2; g.globalAlpha = a === selected ? 1 : 0.5;
      g.beginPath();
      const step = Math.max(1, Math.floor(count / 1000));
      for (let k = 0; k < count; k += step) { if (k) g.lineTo(xOf(k), yOf(returns[a][k])); else g.moveTo(xOf(k), yOf(returns[a][k])); }
      g.lineTo(xOf(count - 1), yOf(returns[a][count - 1]));
      g.stroke();
    }
    g.globalAlpha = 1;
    g.strokeStyle = "#223"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(xOf(t), pad); g.lineTo(xOf(t), canvas.height - pad); g.stroke();
  }

  function flag(v) { return v === null || v === undefined ? null : v ? "yes" : "no"; }

  function panel(t, a) {
    const box = $("panel");
    box.replaceChildren();
    if (!a) { box.append(el("div", {class: "muted"}, "no agent recorded")); return; }
    box.append(el("h2", {style: "color:" + colour[a]}, "Agent " + a));
    box.append(el("h3", {}, "turn " + D.turns[t] + (t === 0 ? " (reset)" : "")));
    const action = D.actions[a][t];
    box.append(facts([
      ["action", t === 0 ? "— (reset: no action)" : action === null ? "— (no action recorded)" : el("code", {}, pretty(action))],
      ["reward", t === 0 ? undefined : D.rewards[a][t]],
      ["return so far", returns[a][t]],
      ["terminated", t === 0 ? undefined : flag(D.terminated[a][t])],
      ["truncated", t === 0 ? undefined : flag(D.truncated[a][t])],
    ]));
    const ev = D.events[a][t];
    if (ev) { box.append(el("h3", {}, "events")); box.append(pre(pretty(ev))); }
    const info = D.info[a][t];
    box.append(el("h3", {}, "info"));
    box.append(info ? pre(pretty(info)) : el("div", {class: "muted"}, "{}"));
    const obs = D.obs[a][t];
    box.append(el("h3", {}, "observation"));
    box.append(obs === null ? el("div", {class: "muted"}, "none recorded this turn") : pre(pretty(obs), "tall obs"));
    const record = D.decisions ? D.decisions[a][t] : null;
    if (record !== null && record !== undefined) {
      box.append(el("h3", {}, "decision record (chose this turn's action)"));
      box.append(decisionNode(record, D.blobs || {}, null));
    }
  }

  const tabs = $("tabs");
  const tabButtons = {};
  agents.forEach((a, i) => {
    const button = el("button", {role: "tab", style: "border-color:" + colour[a] + ";color:" + colour[a],
                                 title: "key " + (i + 1), onclick: () => window.VIEW.show(window.VIEW.turn, a)}, a);
    tabButtons[a] = button; tabs.append(button);
  });
  $("legend").append(...agents.map((a) => el("span", {}, el("b", {style: "color:" + colour[a]}, "━"), " " + a)),
    el("span", {}, "recorded, not replayable: values as the journal holds them"));

  $("logtitle").textContent = "Turns (action and reward per agent; click one to go to it)";
  const log = $("log");
  const short = (v) => { const s = JSON.stringify(v); return s.length > 40 ? s.slice(0, 40) + "…" : s; };
  const rows = D.turns.map((turn, t) => {
    const parts = t === 0 ? [" reset"] : agents.filter((a) => D.actions[a][t] !== null || D.rewards[a][t] !== null)
      .map((a) => el("span", {}, " ", el("b", {style: "color:" + colour[a]}, a), " " + short(D.actions[a][t]) + " → " + D.rewards[a][t]
        + (D.terminated[a][t] ? " terminated" : "") + (D.truncated[a][t] ? " truncated" : "")));
    const row = el("div", {onclick: () => window.VIEW.show(t)}, el("b", {}, "turn " + turn), ...parts);
    log.append(row);
    return row;
  });

  function show(t, a) {
    draw(t, a);
    panel(t, a);
    for (const x of agents) tabButtons[x].setAttribute("aria-selected", x === a ? "true" : "false");
    rows.forEach((row, k) => { row.className = k > t ? "future" : k === t ? "now" : ""; });
    scrollLog(rows[t]);
  }
  function label(t) {
    return "turn " + D.turns[t] + " of " + D.turns[count - 1] + " · " + D.env_id;
  }
  return {count, agents, show, label};
}
