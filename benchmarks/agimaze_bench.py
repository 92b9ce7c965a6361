"""AGI Maze throughput: AgiMaze-v0 against FrozenLake-v1, and the offline API server.

Measured in one run, so machine noise hits both sides of each ratio alike:

1. ``AgiMaze-v0`` steps per second through ``gymnasium.make`` (default wrappers included) on a
   TRAINING 5x5 labyrinth with uniform random actions, against ``FrozenLake-v1`` through
   ``gymnasium.make`` (the floor of a Python environment). Goal: ratio >= 0.5.
   Rounds alternate between the two and the best round of each counts.
2. ``maze-envs agimaze serve`` in a subprocess on 127.0.0.1: steps per second over loopback
   with one client, and with eight concurrent clients (threads, one session each, keep-alive).
3. Memory. (a) Bytes per stored step of the seq replay (the server keeps each session's last 64
   replies), measured in process with ``tracemalloc`` over ``--memory-sessions`` sessions of 64
   steps (goal < 2 KiB). (b) A full server: the resident size of a server subprocess holding
   ``--memory-sessions`` sessions of 64 steps each (goal < 150 MB for 1,000). (c) The server's
   peak resident size while a client uploads a 50 MB body (chunked, then declared by
   Content-Length): the body must be refused without being held.

Run: ``.venv/bin/python benchmarks/agimaze_bench.py [--steps N] [--server-steps N]
[--memory-sessions N]`` (about a minute with the defaults, most of it the full-server fill).
"""

from __future__ import annotations

import argparse
import gc
import json
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import gymnasium as gym
import numpy as np

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.api.client import AgiMazeClient, AgiMazeConnectionError
from maze_envs.agimaze.api.service import AgiMazeService

LABYRINTH = "TRAINING/S1-rivers/STAGE-06/0000.json"
GOAL_RATIO = 0.5
GOAL_BYTES_PER_STORED_STEP = 2048
GOAL_SERVER_MB = 150
REPLAY_WINDOW = 64
MOVES = ("up", "left", "down", "right")


def env_rate(make: Callable[[], gym.Env], steps: int, seed: int) -> float:
    """Steps per second of uniform random play, resets included."""
    env = make()
    actions = np.random.default_rng(seed).integers(env.action_space.n, size=steps).tolist()
    env.reset(seed=seed)
    step = env.step
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            env.reset()
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed


