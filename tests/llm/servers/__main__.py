"""Run a loopback model server that answers every protocol after a fixed latency.

    python -m tests.llm.servers --latency 0.2

prints ``listening on http://127.0.0.1:<port>`` and serves until interrupted (or until its
standard input closes, so a parent process can stop it by closing the pipe). Every request gets
a well-formed action (a tool call when the request offers a tool, JSON text otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence

from tests.llm.servers.app import LoopbackServer
from tests.llm.servers.script import RecordedRequest, Reply

ACTION = '{"move": "N", "notebook": null, "radio": null}'


def fixed_latency(latency_s: float) -> Callable[[RecordedRequest], Reply]:
    def respond(request: RecordedRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        if body.get("tools"):
            return Reply(tool_arguments=ACTION, delay_s=latency_s)
        return Reply(text=ACTION, delay_s=latency_s)

    return respond


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.llm.servers")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each reply")
    args = parser.parse_args(argv)
    server = LoopbackServer()
    server.respond_with(fixed_latency(args.latency))
    with server:
        print(f"listening on {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            sys.stdin.read()  # until the parent closes the pipe (or Ctrl-D)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
