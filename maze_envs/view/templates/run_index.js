// maze-envs bench: draws a run's front page (index.html) from its JSON data block.
"use strict";
(function () {
  const run = JSON.parse(document.getElementById("run").textContent);
  const LABELS = { failure: "first failure", success: "first success", error: "first error",
                   outage: "first outage", stopped: "first stopped" };
  const ORDER = ["failure", "error", "outage", "stopped", "success"];

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined) node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function gameLink(game, text) {
    const missing = !game.written;
    const title = missing
      ? "no page yet; make it with: " + game.command
      : "viewer page of game " + game.id;
    return el("a", { href: game.page, class: missing ? "missing" : null, title: title }, text);
  }

  function gamesCell(group) {
    const cell = el("td", { class: "games" });
    if (group === null || group === undefined) return cell;
    const members = run.groups[group].games.map((n) => run.games[n]);
    const firsts = {};  // the first game of each outcome, a written page before any other
    for (const written of [true, false]) {
      for (const game of members) {
        if (game.page && game.written === written && !(game.outcome in firsts)) firsts[game.outcome] = game;
      }
    }
    for (const kind of ORDER) {
      if (firsts[kind]) cell.append(gameLink(firsts[kind], LABELS[kind]));
    }
    cell.append(el("a", { href: "#games-" + group }, "all " + members.length));
    return cell;
  }

  function drawTable(part) {
    const head = el("tr", {}, el("th", {}, "games"), ...part.header.map((name) => el("th", {}, name)));
    const body = part.lines.map((line, n) =>
      el("tr", {}, gamesCell(part.groups[n]), ...line.map((cell) => el("td", {}, cell))));
    return el("div", { class: "scroll" }, el("table", {}, el("thead", {}, head), el("tbody", {}, ...body)));
  }

  function drawParts() {
    const box = document.getElementById("parts");
    const toc = document.getElementById("toc");
    let heading = 0;
    for (const part of run.parts) {
      if (part.header) {
        box.append(drawTable(part));
      } else if (part.level === 1) {
        continue; // the page's own title
      } else if (part.level) {
        const id = "part-" + heading++;
        box.append(el("h" + part.level, { id: id }, part.text));
        if (part.level === 2) toc.append(el("a", { href: "#" + id }, part.text));
      } else {
        box.append(el("p", {}, part.text));
      }
    }
    toc.append(el("a", { href: "#games" }, "Games"));
  }

  function drawGames(details, group) {
    const rows = run.groups[group].games.map((n) => {
      const game = run.games[n];
      const page = game.page ? gameLink(game, game.written ? "page" : "make page") : "no journal";
      return el("tr", { id: game.id === null ? null : "game-" + game.id },
        el("td", {}, game.id === null ? "–" : game.id), el("td", {}, game.seed),
        el("td", {}, game.case), el("td", { class: game.outcome }, game.text), el("td", {}, page));
    });
    const head = el("tr", {}, ...["game", "seed", "case", "outcome", "viewer"].map((h) => el("th", {}, h)));
    details.append(el("div", { class: "scroll" },
      el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows))));
  }

  function drawGameLists() {
    const box = document.getElementById("gamelists");
    run.groups.forEach((entry, group) => {
      const members = entry.games;
      const label = entry.label;
      const details = el("details", { id: "games-" + group },
        el("summary", {}, label + " (" + members.length + " game" + (members.length === 1 ? "" : "s") + ")"));
      details.addEventListener("toggle", () => {
        if (details.open && details.children.length === 1) drawGames(details, group);
      });
      box.append(details);
    });
    const pages = run.pages;
    const note = document.getElementById("pagesnote");
    if (!pages.journal) {
      note.textContent = "This run kept no journal, so its games have no viewer pages.";
      return;
    }
    note.append("Viewer pages written: " + pages.written +
      (pages.bytes === null ? "" : " (" + (pages.bytes / 1048576).toFixed(1) + " MB of a " +
        (pages.budget / 1048576).toFixed(0) + " MB budget)") +
      (pages.over_budget ? "; " + pages.over_budget + " sample page(s) left out by the budget" : "") +
      ". A game without a page links to the page this command writes (hover a link for it); " +
      "every page at once: ", el("code", {}, pages.all));
  }

  function openTarget() {
    const target = document.getElementById(location.hash.slice(1));
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView();
    }
  }

  function drawHeader() {
    if (run.description) document.getElementById("description").textContent = run.description;
    const facts = document.getElementById("facts");
    for (const fact of run.facts || []) facts.append(el("li", {}, fact));
    const files = document.getElementById("filelist");
    for (const file of run.files || []) {
      files.append(el("li", {}, el("a", { href: file.href }, file.href), " ", file.what));
    }
    if (run.verify) {
      document.getElementById("verify").append("Check every game by replaying it: ", el("code", {}, run.verify));
    }
    if ((run.notes || []).length) {
      document.getElementById("notes").hidden = false;
      const list = document.getElementById("notelist");
      for (const note of run.notes) list.append(el("li", {}, note));
    }
    if ((run.plots || []).length) {
      document.getElementById("plots").hidden = false;
      const list = document.getElementById("plotlist");
      for (const plot of run.plots) {
        list.append(el("a", { href: plot.href }, el("img", { src: plot.href, alt: plot.href })));
      }
    }
  }

  drawHeader();
  drawParts();
  drawGameLists();
  window.addEventListener("hashchange", openTarget);
  openTarget();
  document.body.dataset.ready = "1";
})();
