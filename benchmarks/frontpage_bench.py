"""The front page of a finished run: its sample viewer pages (count, bytes, time) and index.html.

    python benchmarks/frontpage_bench.py out          # a run folder (the main job's: out/)

For the run in ``FOLDER`` (its ``results.json`` and ``games.sqlite``), draws the sample pages the
runner writes (:func:`maze_envs.bench.frontpage.sample_rows`: per line of the finest tables, the
first game of each outcome) into a temporary folder, with 1 process and with 2, and prints how
many, their bytes against the budget, the seconds each way, the size of ``index.html`` and
whether every table line links a written page; the load average is printed with each figure
(the project's VM has 2 cores shared with other work). It also says whether each AGI Maze
explorer failure has a page (issue 23: the main job's one failure had none).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import orjson

from maze_envs.bench import frontpage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a finished run's folder")
    args = parser.parse_args(argv)
    data = orjson.loads((args.folder / "results.json").read_bytes())
    rows, summary, experiment = data["games"], data["summary"], data["experiment"]
    chosen = frontpage.sample_rows(rows, frontpage.finest_keys(experiment, summary))
    print(f"{len(rows)} games; {len(chosen)} sample pages chosen")
    with tempfile.TemporaryDirectory(prefix="frontpage-") as scratch:
        work = Path(scratch)
        shutil.copy(args.folder / frontpage.JOURNAL_NAME, work / frontpage.JOURNAL_NAME)
        for workers in (1, 2):
            shutil.rmtree(work / "pages", ignore_errors=True)
            load = os.getloadavg()[0]
            start = time.perf_counter()
            pages = frontpage.write_pages(work, chosen, workers=workers)
            seconds = time.perf_counter() - start
            print(
                f"{workers} process(es): {len(pages.written)} pages, {pages.bytes / 2**20:.1f} MB "
                f"of a {frontpage.PAGE_BUDGET_BYTES / 2**20:.0f} MB budget, {seconds:.1f} s "
                f"(load {load:.1f} -> {os.getloadavg()[0]:.1f}); {pages.over_budget} left out"
            )
        index = frontpage.index_data(work, experiment, rows, summary, pages=pages)
        path = frontpage.write_index(work, index)
        lines = [(part, n) for part in index["parts"] if "header" in part for n in part["groups"]]
        linked = sum(
            any(index["games"][g]["written"] for g in index["groups"][n]["games"]) for _, n in lines
        )
        print(
            f"index.html {path.stat().st_size / 1024:.0f} KiB; {linked} of {len(lines)} table "
            "lines link a written viewer page"
        )
        failures = [
            g
            for g, row in zip(index["games"], rows, strict=True)
            if row.get("env") == "agimaze"
            and row.get("policy") == "explorer"
            and g["outcome"] == "failure"
        ]
        for game in failures:
            print(
                f"AGI Maze explorer failure: game {game['id']} ({game['case']}, {game['text']}): "
                + ("page written" if game["written"] else "no page")
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
