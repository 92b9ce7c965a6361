"""A run's front page, ``index.html``, and the viewer pages it links to (``pages/``).

``index.html`` (self-contained: the viewer's template files, ``maze_envs/view/templates``, and
the run's data as a JSON block) shows the run at a glance: what was run, the files written and
how to check them, the plots, every table of ``summary.md`` (:func:`maze_envs.bench.report.
sections`, so both show the same tables), and, on every table line, links to that line's games:
a viewer page of its first game of each outcome (its first failure, its first success, and its
first error, outage or stopped game when it has one) and the list of all its games, each with
its seed, case, outcome and a link to its viewer page.

**Which pages are written.** A viewer page costs from about 15 ms and 40 KB (a short AGI Maze
episode) to a second and 300 KB (a 600-turn Maze Escape game with full notebooks), so a page for
every game of the main job would be about 60 MB and two minutes. The run writes the **sample
pages**: for each line of the finest tables (a Maze Escape size, an AGI Maze stage, a labyrinth
set's arm) the first game of each outcome, failures, errors, outages and stopped games before
successes, within :data:`PAGE_BUDGET_BYTES` in all (the pages that would pass the budget are
left out, and the front page says how many). Every other game's link points at the page that
``maze-envs view RUN/games.sqlite --game ID --out RUN/pages`` writes (the name the viewer
gives it, ``games-gameID.html``), so one command makes any page on demand, and
``maze-envs view RUN/games.sqlite --out RUN/pages`` makes them all; the list marks which pages
exist. A run without a journal has no pages; its games are listed without links.
"""

from __future__ import annotations

import shlex
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from maze_envs.bench.folder import JOURNAL_NAME, PAGES_NAME
from maze_envs.bench.report import games_of, sections
from maze_envs.metrics import is_played

Row = dict[str, Any]

INDEX_NAME: Final = "index.html"
#: The sample pages of a run are written within this many bytes in all (the main job's take
#: about 9 MB: ``benchmarks/README.md``, "Front page").
PAGE_BUDGET_BYTES: Final = 32 * 1024 * 1024
#: Outcomes of a game, in the order their sample pages are chosen (the budget spares the rare
#: outcomes: a failure is worth more to look at than one more success).
OUTCOMES: Final = ("failure", "error", "outage", "stopped", "success")
#: What a run's files are, as the front page lists them.
FILES: Final = (
    ("summary.md", "the tables (Markdown)"),
    ("results.csv", "every game, one line each"),
    ("results.json", "every game and every aggregate, with intervals"),
    ("experiment.json", "the experiment as run"),
    (JOURNAL_NAME, "every game, turn by turn (SQLite journal)"),
)


def page_name(game_id: int) -> str:
    """The file name of a game's viewer page: the one ``maze-envs view`` gives it."""
    return f"{Path(JOURNAL_NAME).stem}-game{game_id}.html"


def outcome(row: Row) -> str:
    """The outcome class of a game (one of :data:`OUTCOMES`)."""
    status = row.get("status", "ok")
    if not is_played(status) or status == "error":
        return str(status)
    won = row.get("success") if row.get("env") == "escape" else row.get("solved")
    return "success" if won else "failure"


def describe(row: Row) -> str:
    """A game's outcome in words: ``escaped in 78 turns``, ``not solved (350 steps)``, ..."""
    kind = outcome(row)
    if kind == "error":
        return f"error: {row.get('error') or 'the policy failed'}"
    if kind == "outage":
        return f"outage: {row.get('outages') or 0} decision(s) could not reach the model"
    if kind == "stopped":
        return f"stopped: {row.get('stop_reason') or 'a cap'}"
    if row.get("env") == "escape":
        turns = row.get("finish_turn") if kind == "success" else row.get("turns")
        return f"escaped in {turns} turns" if kind == "success" else f"failed ({turns} turns)"
    steps = row.get("steps", row.get("set_steps"))
    return f"solved in {steps} steps" if kind == "success" else f"not solved ({steps} steps)"


@dataclass
class Pages:
    """The viewer pages a run wrote."""

    #: game id -> page path, for every page written
    written: dict[int, Path] = field(default_factory=dict)
    bytes: int = 0
    #: sample pages left out by the budget
    over_budget: int = 0
    notes: list[str] = field(default_factory=list)


