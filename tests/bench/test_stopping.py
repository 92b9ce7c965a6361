"""Stopping a run with a real signal, in a real subprocess (issue 13, "Stopping is clean").

``maze-envs bench`` runs in a child process; two games end, the next ones hang (the
``BlockAfter`` test policy) until the test has seen, in the run's files, the two finished games
and a hung game in progress. Then the test sends SIGTERM (what ``timeout`` sends the command) or
SIGINT to the child's whole process group (what Ctrl-C on a terminal does) and checks: exit
status 130 / 143, a message saying the run stopped and how to resume (no traceback), no worker
process left alive, the two finished games in the journal once each (verified), and the resume
command the message gives completing the run. Nothing here waits on a timer: only on files the
run writes, with deadlines that only a hang reaches.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from maze_envs.bench.rowstore import RowStore
from maze_envs.bench.spec import Experiment
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal
from tests.bench import ESCAPE_VERSION

REPO = Path(__file__).resolve().parents[2]
HERE = "tests.bench.policies"
# only a hang reaches it: a Ray run's resume takes 40 s on a quiet machine and went past 180 s
# at load 7-8 (two CPU-bound processes beside the suite's two workers)
DEADLINE_S = 900.0
SEEDS = "0-9"


def command(folder: Path, out: Path, executor: str) -> list[str]:
    policy = f"{HERE}:BlockAfter:folder={folder},games=2"
    return [
        "--env",
        "escape",
        "--escape-version",
        str(ESCAPE_VERSION),
        "--size",
        "5",
        "--max-turns",
        "20",
        "--policy",
        policy,
        "--seeds",
        SEEDS,
        "--out",
        str(out),
        "--executor",
        executor,
        "--workers",
        "2",
        "--no-plots",
    ]


def environment() -> dict[str, str]:
    paths = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def wait_for(condition: Callable[[], bool], child: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if child.poll() is not None:
            pytest.fail(f"the run ended early ({child.returncode}):\n{log.read_text()}")
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.01)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, dead but not reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def run_keys(folder: Path) -> list[str]:
    experiment = Experiment.model_validate(
        {
            "seeds": SEEDS,
            "escape": [
                {
                    "version": ESCAPE_VERSION,
                    "sizes": [5],
                    "max_turns": 20,
                    "policies": [f"{HERE}:BlockAfter:folder={folder},games=2"],
                }
            ],
        }
    )
    return sorted(task.run_key for task in experiment.tasks())


def journal_keys(path: Path) -> list[str]:
    with Journal(path, readonly=True) as journal:
        return sorted(g.meta["run_key"] for g in journal.games() if g.meta)


@pytest.mark.parametrize("executor", ["inline", "process", "ray"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_run_cleanly_and_resume_completes_it(
    executor: str, signum: int, tmp_path: Path
) -> None:
    if executor == "ray":
        pytest.importorskip("ray")
    folder, out, log = tmp_path / "flags", tmp_path / "run", tmp_path / "stderr.txt"
    folder.mkdir()
    (folder / "block").touch()
    args = command(folder, out, executor)
    with log.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-m", "maze_envs", "bench", *args],
            cwd=REPO,
            env=environment(),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its own process group, as a terminal's foreground job
        )
        try:
            rows = out / "rows.jsonl"
            # two games finished and stored, a third one hung in a worker
            wait_for(
                lambda: rows.is_file() and len(rows.read_bytes().splitlines()) >= 2, child, log
            )
            wait_for(lambda: (folder / "slot-2").exists(), child, log)
            if signum == signal.SIGINT:
                os.killpg(child.pid, signal.SIGINT)  # Ctrl-C: every process of the job
            else:
                os.kill(child.pid, signal.SIGTERM)  # timeout(1): the command only
            code = child.wait(timeout=DEADLINE_S)
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
    message = log.read_text()
    assert code == 128 + signum, message
    name = signal.Signals(signum).name
    assert f"stopped by {name} after 2 of 10 games" in message, message
    assert "Traceback" not in message, message
    workers = {int(p.name.removeprefix("pid-")) for p in folder.glob("pid-*")} - {child.pid}
    if executor != "inline":
        assert workers, "no worker played: the test proves nothing"
    deadline = time.monotonic() + 30  # the parent joined its workers; Ray's take a moment
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if alive(pid)], "a worker outlived the run"
    # every finished game once, nothing half written; the rows agree
    assert len(journal_keys(out / "games.sqlite")) == 2
    assert len(set(journal_keys(out / "games.sqlite"))) == 2
    assert all(report.ok for report in verify_journal(str(out / "games.sqlite")))
    assert sorted(RowStore(out / "rows.jsonl").load()) == journal_keys(out / "games.sqlite")
    assert not (out / "shards").exists()
    # the resume command the message gives completes the run
    (folder / "block").unlink()
    resume = message.split("resume with: ", 1)[1].splitlines()[0]
    words = shlex.split(resume)
    assert words[:2] == ["maze-envs", "bench"] and words[-1] == "--resume"
    done = subprocess.run(
        [sys.executable, "-m", "maze_envs", *words[1:], "--quiet"],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert journal_keys(out / "games.sqlite") == run_keys(folder)  # each game once
    assert all(report.ok for report in verify_journal(str(out / "games.sqlite")))
