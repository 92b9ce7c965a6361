"""Where the main job's time goes: ``maze-envs bench`` on its defaults, timed phase by phase.

Runs the main job (963 games, journaled, verified, tables, plots, front page, viewer pages) in
this process, as ``maze-envs bench --out DIR`` does, into a fresh temporary folder, and prints
the wall-clock seconds of each phase, the CPU seconds of this process and of its worker
processes (less moved by the load than wall time), and the 1-minute load average before and
after (the machine has 2 cores: a load above 2 means the job waited for a core and took
longer than it needs):

* ``import``: importing the command (``maze_envs.bench.command``) in this fresh process;
* ``games``: from the start of the run to its results (set-up, the worker pool, every game
  played and merged into the journal);
* ``results``: the results files (CSV, JSON, Markdown); ``plots``: the PNG plots, drawn in a
  thread while the journal is verified and the pages drawn (so ``plots`` overlaps them);
* ``verify``: replaying and checking every game of the journal;
* ``pages``: the front page's sample viewer pages; ``index``: the rest of the front page.

The phases are timed by wrapping the runner's own functions (nothing else changes). Python
writes bytecode caches as it normally does; ``--no-bytecode-cache`` sets
``PYTHONDONTWRITEBYTECODE=1`` in a first run's manner instead (every module compiled again, in
every process).

Usage: ``python benchmarks/main_job_phases.py [--keep DIR] [--no-bytecode-cache]``
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PHASES = ("import", "games", "results", "plots", "verify", "pages", "index")


def _timed(times: dict[str, float], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            times[name] = times.get(name, 0.0) + time.perf_counter() - start

    return wrapper


def child(out: str) -> None:
    """The measured process: import, wrap the phases, run the main job into ``out``."""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    from maze_envs.bench import command, frontpage, runner

    times: dict[str, float] = {"import": time.perf_counter() - started}
    marks: dict[str, float] = {}
    for name, attribute in (("results", "write_results"), ("plots", "write_plots")):
        original = getattr(runner, attribute)
        if name == "results":  # the games end where the results begin
            inner = original

            def first(*args: Any, _inner: Any = inner, **kwargs: Any) -> Any:
                marks.setdefault("games_end", time.perf_counter())
                return _inner(*args, **kwargs)

            original = first
        setattr(runner, attribute, _timed(times, name, original))
    runner._verify = _timed(times, "verify", runner._verify)  # type: ignore[attr-defined]
    runner._front_page = _timed(times, "front", runner._front_page)  # type: ignore[attr-defined]
    frontpage.write_pages = _timed(times, "pages", frontpage.write_pages)  # type: ignore[assignment]
    run_started = time.perf_counter()
    status = command.main(["--out", out, "--quiet"])
    ended = time.perf_counter()
    times["games"] = marks.get("games_end", ended) - run_started
    times["index"] = times.pop("front", 0.0) - times.get("pages", 0.0)
    own = resource.getrusage(resource.RUSAGE_SELF)
    # the worker processes are the forkserver's children: it reaps them, and stopping it here
    # adds their CPU time (through its own) to this process's children's
    from multiprocessing import forkserver

    forkserver._forkserver._stop()  # type: ignore[attr-defined]
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    size = (Path(out) / "games.sqlite").stat().st_size
    print(f"main job: exit status {status}, {ended - started:.1f} s wall in all (import included)")
    for name in PHASES:
        print(f"  {name:<8} {times.get(name, 0.0):7.2f} s")
    print(
        f"CPU: this process {own.ru_utime + own.ru_stime:.1f} s, worker processes "
        f"{workers.ru_utime + workers.ru_stime:.1f} s; journal {size / 1e6:.1f} MB; load average "
        f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after (2 cores)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keep", type=Path, help="write the run into DIR (new) and keep it")
    parser.add_argument("--no-bytecode-cache", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.no_bytecode_cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        out = str(args.keep) if args.keep else str(Path(folder) / "out")
        # a fresh interpreter, so that the import phase is the one a user's command has
        done = subprocess.run([sys.executable, __file__, "--child", out], env=env, check=False)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
