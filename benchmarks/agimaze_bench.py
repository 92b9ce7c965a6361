"""AGI Maze throughput: AgiMaze-v0 against FrozenLake-v1, and the offline API server.

Measured in one run, so machine noise hits both sides of each ratio alike:

1. ``AgiMaze-v0`` steps per second through ``gymnasium.make`` (default wrappers included) on a
   TRAINING 5x5 labyrinth with uniform random actions, against ``FrozenLake-v1`` through
   ``gymnasium.make`` (the floor of a Python environment). Goal: ratio >= 0.5.
   Rounds alternate between the two and the best round of each counts.
2. ``maze-envs agimaze serve`` in a subprocess on 127.0.0.1: steps per second over loopback
   with one client, and with eight concurrent clients (threads, one session each, keep-alive).

Run: ``.venv/bin/python benchmarks/agimaze_bench.py [--steps N] [--server-steps N]``.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.client import AgiMazeClient, AgiMazeConnectionError

LABYRINTH = "TRAINING/S1-rivers/STAGE-06/0000.json"
GOAL_RATIO = 0.5


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


def bench_server(total_steps: int) -> tuple[float, float]:
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "import sys; from maze_envs.agimaze.server import main; sys.exit(main(sys.argv[1:]))",
        "--port",
        str(port),
        "--log-level",
        "error",
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base_url)
        server_rate(base_url, 1, 50)  # warm-up
        one = server_rate(base_url, 1, total_steps)
        eight = server_rate(base_url, 8, max(1, total_steps // 8))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return one, eight


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="env steps per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per env")
    parser.add_argument("--server-steps", type=int, default=4000, help="API steps per scenario")
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
