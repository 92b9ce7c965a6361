"use strict";
// maze-envs viewer: shared part (data loading, turn controls, URL fragment, small DOM helpers).
// The environment's script (escape.js or agimaze.js) follows and defines `viewer(D)`, which
// returns {count, agents, show(turn, agent), select(agent)}.

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style") node.style.cssText = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function facts(rows) {
  const dl = el("dl", {class: "facts"});
  for (const [label, value] of rows) {
    if (value === undefined) continue;
    dl.append(el("dt", {}, label), el("dd", {}, value === null ? "—" : value));
  }
  return dl;
}

function pre(text, cls) { return el("pre", {class: cls}, text === "" ? "(empty)" : text); }

function details(summary, content, open) {
  return el("details", {open: !!open}, el("summary", {}, summary), content);
}

// Scroll the log box (not the page) so that `row` is in view.
function scrollLog(row) {
  const log = $("log");
  if (!row) return;
  const top = row.offsetTop - log.offsetTop;
  if (top < log.scrollTop || top > log.scrollTop + log.clientHeight - row.offsetHeight) {
    log.scrollTop = Math.max(0, top - log.clientHeight / 2);
  }
}

function pill(text, cls) { return el("span", {class: "pill " + (cls || "")}, text); }

// Texts stored as changes ([start, end, text] against the previous value, null = unchanged;
// a fourth number first drops that many units from the front: a rolling log's oldest lines).
function undelta(deltas) {
  const out = [];
  let previous = "";
  for (const d of deltas) {
    if (d !== null && d.length > 3) previous = previous.slice(d[3]);
    if (d !== null) previous = previous.slice(0, d[0]) + d[2] + previous.slice(d[1]);
    out.push(previous);
  }
  return out;
}

// The change from `before` to `after` as DOM: removed text struck through, new text marked.
function changed(before, after) {
  let start = 0;
  const limit = Math.min(before.length, after.length);
  while (start < limit && before[start] === after[start]) start++;
  let end = 0;
  while (end < limit - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  const node = el("pre", {class: "tall"});
  if (before === after) { node.append(after === "" ? "(empty)" : after); return node; }
  node.append(after.slice(0, start));
  const gone = before.slice(start, before.length - end);
  const added = after.slice(start, after.length - end);
  if (gone) node.append(el("del", {title: "removed this turn"}, gone));
  if (added) node.append(el("mark", {title: "new this turn"}, added));
  node.append(after.slice(after.length - end));
  return node;
}

// Any JSON value of a decision record, readable: texts as blocks, objects as labelled parts,
// {"$blob": key} references replaced by the stored text.
function resolved(value, blobs) {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === "$blob") {
      const text = blobs[value.$blob];
      return text === undefined ? "[missing blob " + value.$blob + "]" : text;
    }
    const out = {};
    for (const k of keys) out[k] = resolved(value[k], blobs);
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => resolved(v, blobs));
  return value;
}

function valueNode(value, depth) {
  if (typeof value === "string") return value.length > 60 || value.includes("\n")
    ? pre(value) : el("code", {}, value === "" ? '""' : value);
  if (value === null || typeof value !== "object") return el("code", {}, JSON.stringify(value));
  const flat = Object.values(value).every((v) => v === null || typeof v !== "object");
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    return el("div", {}, value.map((v) => valueNode(v, depth + 1)));
  }
  if (flat && !Object.values(value).some((v) => typeof v === "string" && v.length > 60)) {
    return el("code", {}, JSON.stringify(value));
  }
  const box = el("div", {style: "margin-left:" + (depth ? 10 : 0) + "px"});
  for (const [k, v] of Object.entries(value)) {
    box.append(el("div", {class: "muted"}, k), valueNode(v, depth + 1));
  }
  return box;
}

// Language-model records store their messages as {"prev": k, "new": [...]}: the first k equal
// the previous decision's (llm_policies.harness). Rebuild each decision's full message list.
function messageHistory(records) {
  const out = [];
  let previous = null;
  for (const r of records || []) {
    const m = r && r.messages;
    if (m && typeof m === "object" && !Array.isArray(m) && Array.isArray(m.new)) {
      const k = m.prev || 0;
      const list = (k && previous ? previous.slice(0, k) : []).concat(m.new);
      out.push(list);
      previous = list;
    } else out.push(null);
  }
  return out;
}

// A decision record (prompt, raw reply, parsed action, usage...): the whole prompt and the raw
// reply first, then every field, each folded so long prompts do not swamp the panel.
function decisionNode(record, blobs, messages) {
  const value = resolved(record, blobs);
  if (!value || typeof value !== "object" || Array.isArray(value)) return valueNode(value, 0);
  const box = el("div", {class: "decision"});
  if (messages) {
    const prompt = el("div", {});
    if (typeof value.system === "string") prompt.append(el("div", {class: "muted"}, "system"), pre(value.system));
    for (const m of messages) prompt.append(el("div", {class: "muted"}, m.role), pre(String(m.content)));
    box.append(details("prompt (" + (typeof value.system === "string" ? "system + " : "")
      + messages.length + " message" + (messages.length === 1 ? "" : "s") + ")", prompt, false));
  }
  const attempts = Array.isArray(value.attempts) ? value.attempts : [];
  if (attempts.length && attempts[attempts.length - 1].raw !== undefined) {
    const raw = attempts[attempts.length - 1].raw;
    const text = raw && typeof raw === "object" ? (raw.tool_arguments ?? raw.text) : raw;
    box.append(details("raw reply" + (attempts.length > 1 ? " (last of " + attempts.length + " attempts)" : ""),
      pre(text === null || text === undefined ? "(none)" : String(text)), true));
  }
  const rank = (k) => /prompt|system|messages/i.test(k) ? 0 : /reply|raw|response|text/i.test(k) ? 1 : 2;
  const keys = Object.keys(value).sort((a, b) => rank(a) - rank(b));
  box.append(...keys.map((k) => details(k, valueNode(value[k], 0), !messages && rank(k) === 1)));
  return box;
}

