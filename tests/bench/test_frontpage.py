"""Issue 23: every bench output has a front page, ``index.html``: the tables and plots, and a link
from each table line to viewer pages of its games (its first game of each outcome, written within
the page budget, and every game, whose page ``maze-envs view`` writes under the linked name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from maze_envs.bench import frontpage
from maze_envs.bench.command import main
from maze_envs.bench.report import games_of
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal, Problem, VerifyReport
from maze_envs.view.cli import game_html
from maze_envs.view.cli import main as view_main
from maze_envs.view.page import read_index, read_payload
from tests.bench import ESCAPE_VERSION


def index(out: Path) -> dict[str, Any]:
    return read_index((out / "index.html").read_text(encoding="utf-8"))


def table_lines(data: dict[str, Any]) -> list[tuple[list[str], dict[str, Any]]]:
    """(cells, group) of every table line of the front page."""
    return [
        (line, data["groups"][group])
        for part in data["parts"]
        if "header" in part
        for line, group in zip(part["lines"], part["groups"], strict=True)
    ]


def assert_every_line_links_a_page(out: Path) -> None:
    """Every table line of ``out``'s front page has games, and at least one of them has a
    written viewer page (a real file in ``out``) of the game it claims to show."""
    data = index(out)
    lines = table_lines(data)
    assert lines, "the front page shows no table"
    for cells, group in lines:
        games = [data["games"][n] for n in group["games"]]
        assert games, f"line {cells} lists no game"
        written = [g for g in games if g["written"]]
        assert written, f"line {cells} links no written viewer page"
        for game in written:
            page = (out / game["page"]).read_text(encoding="utf-8")
            assert read_payload(page)["game"] == game["id"]


def finest_keys(result: Any) -> list[dict[str, Any]]:
    experiment = orjson.loads((result.out / "experiment.json").read_bytes())
    return frontpage.finest_keys(experiment, result.summary)


def small_run(tmp_path: Path, **options: Any) -> Any:
    experiment = Experiment.model_validate(
        {
            "name": "front page",
            "seeds": "0-3",
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [7, 9],
                    "max_turns": 40,
                    "policies": ["random", "explorer"],
                }
            ],
            "agimaze": [
                {"packs": ["TUTORIAL/STAGE-01"], "budget_factor": 1, "policies": ["random"]}
            ],
        }
    )
    return run_experiment(experiment, tmp_path / "run", RunOptions(quiet=True, **options))


def test_the_front_page_shows_the_tables_and_links_each_line_to_its_games(tmp_path: Path) -> None:
    result = small_run(tmp_path, pages=True)
    out = result.out
    data = index(out)
    assert result.paths["index"] == out / "index.html"
    assert data["title"] == "front page"
    # the same tables as summary.md, cell for cell
    summary = (out / "summary.md").read_text(encoding="utf-8")
    for cells, _ in table_lines(data):
        assert "| " + " | ".join(cells) + " |" in summary
    # every line lists exactly its games: each Maze Escape game once among the size lines
    escape = [g for cells, g in table_lines(data) if cells[1] in ("7x7", "9x9")]
    listed = sorted(n for group in escape for n in group["games"])
    assert listed == [n for n, row in enumerate(result.rows) if row["env"] == "escape"]
    assert_every_line_links_a_page(out)
    # the sample pages: per finest line, the first game of each outcome, and nothing else
    chosen = frontpage.sample_rows(result.rows, finest_keys(result))
    written = {g["id"] for g in data["games"] if g["written"]}
    assert written == {int(row["game_id"]) for row in chosen}
    assert {p.name for p in (out / "pages").iterdir()} == {
        frontpage.page_name(game_id) for game_id in written
    }
    assert data["plots"] == [{"href": p.name} for p in result.plots]
    files = {f["href"] for f in data["files"]}
    assert {"summary.md", "results.csv", "results.json", "games.sqlite"} <= files


def test_the_first_failure_of_each_line_has_a_page(tmp_path: Path) -> None:
    """The issue's case: the explorer's one AGI Maze failure had no page. Every line's first
    failure (and first success) gets one, so every kind of outcome is one click away."""
    result = small_run(tmp_path, pages=True)
    data = index(result.out)
    failures = 0
    for _, group in table_lines(data):
        games = [data["games"][n] for n in group["games"]]
        for kind in ("failure", "success"):
            of_kind = [g for g in games if g["outcome"] == kind]
            if of_kind:
                assert of_kind[0]["written"], f"{group['label']}: no page of its first {kind}"
                failures += kind == "failure"
    assert failures  # the run has failures (random players in 40 turns)


def test_every_link_is_the_page_maze_envs_view_writes(tmp_path: Path) -> None:
    """A game without a written page links to the file `maze-envs view --game ID --out pages`
    writes: the command in its link makes the link work."""
    result = small_run(tmp_path, pages=True)
    data = index(result.out)
    missing = next(g for g in data["games"] if not g["written"])
    assert not (result.out / missing["page"]).exists()
    command = missing["command"].split()
    assert command[:2] == ["maze-envs", "view"]
    assert view_main(command[2:]) == 0
    page = (result.out / missing["page"]).read_text(encoding="utf-8")
    assert read_payload(page)["game"] == missing["id"]


def test_pages_stop_at_their_budget_and_say_so(tmp_path: Path) -> None:
    result = small_run(tmp_path)
    chosen = frontpage.sample_rows(result.rows, finest_keys(result))
    assert len(chosen) > 3
    sizes = []
    full = frontpage.write_pages(result.out, chosen)
    for game_id in [int(r["game_id"]) for r in chosen]:
        sizes.append(full.written[game_id].stat().st_size)
    assert full.over_budget == 0 and full.bytes == sum(sizes) <= frontpage.PAGE_BUDGET_BYTES
    budget = sum(sizes[:3])  # room for exactly the first three
    for path in (result.out / "pages").iterdir():
        path.unlink()
    cut = frontpage.write_pages(result.out, chosen, budget=budget)
    assert list(cut.written) == [int(r["game_id"]) for r in chosen[:3]]
    assert cut.bytes == budget and cut.over_budget == len(chosen) - 3
    assert f"{len(chosen) - 3} sample viewer page(s) left out" in cut.notes[0]
    assert len(list((result.out / "pages").iterdir())) == 3


def test_a_run_without_a_journal_still_has_a_front_page(tmp_path: Path) -> None:
    result = small_run(tmp_path, journal=False, pages=True)
    data = index(result.out)
    assert result.pages == [] and not (result.out / "pages").exists()
    assert all(g["page"] is None for g in data["games"]) and not data["pages"]["journal"]
    assert len(data["games"]) == len(result.rows)


def test_the_command_writes_the_front_page_and_its_pages_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--env", "escape", "--escape-version", str(ESCAPE_VERSION), "--size", "7"]
    base += ["--max-turns", "30", "--policy", "random", "--seeds", "0-2"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    printed = capsys.readouterr().out
    assert "index.html" in printed and "pages/" in printed
    assert_every_line_links_a_page(tmp_path / "a")
    assert main([*base, "--out", str(tmp_path / "b"), "--no-pages", "--quiet"]) == 0
    assert (tmp_path / "b" / "index.html").is_file() and not (tmp_path / "b" / "pages").exists()
    assert not any(g["written"] for g in index(tmp_path / "b")["games"])


def test_a_resume_that_plays_nothing_keeps_the_front_page(tmp_path: Path) -> None:
    first = small_run(tmp_path, pages=True)
    again = run_experiment(
        Experiment.model_validate_json((first.out / "experiment.json").read_bytes()),
        first.out,
        RunOptions(quiet=True, resume=True, pages=True),
    )
    assert again.played == 0 and again.paths["index"] == first.paths["index"]
    assert sorted(again.pages) == sorted(first.pages)


def test_games_of_picks_a_lines_rows() -> None:
    rows = [{"env": "escape", "size": "7x7", "n": 1}, {"env": "escape", "size": "9x9", "n": 2}]
    assert games_of(rows, {"env": "escape", "size": "9x9"}) == [rows[1]]


def test_in_a_browser_every_line_links_a_written_page_and_all_its_games(tmp_path: Path) -> None:
    """The page's script draws what the data says: each table line's first link is a written
    page, and its "all N" link opens the list of its N games."""
    from tests.chromium import Chromium, file_url, find_chromium

    if find_chromium() is None:
        pytest.skip("Chromium is not installed (apt-get install chromium, or set $CHROMIUM)")
    result = small_run(tmp_path, pages=True)
    data = index(result.out)
    with Chromium() as browser:
        browser.open(file_url(result.out / "index.html"))
        browser.wait_for("document.body.dataset.ready === '1'")
        cells = browser.evaluate(
            "[...document.querySelectorAll('td.games')].map((td) => [...td.querySelectorAll('a')]"
            ".map((a) => [a.getAttribute('href'), a.className, a.textContent]))"
        )
        assert len(cells) == len(table_lines(data))
        for links in cells:
            href, style, text = links[0]
            assert text.startswith("first ") and style == "" and (result.out / href).is_file()
            assert links[-1][2].startswith("all ")
        group = table_lines(data)[0][1]
        browser.open(file_url(result.out / "index.html") + f"#games-{data['groups'].index(group)}")
        browser.wait_for("document.body.dataset.ready === '1'")
        shown = browser.evaluate(
            f"document.querySelectorAll('#games-{data['groups'].index(group)} tbody tr').length"
        )
        assert shown == len(group["games"])


def test_pages_show_the_runs_own_verification_without_replaying_again(tmp_path: Path) -> None:
    """The run verifies every game once: its sample pages show that verdict (the very page a
    fresh verification draws), and a verdict handed to ``write_pages`` is the one shown."""
    result = small_run(tmp_path, verify=True, pages=True)
    assert result.verified and all(report.ok for report in result.verified)
    data = index(result.out)
    written = [g for g in data["games"] if g["written"]]
    assert written
    with Journal(result.out / "games.sqlite", readonly=True) as journal:
        for game in written:
            fresh = read_payload(game_html(journal, game["id"]))  # verifies the game itself
            page = (result.out / game["page"]).read_text(encoding="utf-8")
            assert read_payload(page) == fresh
    game_id = written[0]["id"]
    chosen = [r for r in result.rows if int(r["game_id"]) == game_id]
    failed = VerifyReport(game_id, "failed", 0, Problem(0, "mismatch", "made up for the test"))
    pages = frontpage.write_pages(result.out, chosen, reports={game_id: failed})
    payload = read_payload(pages.written[game_id].read_text(encoding="utf-8"))
    assert payload["verified"] is False
    assert payload["verification"] == failed.describe()