def bench_envs(steps: int, rounds: int) -> tuple[float, float]:
    agimaze: list[float] = []
    frozen: list[float] = []
    for r in range(rounds):
        agimaze.append(env_rate(lambda: gym.make("maze_envs/AgiMaze-v0", path=LABYRINTH), steps, r))
        frozen.append(env_rate(lambda: gym.make("FrozenLake-v1"), steps, r))
    return max(agimaze), max(frozen)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(base_url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    probe = AgiMazeClient(base_url, timeout=1.0, retries=0)
    while True:
        try:
            probe.description()
            return
        except AgiMazeConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
        finally:
            probe.close()


def play(base_url: str, steps: int, seed: int) -> None:
    """One client: one session, ``steps`` random actions with seq 1, 2, 3, ..."""
    client = AgiMazeClient(base_url)
    rng = np.random.default_rng(seed)
    session = client.start(LABYRINTH, seed=seed, agent="bench")
    actions = session["actions"]
    sid = session["id"]
    for seq in range(1, steps + 1):
        reply = client.step(sid, actions[int(rng.integers(len(actions)))], seq)
        if reply.get("done"):
            sid = client.start(LABYRINTH, seed=seed + seq, agent="bench")["id"]
    client.close()


def server_rate(base_url: str, clients: int, steps_each: int) -> float:
    threads = [
        threading.Thread(target=play, args=(base_url, steps_each, i)) for i in range(clients)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return clients * steps_each / (time.perf_counter() - start)


@contextmanager
def server_process(*options: str) -> Iterator[tuple[str, int]]:
    """(base URL, pid) of ``maze-envs agimaze serve`` in a subprocess on a free port."""
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "import sys; from maze_envs.agimaze.api.server import main; sys.exit(main(sys.argv[1:]))",
        "--port",
        str(port),
        "--log-level",
        "error",
        *options,
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base_url)
        yield base_url, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def bench_server(total_steps: int) -> tuple[float, float]:
    with server_process() as (base_url, _):
        server_rate(base_url, 1, 50)  # warm-up
        one = server_rate(base_url, 1, total_steps)
        eight = server_rate(base_url, 8, max(1, total_steps // 8))
    return one, eight


def memory_kib(pid: int, field: str) -> int | None:
    """``VmRSS`` / ``VmHWM`` (peak) of a process in KiB, from /proc (None elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def replay_bytes_per_step(sessions: int) -> tuple[float, float]:
    """(traced bytes, JSON bytes) per stored step: ``sessions`` sessions of 64 steps, in process.

    Traced bytes cover everything the steps added (stored replies and their bookkeeping, engine
    states), measured with tracemalloc after the sessions were started.
    """
    service = AgiMazeService(max_sessions=sessions + 1)
    start = json.dumps({"path": LABYRINTH, "seed": 0, "agent": "bench"}).encode()
    ids = [service.start(start)[1]["id"] for _ in range(sessions)]
    requests = [
        [
            json.dumps({"id": sid, "action": MOVES[(i * 7 + k) % 4], "seq": k + 1}).encode()
            for k in range(REPLAY_WINDOW)
        ]
        for i, sid in enumerate(ids)
    ]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for batch in requests:
        for request in batch:
            service.step(request)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    stored = sessions * REPLAY_WINDOW
    json_bytes = sum(service.sessions.get(sid).replay.stored_bytes() for sid in ids)
    return grown / stored, json_bytes / stored


def fill(base_url: str, sessions: int, clients: int = 8) -> None:
    """Start ``sessions`` sessions and play 64 steps in each (``clients`` threads)."""

    def worker(count: int, seed: int) -> None:
        client = AgiMazeClient(base_url)
        for n in range(count):
            sid = client.start(LABYRINTH, seed=seed, agent="bench")["id"]
            for seq in range(1, REPLAY_WINDOW + 1):
                client.step(sid, MOVES[(n + seq) % 4], seq)
        client.close()

    share = [sessions // clients + (i < sessions % clients) for i in range(clients)]
    threads = [threading.Thread(target=worker, args=(n, i)) for i, n in enumerate(share)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def upload(base_url: str, chunked: bool, size: int = 50 * 1024 * 1024) -> int:
    """Send a ``size``-byte body to /api/start; the HTTP status of the reply."""
    host, port = base_url.removeprefix("http://").split(":")
    chunk = b"x" * 65536
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
        sock.sendall(f"POST /api/start HTTP/1.1\r\nHost: b\r\n{length}\r\n\r\n".encode())
        sock.settimeout(0.05)
        sent, reply = 0, b""
        while sent < size and not reply:
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" if chunked else chunk)
                sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
            try:
                reply = sock.recv(4096)
            except TimeoutError:
                continue
        sock.settimeout(10)
        while b"\r\n" not in reply:
            more = sock.recv(4096)
            if not more:
                break
            reply += more
    return int(reply.split()[1]) if reply.startswith(b"HTTP/") else 0


def bench_memory(sessions: int) -> dict[str, float | None]:
    with server_process("--max-sessions", str(sessions + 16)) as (base_url, pid):
        server_rate(base_url, 1, 50)  # warm-up: every module loaded, one board compiled
        idle = memory_kib(pid, "VmRSS")
        peak_before = memory_kib(pid, "VmHWM")
        statuses = (upload(base_url, chunked=True), upload(base_url, chunked=False))
        peak_after = memory_kib(pid, "VmHWM")
        fill(base_url, sessions)
        full = memory_kib(pid, "VmRSS")
    upload_mb = None if peak_before is None or peak_after is None else peak_after / 1024
    return {
        "idle_mb": None if idle is None else idle / 1024,
        "full_mb": None if full is None else full / 1024,
        "upload_peak_mb": upload_mb,
        "upload_growth_mb": (
            None if peak_before is None or peak_after is None else (peak_after - peak_before) / 1024
        ),
        "upload_statuses": float(statuses[0] * 1000 + statuses[1]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="env steps per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per env")
    parser.add_argument("--server-steps", type=int, default=4000, help="API steps per scenario")
    parser.add_argument(
        "--memory-sessions", type=int, default=1000, help="sessions of 64 steps for memory"
    )
    args = parser.parse_args(argv)

    agimaze, frozen = bench_envs(args.steps, args.rounds)
    ratio = agimaze / frozen
    print(f"AgiMaze-v0 ({LABYRINTH}, gymnasium.make): {agimaze:>10,.0f} steps/s")
    print(f"FrozenLake-v1 (gymnasium.make):                          {frozen:>10,.0f} steps/s")
    verdict = "meets" if ratio >= GOAL_RATIO else "MISSES"
    print(f"ratio AgiMaze/FrozenLake: {ratio:.2f}x ({verdict} the >= {GOAL_RATIO}x goal)")

    one, eight = bench_server(args.server_steps)
    print(f"API server over loopback, 1 client:  {one:>8,.0f} steps/s")
    print(f"API server over loopback, 8 clients: {eight:>8,.0f} steps/s ({eight / one:.2f}x)")
    print(f"server (1 client) / in-process env: {one / agimaze:.4f}x")

    traced, json_bytes = replay_bytes_per_step(args.memory_sessions)
    verdict = "meets" if traced < GOAL_BYTES_PER_STORED_STEP else "MISSES"
    print(
        f"seq replay, {args.memory_sessions} sessions x {REPLAY_WINDOW} steps: "
        f"{traced:,.0f} bytes per stored step traced ({json_bytes:,.0f} of them reply JSON; "
        f"{verdict} the < {GOAL_BYTES_PER_STORED_STEP} goal)"
    )
    memory = bench_memory(args.memory_sessions)
    if memory["full_mb"] is None:
        print("server resident memory: not measurable here (no /proc)")
        return 0
    statuses = int(memory["upload_statuses"] or 0)
    print(
        f"server while a 50 MB body is sent (chunked: HTTP {statuses // 1000}, declared: "
        f"HTTP {statuses % 1000}): peak RSS {memory['upload_peak_mb']:.1f} MB, "
        f"+{memory['upload_growth_mb']:.1f} MB over the idle peak"
    )
    full = memory["full_mb"] or 0.0
    verdict = "meets" if full < GOAL_SERVER_MB else "MISSES"
    print(
        f"server RSS: {memory['idle_mb']:.1f} MB idle, {full:.1f} MB with "
        f"{args.memory_sessions} sessions x {REPLAY_WINDOW} steps ({verdict} the "
        f"< {GOAL_SERVER_MB} MB goal)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