async function loadData(id) {
  const block = $(id);
  if (block.type === "application/json") return JSON.parse(block.textContent);
  if (typeof DecompressionStream === "undefined") {
    throw new Error("this browser cannot inflate the page's data (no DecompressionStream)");
  }
  const bytes = Uint8Array.from(atob(block.textContent.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function readHash() {
  const out = {};
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    const [k, v] = part.split("=");
    if (k) out[decodeURIComponent(k)] = decodeURIComponent(v || "");
  }
  return out;
}

// The shared controls: slider, buttons, keyboard, play/pause, URL fragment #turn=N&agent=X.
function startControls(view) {
  const slider = $("turn");
  const last = Math.max(view.count - 1, 0);
  slider.max = last;
  let turn = 0;
  let agent = view.agents.length ? view.agents[0] : null;
  let timer = null;

  function show(t, who) {
    turn = Math.max(0, Math.min(last, Number.isFinite(t) ? t : 0));
    if (who !== undefined && view.agents.includes(who)) agent = who;
    slider.value = turn;
    $("turnlabel").textContent = view.label(turn);
    const hash = "#turn=" + turn + (agent ? "&agent=" + encodeURIComponent(agent) : "");
    $("permalink").href = hash;
    if (location.hash !== hash) history.replaceState(null, "", hash);
    view.show(turn, agent);
    document.body.dataset.turn = turn;
    document.body.dataset.agent = agent || "";
  }
  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    $("play").textContent = "play";
  }
  function play() {
    if (timer) { stop(); return; }
    if (turn >= last) show(0);
    $("play").textContent = "pause";
    timer = setInterval(() => { if (turn >= last) stop(); else show(turn + 1); }, +$("speed").value);
  }
  slider.addEventListener("input", () => show(+slider.value));
  $("first").onclick = () => show(0);
  $("prev").onclick = () => show(turn - 1);
  $("next").onclick = () => show(turn + 1);
  $("last").onclick = () => show(last);
  $("play").onclick = play;
  $("speed").onchange = () => { if (timer) { stop(); play(); } };
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement && ev.target.type !== "range") return;
    if (ev.target instanceof HTMLSelectElement) return;
    const keys = {ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10};
    if (ev.key in keys) { show(turn + keys[ev.key]); ev.preventDefault(); }
    else if (ev.key === "Home") { show(0); ev.preventDefault(); }
    else if (ev.key === "End") { show(last); ev.preventDefault(); }
    else if (ev.key === " ") { play(); ev.preventDefault(); }
    else if (/^[1-9]$/.test(ev.key) && view.agents[+ev.key - 1]) show(turn, view.agents[+ev.key - 1]);
  });
  window.addEventListener("hashchange", () => {
    const h = readHash();
    show(h.turn === undefined ? turn : parseInt(h.turn, 10), h.agent);
  });
  const h = readHash();
  show(h.turn === undefined ? 0 : parseInt(h.turn, 10), h.agent);
  return {show: (t, who) => show(t, who), get turn() { return turn; }, get agent() { return agent; }};
}

function header(D) {
  const meta = $("meta");
  const verdict = el("span", {class: D.verified ? "ok" : "bad"}, D.verification);
  meta.append(D.summary.join(" · "), " · ", verdict);
  if (D.problem) meta.append(" · ", el("span", {class: "bad"}, "drawn up to " + D.problem));
  // per-decision metrics, computed by maze_envs.metrics (the benchmark's and analysis's numbers)
  if (D.metrics_text && D.metrics_text.length) {
    meta.append(el("div", {class: "metrics"}, D.metrics_text.join(" · ")));
  }
  if (D.meta && Object.keys(D.meta).length) {
    meta.append(details("game settings (runner meta)", valueNode(D.meta, 0)));
  }
}

loadData("game").then((D) => {
  performance.mark("maze-envs-data");
  window.GAME = D;
  header(D);
  const view = viewer(D);
  if (view.count === 0) { $("turnlabel").textContent = "no readable turns"; return; }
  window.VIEW = startControls(view);
  performance.mark("maze-envs-ready");
  requestAnimationFrame(() => requestAnimationFrame(() => performance.mark("maze-envs-painted")));
  document.body.dataset.ready = "1";
  // The decision records (prompts, replies) come after the first paint: often most of the data.
  return loadData("late").then((late) => {
    if (late) {
      Object.assign(D, late);
      window.VIEW.show(window.VIEW.turn, window.VIEW.agent);
    }
    document.body.dataset.decisions = "1";
  });
}).catch((err) => {
  document.body.prepend(el("p", {class: "bad", id: "error"}, "cannot draw the game: " + err.message));
  document.body.dataset.ready = "error";
});
