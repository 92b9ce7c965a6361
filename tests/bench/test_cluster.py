"""Benchmark runs on a real two-node Ray cluster whose worker node does not see the driver's disk.

The cluster (:mod:`tests.bench.cluster`): a head without CPUs, and a worker node in its own
mount and PID namespaces with a private tmpfs over the driver's folder, which holds every run's
output, the response cache and a user's pack tree. The runs go through ``maze-envs bench
--executor ray --ray-address`` in a subprocess, as a user would start them. Checked: every game
comes back into the driver's journal and verifies, the table equals an inline run's, a rerun
with the response cache, on a new worker node, sends no model request (a loopback
OpenAI-compatible server counts them), and stopping the worker node mid-run (``ray stop``
inside its namespaces, then a new worker node) loses no game and counts none twice. Nothing
waits on a clock: each step waits for a condition (files of the run, requests the server
holds), with generous deadlines.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maze_envs.agimaze.packs import PACK_ROOT
from maze_envs.journal import Journal
from maze_envs.verify import verify_journal
from tests.bench.cluster import DEADLINE_S, LoopbackCluster, unavailable
from tests.llm.servers import Held, LoopbackServer, RecordedRequest, Reply, serve

pytestmark = pytest.mark.slow

API_KEY = "test-key-of-the-cluster"
MOVES = ("N", "E", "S", "W")
#: Model requests answered before the server holds the next ones (the node-stop test): more
#: than two 4-turn games of 3 agents need, so a game has come back before the node stops.
ANSWERED_BEFORE_HOLD = 30


@pytest.fixture(scope="module")
def cluster() -> Iterator[LoopbackCluster]:
    pytest.importorskip("ray")
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="mzr-", dir="/tmp"))  # Ray's socket paths stay short
    driver = base / "driver"
    driver.mkdir()
    running = LoopbackCluster(base, private=driver)
    try:
        running.start_head()
        running.add_node()
        yield running
    finally:
        running.close()
        shutil.rmtree(base, ignore_errors=True)


class Model:
    """The loopback model's answers: a move chosen from the request's messages (the same
    request always gets the same reply). Once :meth:`hold_after` is called, the requests past
    the next ``answered`` ones are held until ``gate`` is set."""

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.gate = threading.Event()
        self.gate.set()
        self._hold_past: int | None = None

    def hold_after(self, answered: int) -> None:
        """Hold every request after the next ``answered`` ones, until ``gate`` is set."""
        self._hold_past = len(self.server.requests) + answered
        self.gate.clear()

    def __call__(self, request: RecordedRequest) -> Reply | Held:
        body = request.body if isinstance(request.body, dict) else {}
        digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode())
        move = MOVES[digest.digest()[0] % len(MOVES)]
        action = json.dumps({"move": move, "notebook": None, "radio": None})
        reply = Reply(tool_arguments=action) if body.get("tools") else Reply(text=action)
        past = self._hold_past is not None and len(self.server.requests) > self._hold_past
        return Held(self.gate, reply) if past and not self.gate.is_set() else reply


@pytest.fixture(scope="module")
def model() -> Iterator[Model]:
    with serve() as server:
        answers = Model(server)
        server.respond_with(answers)
        yield answers


def bench(
    cluster: LoopbackCluster, *args: str, ray: bool = True
) -> subprocess.CompletedProcess[str]:
    """``maze-envs bench ARGS`` (on the cluster unless ``ray=False``), to its end."""
    done = subprocess.run(
        _command(cluster, args, ray),
        env={**cluster.env, "OPENAI_API_KEY": API_KEY},
        capture_output=True,
        text=True,
        timeout=DEADLINE_S * 2,
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _command(cluster: LoopbackCluster, args: tuple[str, ...], ray: bool) -> list[str]:
    command = [sys.executable, "-m", "maze_envs", "bench", *args, "--verify", "--no-plots"]
    if ray:
        # the worker node gets the model's key the way a real cluster's would: Ray's runtime
        # environment (the node itself was started without it)
        runtime_env = json.dumps({"env_vars": {"OPENAI_API_KEY": API_KEY}})
        command += ["--executor", "ray", "--ray-address", cluster.address, "--workers", "2"]
        command += ["--ray-runtime-env", runtime_env]
    return command


def llm_spec(model: Model, cache: Path) -> str:
    url = model.server.openai_base_url
    return f"openai-chat:gpt-4o-mini:base_url={url},retries=0,cache={cache}"


def llm_args(spec: str, seeds: str, out: Path) -> tuple[str, ...]:
    return (
        "--env",
        "escape",
        "--preset",
        "navigator",
        "--size",
        "5",
        "--max-turns",
        "4",
        "--seeds",
        seeds,
        "--policy",
        spec,
        "--concurrency",
        "1",
        "--out",
        str(out),
    )


def stored_rows(out: Path) -> list[dict[str, Any]]:
    """Every line of the run's ``rows.jsonl`` (a game counted twice would be two lines)."""
    lines = (out / "rows.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def table(out: Path) -> str:
    return (out / "summary.md").read_text()


def assert_every_game_once(out: Path, count: int) -> None:
    """``count`` games in the run's journal, each run key once, every one finished and
    verified, and one row per game."""
    with Journal(out / "games.sqlite", readonly=True) as journal:
        games = journal.games()
    keys = [game.meta["run_key"] for game in games if game.meta]
    assert len(keys) == len(set(keys)) == count, keys
    assert all(game.outcome is not None and not game.outcome.get("aborted") for game in games)
    reports = verify_journal(str(out / "games.sqlite"))
    assert len(reports) == count and all(r.ok for r in reports), [r.describe() for r in reports]
    rows = stored_rows(out)
    assert sorted(row["run_key"] for row in rows) == sorted(keys)
    assert not (out / "shards").exists()


def comparable(out: Path) -> list[dict[str, Any]]:
    rows = sorted(stored_rows(out), key=lambda row: row["run_key"])
    return [{k: v for k, v in row.items() if k not in {"elapsed_s", "game_id"}} for row in rows]


def test_games_come_back_from_a_node_that_cannot_see_the_drivers_disk(
    cluster: LoopbackCluster,
) -> None:
    driver = cluster.private
    (driver / "only-on-the-driver").touch()
    (node,) = cluster.worker_nodes()
    seen = cluster.inside(node, "ls", "-A", str(driver))
    assert seen.returncode == 0 and seen.stdout.split() == [], seen  # the premise of the test
    escape = ("--env", "escape", "--size", "7", "--seeds", "0-31", "--policy", "explorer")
    bench(cluster, *escape, "--out", str(driver / "escape"))
    bench(cluster, *escape, "--out", str(driver / "escape-inline"), ray=False)
    assert_every_game_once(driver / "escape", 32)
    assert comparable(driver / "escape") == comparable(driver / "escape-inline")
    assert table(driver / "escape") == table(driver / "escape-inline")

    # a pack tree of the user's own, on the driver's disk only: its bundles travel with the run
    packs = driver / "packs"
    shutil.copytree(PACK_ROOT / "TUTORIAL" / "STAGE-01", packs / "MINE" / "STAGE-01")
    agimaze = ("--env", "agimaze", "--pack", "MINE", "--pack-root", str(packs))
    agimaze += ("--policy", "explorer", "--seeds", "0-1")
    bench(cluster, *agimaze, "--out", str(driver / "packs-run"))
    bench(cluster, *agimaze, "--out", str(driver / "packs-inline"), ray=False)
    assert_every_game_once(driver / "packs-run", 2 * len(list((packs / "MINE").rglob("*.json"))))
    assert comparable(driver / "packs-run") == comparable(driver / "packs-inline")
    # the node read its copy of the bundles, and left no batch journal behind
    temp = cluster.temp_folder(node)
    (copy,) = (temp / "maze-envs-packs").iterdir()
    assert sorted(f.name for f in copy.rglob("*.json")) == sorted(
        f.name for f in (packs / "MINE").rglob("*.json")
    )
    assert list((temp / "maze-envs-games").iterdir()) == []


def test_a_rerun_with_the_drivers_response_cache_sends_no_request(
    cluster: LoopbackCluster, model: Model
) -> None:
    driver = cluster.private
    cache = driver / "responses.sqlite"
    spec = llm_spec(model, cache)
    before = len(model.server.requests)
    bench(cluster, *llm_args(spec, "0-3", driver / "llm"))
    sent = len(model.server.requests) - before
    assert sent > 0 and sent == sum(row["requests"] for row in stored_rows(driver / "llm"))
    assert cache.is_file()  # filled on the driver's disk, by the driver's node
    assert_every_game_once(driver / "llm", 4)

    # the rerun on another worker node, which never saw the cache: it is the driver's
    (node,) = cluster.worker_nodes()
    cluster.stop_node(node)
    cluster.add_node()
    bench(cluster, *llm_args(spec, "0-3", driver / "llm-again"))
    assert len(model.server.requests) - before == sent  # not one request reached the model
    assert all(row["requests"] == 0 for row in stored_rows(driver / "llm-again"))
    assert table(driver / "llm-again") == table(driver / "llm")
    bench(cluster, *llm_args(spec, "0-3", driver / "llm-inline"), ray=False)
    assert len(model.server.requests) - before == sent
    assert table(driver / "llm-inline") == table(driver / "llm")


def _wait(condition: Any, what: str, driver: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if driver.poll() is not None:
            _, err = driver.communicate()
            raise AssertionError(f"the run ended before {what}: exit {driver.returncode}\n{err}")
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.1)


def test_stopping_the_worker_node_mid_run_loses_no_game_and_counts_none_twice(
    cluster: LoopbackCluster, model: Model
) -> None:
    driver = cluster.private
    spec = llm_spec(model, driver / "stop-cache.sqlite")
    out = driver / "stopped"
    args = llm_args(spec, "10-17", out)
    held_before = model.server.held
    model.hold_after(ANSWERED_BEFORE_HOLD)
    run = subprocess.Popen(
        _command(cluster, args, True),
        env={**cluster.env, "OPENAI_API_KEY": API_KEY},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        rows = out / "rows.jsonl"
        _wait(
            lambda: rows.is_file() and stored_rows(out) and model.server.held > held_before,
            "a game stored and another held in flight on the worker node",
            run,
        )
        stored = len(stored_rows(out))
        assert 1 <= stored < 8
        (node,) = cluster.worker_nodes()
        cluster.stop_node(node)  # `ray stop` on the node: its games in flight die with it
        model.gate.set()
        cluster.add_node()
        stdout, stderr = run.communicate(timeout=DEADLINE_S * 2)
        assert run.returncode == 0, f"exit {run.returncode}:\n{stdout}\n{stderr}"
    finally:
        model.gate.set()
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert_every_game_once(out, 8)  # none lost, none twice
    bench(cluster, *llm_args(spec, "10-17", driver / "stopped-inline"), ray=False)
    assert table(out) == table(driver / "stopped-inline")
