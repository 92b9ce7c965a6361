"""Language-model runs you can budget and trust (issue 25): the run-cap overshoot under each
executor, and the time a run takes to exit 4 when its model server cannot be reached.

* **Run caps**: the same Maze Escape experiment (16 games of 3 agents, 9x9, 40 turns) played by
  the deterministic stand-in model (``stand-in:wall-follower``: the real harness, token counts
  from the text) with ``--max-tokens-per-run 20000``, inline with 3 games at a time and in a
  2-worker process pool (8 games at a time in each, the default): tokens spent over the cap, and
  the overshoot in units of the run's largest request (the goal: at most one).
* **Fail fast**: ``maze-envs bench`` in a fresh process, 2 games, default settings, against a
  port nothing listens on, for a server declared local (``openai-chat:local:...,local=true``)
  and for one that is not: wall time to exit status 4 (the goal: 10 s, imports included).

    python benchmarks/llm_run_bench.py
    python benchmarks/llm_run_bench.py --only caps
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from maze_envs.bench.runner import RunOptions, run_experiment  # noqa: E402
from maze_envs.bench.spec import Experiment  # noqa: E402
from maze_envs.journal import Journal  # noqa: E402

CAP = 20_000


def experiment() -> Experiment:
    setup = {
        "preset": "navigator",
        "sizes": [9],
        "max_turns": 40,
        "policies": ["stand-in:wall-follower"],
    }
    return Experiment.model_validate({"name": "caps", "seeds": "0-15", "escape": [setup]})


def largest_request(out: Path) -> int:
    largest = 0
    with Journal(out / "games.sqlite", readonly=True) as journal:
        for game in journal.game_ids():
            for turn in journal.turns(game):
                for record in journal.resolve(turn.decisions).values():
                    for attempt in record.get("attempts") or ():
                        usage = attempt["usage"]
                        largest = max(largest, usage["input_tokens"] + usage["output_tokens"])
    return largest


def caps() -> None:
    cases: list[tuple[str, dict[str, Any]]] = [
        ("inline, 3 games at a time", {"executor": "inline", "concurrency": 3}),
        ("process pool, 2 workers x 8 games", {"executor": "process", "workers": 2}),
    ]
    print(f"run cap {CAP} tokens; 16 games of 3 agents (9x9, 40 turns), stand-in model")
    print("| executor | spent | spent / cap | overshoot in largest requests | games stopped |")
    print("|---|---|---|---|---|")
    for label, options in cases:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "run"
            result = run_experiment(
                experiment(),
                out,
                RunOptions(quiet=True, plots=False, max_tokens_per_run=CAP, **options),
            )
            spent = sum((r["input_tokens"] or 0) + (r["output_tokens"] or 0) for r in result.rows)
            largest = largest_request(out)
            stopped = sum(r["status"] == "stopped" for r in result.rows)
            over = max(0, spent - CAP) / largest
            print(
                f"| {label} | {spent:,} | {spent / CAP:.3f}x | {over:.2f} (largest {largest}) | "
                f"{stopped} of {len(result.rows)} |"
            )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fail_fast() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    cases = [
        ("local server (auto mode)", f"openai-chat:local:base_url={url},local=true"),
        ("hosted spec behind a base URL", f"openai-chat:gpt-4o-mini:base_url={url}"),
    ]
    env = {**os.environ, "OPENAI_API_KEY": "not-needed"}
    print("| endpoint | exit status | wall time (fresh process, imports included) | its CPU time |")
    print("|---|---|---|---|")
    for label, spec in cases:
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, "-m", "maze_envs", "bench", "--env", "escape"]
            command += ["--seeds", "0-1", "--policy", spec, "--out", f"{tmp}/run", "--quiet"]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
            elapsed = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            assert "could not be reached" in done.stderr, done.stderr[-500:]
            print(f"| {label} | {done.returncode} | {elapsed:.1f} s | {cpu:.1f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("caps", "fail-fast"))
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    if args.only in (None, "caps"):
        caps()
    if args.only in (None, "fail-fast"):
        fail_fast()
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
