"""Play AGI Maze over the HTTP API against the offline server (or any server: pass its URL).

Starts ``maze-envs agimaze serve`` on a free loopback port unless a base URL is given, then runs
the same Gymnasium environment on an HTTP backend: ``backend=HttpBackend(base_url, ...)``, whose
options (deadline, retries, agent name) belong to the backend, not to the game.

Run: ``.venv/bin/python examples/agimaze_http.py [BASE_URL]``
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import gymnasium as gym

import maze_envs  # noqa: F401  (registers the environments)
from maze_envs.agimaze.api import AgiMazeClient, AgiMazeConnectionError, HttpBackend

PATH = "TRAINING/S0-keys/STAGE-01/0005.json"


def start_local_server() -> tuple[str, subprocess.Popen[bytes]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "maze_envs.cli", "agimaze", "serve", "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            AgiMazeClient(base_url, retries=0).description()
            return base_url, server
        except AgiMazeConnectionError:
            time.sleep(0.1)
    server.terminate()
    raise RuntimeError("the local server did not start")


def main() -> None:
    server = None
    if len(sys.argv) > 1:
        base_url = sys.argv[1]
    else:
        base_url, server = start_local_server()
    try:
        backend = HttpBackend(base_url, agent="example", timeout=10.0, retries=2)
        env = gym.make("maze_envs/AgiMaze-v0", path=PATH, backend=backend)
        obs, info = env.reset(seed=0)
        print(f"{PATH}: actions {env.unwrapped.action_names}, max_steps {info['max_steps']}")
        print(obs["text"])
        for _ in range(10):
            obs, _, terminated, truncated, info = env.step(env.action_space.sample())
            print(f"  {obs['text']}  inventory={obs['inventory']}")
            if terminated or truncated:
                break
        env.close()
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
