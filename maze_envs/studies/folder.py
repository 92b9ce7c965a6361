"""The files of a study run, and (re)writing its report.

A study run's folder holds what ``maze-envs bench`` writes (``games.sqlite``, ``rows.jsonl``,
``results.*``, ``summary.md``, its plots) and:

``study.toml``
    the study file exactly as run (so a report can be rewritten from the folder alone);
``study.json``
    how it was run: the models, the arms, seeds, sizes and turn limits, the response cache, the
    command;
``replay.json``
    the decision replay per model (its label), when the study has one;
``report.md``, ``report.html``, ``report.json``, and the plots ``arms.png``,
``comparisons.png``, ``behaviour.png``
    the report (:func:`write_report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from maze_envs.studies.document import sections, title
from maze_envs.studies.plots import write_plots
from maze_envs.studies.render import html_page, markdown_text
from maze_envs.studies.report import StudyRun, build_report
from maze_envs.studies.spec import Study

STUDY_FILE: Final = "study.toml"
RUN_FILE: Final = "study.json"
REPLAY_FILE: Final = "replay.json"
REPORT_FILES: Final = ("report.md", "report.html", "report.json")


class NotAStudyRun(ValueError):
    """The folder holds no study run (or a damaged one)."""


def _json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise NotAStudyRun(f"cannot read {path}: {exc}") from None


def _rows(folder: Path) -> list[dict[str, Any]]:
    results = folder / "results.json"
    if results.is_file():
        games = _json(results).get("games")
        if isinstance(games, list):
            return games
    from maze_envs.bench.rowstore import RowStore

    return list(RowStore(folder / "rows.jsonl").load().values())


def _team_rows(folder: Path) -> dict[int, dict[str, Any]]:
    journal = folder / "games.sqlite"
    if not journal.is_file():
        return {}
    from maze_envs.bench.analysis import analyze_journal
    from maze_envs.journal import JournalError

    try:
        analysis = analyze_journal(journal)
    except JournalError as exc:
        raise NotAStudyRun(f"the journal of {folder} cannot be read: {exc}") from None
    return {m.game: m.row() for m in analysis.escape if m.agent == "team"}


def load_run(folder: str | Path) -> StudyRun:
    """Everything a report is made of, read from a study run's folder."""
    where = Path(folder)
    if not (where / STUDY_FILE).is_file() or not (where / RUN_FILE).is_file():
        raise NotAStudyRun(
            f"{where} holds no study run (no {STUDY_FILE} and {RUN_FILE}); run one with "
            "maze-envs study run NAME --out DIR"
        )
    study = Study.load(where / STUDY_FILE)
    replay = _json(where / REPLAY_FILE) if (where / REPLAY_FILE).is_file() else None
    return StudyRun(
        study=study,
        run=_json(where / RUN_FILE),
        rows=_rows(where),
        team=_team_rows(where),
        replay=replay,
    )


@dataclass
class Written:
    """The report's files, and why there are no plots (if so)."""

    paths: dict[str, Path]
    plots: list[Path] = field(default_factory=list)
    note: str | None = None


def write_report(folder: str | Path) -> Written:
    """(Re)write the report of the study run in ``folder`` (:class:`NotAStudyRun` if none)."""
    where = Path(folder)
    run = load_run(where)
    report = build_report(run)
    for stale in ("arms.png", "comparisons.png", "behaviour.png"):
        (where / stale).unlink(missing_ok=True)
    plots, why = write_plots(report, where)
    parts = sections(report)
    heading = title(report)
    paths = {name.rsplit(".", 1)[1]: where / name for name in REPORT_FILES}
    paths["md"].write_text(markdown_text(heading, parts, [p.name for p in plots]), "utf-8")
    paths["html"].write_text(html_page(heading, parts, plots, why), "utf-8")
    paths["json"].write_bytes(
        orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    )
    return Written(paths, plots, why)