def finest_keys(experiment: dict[str, Any], summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The game keys of the lines of each environment's finest table (Maze Escape by size,
    AGI Maze by stage, labyrinth sets by arm), in table order, each once."""
    keys: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}
    for part in sections(experiment, summary):
        for key in part.games:
            if key["env"] != "agimaze" or "stage" in key:
                keys.setdefault(tuple(sorted(key.items())), key)
    return list(keys.values())


def sample_rows(rows: Sequence[Row], keys: Sequence[dict[str, Any]]) -> list[Row]:
    """The games whose pages a run writes: per key, the first game of each outcome; all the
    rarer outcomes (:data:`OUTCOMES` order) before any success."""
    firsts: dict[str, list[Row]] = {kind: [] for kind in OUTCOMES}
    for key in keys:
        seen: set[str] = set()
        for row in games_of(rows, key):
            kind = outcome(row)
            if row.get("game_id") is not None and kind not in seen:
                seen.add(kind)
                firsts[kind].append(row)
    return [row for kind in OUTCOMES for row in firsts[kind]]


def _render(
    journal_path: str, game_ids: Sequence[int], reports: Mapping[int, Any]
) -> list[tuple[int, bytes | str]]:
    """(game id, its page, or why it has none) of each game (in a worker, or in process);
    ``reports``: verifications already made of some of the games (not replayed again)."""
    from maze_envs.journal import Journal, JournalError
    from maze_envs.view import game_html

    out: list[tuple[int, bytes | str]] = []
    with Journal(journal_path, readonly=True) as journal:
        for game_id in game_ids:
            try:
                page = game_html(journal, game_id, report=reports.get(game_id))
                out.append((game_id, page.encode("utf-8")))
            except (JournalError, ValueError) as exc:
                out.append((game_id, str(exc)))
    return out


def write_pages(
    out: Path,
    chosen: Sequence[Row],
    budget: int = PAGE_BUDGET_BYTES,
    workers: int = 1,
    reports: Mapping[int, Any] | None = None,
) -> Pages:
    """A viewer page (:mod:`maze_envs.view`) of each ``chosen`` game, in ``out/pages/``, in
    order while the pages fit ``budget`` bytes in all; drawn in ``workers`` processes when
    there are several (a few pages ahead of the one written, so that little is drawn past the
    budget). ``reports``: the
    run's verification of the journal by game id (:class:`~maze_envs.journal.VerifyReport`);
    a page of a game in it shows that verdict instead of replaying the game again."""
    pages = Pages()
    folder = out / PAGES_NAME
    folder.mkdir(exist_ok=True)
    ids = [int(row["game_id"]) for row in chosen]
    journal = str(out / JOURNAL_NAME)
    known = reports or {}
    pool = None
    if workers > 1 and len(ids) > workers:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from maze_envs.bench.stopping import worker_signals

        context = multiprocessing.get_context("forkserver")
        pool = ProcessPoolExecutor(workers, mp_context=context, initializer=worker_signals)
    completed = False
    try:
        for offset, (game_id, page) in enumerate(_drawn(pool, journal, ids, known, workers)):
            if isinstance(page, str):
                pages.notes.append(f"no viewer page of game {game_id}: {page}")
                continue
            if pages.bytes + len(page) > budget:
                pages.over_budget = len(ids) - offset
                pages.notes.append(
                    f"{pages.over_budget} sample viewer page(s) left out: they would pass "
                    f"the pages' budget of {budget / 2**20:.0f} MB (index.html shows how "
                    "to make any page)"
                )
                completed = True
                return pages
            path = folder / page_name(game_id)
            path.write_bytes(page)
            pages.written[game_id] = path
            pages.bytes += len(page)
        completed = True
        return pages
    finally:
        if pool is not None:
            from maze_envs.bench.executors import end_pool

            end_pool(pool, abandon=not completed)  # a stop ends the drawing workers at once


def _drawn(
    pool: Any, journal: str, ids: Sequence[int], known: Mapping[int, Any], workers: int
) -> Iterator[tuple[int, bytes | str]]:
    """(game id, its page or why it has none) of each game, in order: drawn here (no ``pool``),
    or each game a task of the pool, at most ``4 x workers`` ahead of the page handed on (a
    worker that ends a page takes the next game at once; little is drawn past the budget)."""
    if pool is None:
        for game_id in ids:
            yield from _render(
                journal, [game_id], {game_id: known[game_id]} if game_id in known else {}
            )
        return
    ahead: deque[Any] = deque()
    pending = deque(ids)
    try:
        while pending or ahead:
            while pending and len(ahead) < 4 * workers:
                game_id = pending.popleft()
                given = {game_id: known[game_id]} if game_id in known else {}
                ahead.append(pool.submit(_render, journal, [game_id], given))
            yield from ahead.popleft().result()
    finally:
        for future in ahead:
            future.cancel()


def _command(out: Path, game_id: int | None = None) -> str:
    args = ["maze-envs", "view", str(out / JOURNAL_NAME)]
    if game_id is not None:
        args += ["--game", str(game_id)]
    return shlex.join([*args, "--out", str(out / PAGES_NAME)])


def index_data(
    out: Path,
    experiment: dict[str, Any],
    rows: Sequence[Row],
    summary: dict[str, Any],
    *,
    plots: Sequence[Path] = (),
    pages: Pages | None = None,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """What ``index.html`` shows, as data (the page's script draws it)."""
    journal = (out / JOURNAL_NAME).is_file()
    position = {row["run_key"]: n for n, row in enumerate(rows)}
    written = pages.written if pages is not None else {}
    existing = (
        {p.name for p in (out / PAGES_NAME).iterdir()} if (out / PAGES_NAME).is_dir() else set()
    )
    games = []
    for row in rows:
        game_id = row.get("game_id") if journal else None
        page = None if game_id is None else page_name(int(game_id))
        games.append(
            {
                "id": game_id,
                "seed": row.get("seed"),
                "case": row.get("case"),
                "outcome": outcome(row),
                "text": describe(row),
                "page": None if page is None else f"{PAGES_NAME}/{page}",
                "written": page is not None and (game_id in written or page in existing),
                "command": None if game_id is None else _command(out, int(game_id)),
            }
        )
    parts: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for part in sections(experiment, summary):
        table = part.table
        if table is None:
            parts.append({"level": part.level, "text": str(part.text)})
            continue
        line_groups = []
        for key in part.games:
            members = [position[row["run_key"]] for row in games_of(rows, key)]
            label = " / ".join(str(value) for name, value in key.items() if name != "env")
            groups.append({"label": label, "games": members})
            line_groups.append(len(groups) - 1)
        parts.append(
            {
                "header": list(table.header),
                "lines": [list(line) for line in table.lines],
                "groups": line_groups or [None] * len(table.lines),
            }
        )
    files = [{"href": name, "what": what} for name, what in FILES if (out / name).is_file()]
    shown_pages = sum(1 for game in games if game["written"])
    return {
        "title": str(experiment.get("name") or "experiment"),
        "description": experiment.get("description"),
        "facts": _facts(rows),
        "files": files,
        "verify": f"maze-envs verify {shlex.quote(str(out / JOURNAL_NAME))}" if journal else None,
        "plots": [{"href": p.name} for p in plots],
        "notes": list(notes),
        "parts": parts,
        "groups": groups,
        "games": games,
        "pages": {
            "journal": journal,
            "written": shown_pages,
            "bytes": None if pages is None else pages.bytes,
            "budget": PAGE_BUDGET_BYTES,
            "over_budget": 0 if pages is None else pages.over_budget,
            "all": _command(out) if journal else None,
        },
    }


#: How the facts name each outcome, one and many.
_NAMES: Final = {
    "success": ("success", "successes"),
    "failure": ("failure", "failures"),
    "error": ("policy error", "policy errors"),
    "outage": ("game touched by a model outage", "games touched by a model outage"),
    "stopped": ("game stopped by a cap", "games stopped by a cap"),
}


def _facts(rows: Sequence[Row]) -> list[str]:
    """One line per environment: its games and how they ended."""
    by_env: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = by_env.setdefault(str(row.get("env")), dict.fromkeys(OUTCOMES[::-1], 0))
        counts[outcome(row)] += 1
    names = {"escape": "Maze Escape", "agimaze": "AGI Maze", "agimaze_set": "AGI Maze sets"}
    facts = []
    for env, counts in by_env.items():
        ended = [f"{n} {_NAMES[kind][n != 1]}" for kind, n in counts.items() if n]
        facts.append(f"{names.get(env, env)}: {sum(counts.values())} games, {', '.join(ended)}")
    return facts or ["no games"]


def write_index(out: Path, data: dict[str, Any]) -> Path:
    """Write ``index.html`` from :func:`index_data`."""
    from maze_envs.view.page import render_run_index

    path = out / INDEX_NAME
    path.write_text(render_run_index(data["title"], data), encoding="utf-8")
    return path
