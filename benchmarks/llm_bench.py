"""LLM backend throughput: decisions per second with many requests in flight.

A loopback model server (``python -m tests.llm.servers``, in a child process so it does not share
this process's GIL, as a real model server would not) answers every request after a fixed latency
(200 ms). For each backend path, ``--concurrency`` workers (48) each send ``--requests`` requests
(one decision each) back to back, through the real client stack (pydantic-ai and the provider SDK,
or the ``ollama`` client) including the retry loop and pricing. The figure is decisions per second
against the ideal ``concurrency / latency``: the goal is at least 80% of it on 2 cores.

Paths: ``openai-chat`` (Chat Completions, what OpenAI-compatible servers speak), ``openai``
(Responses), ``anthropic`` (Messages, output capped so the reply is not streamed), ``ollama``
(native ``/api/chat``), and ``scripted`` (an in-process backend that only sleeps: the ceiling of
the asyncio side, no HTTP). A warm-up round opens the connections before timing.

Each row also gives the client's CPU time per decision (process time, so it holds on a busy
machine): one process cannot exceed ``1000 / cpu_ms`` decisions/s, whatever the concurrency.
``--processes 2`` splits the workers over two client processes (as the runner's process pool
does on 2 cores) started together; their decisions are summed over the longest of their timed
spans.

Usage: ``python benchmarks/llm_bench.py [--concurrency 48] [--requests 6] [--latency 0.2]
[--processes 1] [--only openai-chat,ollama] [--in-process] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the loopback servers live with the tests

from llm_policies.backends import (  # noqa: E402  (after the path set-up above)
    ChatMessage,
    ModelBackend,
    ModelRequest,
    ScriptedBackend,
    ScriptedReply,
    make_backend,
)
from llm_policies.settings import ModelSettings, OutputMode  # noqa: E402

GOAL = 0.80
ACTION = '{"move": "N", "notebook": null, "radio": null}'
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "move": {"type": "string", "enum": ["N", "E", "S", "W", "STAY"]},
        "notebook": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "radio": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["move", "notebook", "radio"],
}
# a prompt of realistic size: ~4 KB of stable rules and ~1 KB of observation
SYSTEM = "Rules of the maze. " * 200
OBSERVATION = "Turn {n}. N open, E interior wall, S open, W outer brick. Notebook: ... " * 12

PATHS = {
    "openai-chat": ("openai-chat:gpt-4o-mini", "openai"),
    "openai": ("openai:gpt-4o-mini", "openai"),
    "anthropic": ("anthropic:claude-haiku-4-5", "anthropic"),
    "ollama": ("ollama:qwen3:8b", "ollama"),
    "scripted": ("scripted:sleep", None),
}


class ChildServer(AbstractContextManager["ChildServer"]):
    """The loopback server in a child process; stopped by closing its standard input."""

    def __init__(self, latency: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.llm.servers", "--latency", str(latency)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"the loopback server did not start: {line!r}")
        self.url = line.removeprefix("listening on ")

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (Linux ``/proc``; 0 elsewhere)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


class InProcessServer(AbstractContextManager["InProcessServer"]):
    """The loopback server in a thread of this process (shares the GIL: a pessimistic figure)."""

    def __init__(self, latency: float) -> None:
        from tests.llm.servers.__main__ import fixed_latency
        from tests.llm.servers.app import LoopbackServer

        self.server = LoopbackServer()
        self.server.respond_with(fixed_latency(latency))
        self.server.start()
        self.url = self.server.url

    def cpu_seconds(self) -> float:
        return 0.0  # shared with the client: not separable

    def __exit__(self, *exc: object) -> None:
        self.server.stop()


def make(path: str, url: str, latency: float) -> ModelBackend:
    spec, flavour = PATHS[path]
    if flavour is None:
        return ScriptedBackend(
            lambda request: ScriptedReply(tool_arguments=ACTION, delay_s=latency), spec=spec
        )
    base_url = f"{url}/v1" if flavour == "openai" else url
    return make_backend(spec, ModelSettings(base_url=base_url, max_output_tokens=200))


def request_for(path: str, n: int) -> ModelRequest:
    mode: OutputMode = "native" if path == "ollama" else "tool"
    return ModelRequest(
        system=SYSTEM,
        messages=(ChatMessage("user", OBSERVATION.format(n=n)),),
        output_mode=mode,
        schema=SCHEMA,
        schema_name="maze_action",
        settings=ModelSettings(max_output_tokens=200),
    )


async def measure(
    path: str,
    url: str,
    concurrency: int,
    per_worker: int,
    latency: float,
    barrier: Any = None,
) -> dict[str, Any]:
    """Decisions per second of ``concurrency`` closed-loop workers on one backend.

    ``barrier`` (a ``multiprocessing.Barrier``) lines up the timed spans of several processes.
    """
    backend = make(path, url, latency)
    latencies: list[float] = []

    async def worker(w: int, count: int, record: bool) -> None:
        for i in range(count):
            started = time.perf_counter()
            reply = await backend.complete(request_for(path, w * 1000 + i))
            if reply.tool_arguments is None and reply.text is None:
                raise RuntimeError(f"{path}: an empty reply")
            if record:
                latencies.append(time.perf_counter() - started)

    try:
        await asyncio.gather(*(worker(w, 1, False) for w in range(concurrency)))  # warm-up
        if barrier is not None:
            await asyncio.to_thread(barrier.wait)
        started, cpu_started = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker(w, per_worker, True) for w in range(concurrency)))
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    finally:
        await backend.aclose()
    return summary(path, concurrency, concurrency * per_worker, elapsed, cpu, latencies, latency)


def summary(
    path: str,
    concurrency: int,
    decisions: int,
    elapsed: float,
    cpu: float,
    latencies: list[float],
    latency: float,
) -> dict[str, Any]:
    """One row of results."""
    rate = decisions / elapsed
    ideal = concurrency / latency
    quantiles = statistics.quantiles(latencies, n=20)
    return {
        "path": path,
        "spec": PATHS[path][0],
        "concurrency": concurrency,
        "decisions": decisions,
        "seconds": round(elapsed, 3),
        "decisions_per_s": round(rate, 1),
        "ideal_per_s": round(ideal, 1),
        "ratio": round(rate / ideal, 3),
        "goal_met": rate / ideal >= GOAL,
        "cpu_ms_per_decision": round(cpu / decisions * 1000, 2),
        "latency_p50_ms": round(statistics.median(latencies) * 1000, 1),
        "latency_p95_ms": round(quantiles[18] * 1000, 1),
        "latencies": latencies,
    }


def _child(
    path: str, url: str, workers: int, per_worker: int, latency: float, barrier: Any, queue: Any
) -> None:
    result = asyncio.run(measure(path, url, workers, per_worker, latency, barrier))
    queue.put(result)


def measure_processes(
    path: str, url: str, concurrency: int, per_worker: int, latency: float, processes: int
) -> dict[str, Any]:
    """:func:`measure` with the workers split over ``processes`` client processes."""
    if processes == 1:
        return asyncio.run(measure(path, url, concurrency, per_worker, latency))
    context = multiprocessing.get_context("spawn")
    barrier, queue = context.Barrier(processes), context.Queue()
    shares = [concurrency // processes + (i < concurrency % processes) for i in range(processes)]
    children = [
        context.Process(target=_child, args=(path, url, n, per_worker, latency, barrier, queue))
        for n in shares
    ]
    for child in children:
        child.start()
    parts = [queue.get(timeout=600) for _ in children]
    for child in children:
        child.join()
    decisions = sum(p["decisions"] for p in parts)
    elapsed = max(p["seconds"] for p in parts)
    cpu = sum(p["cpu_ms_per_decision"] * p["decisions"] for p in parts) / 1000
    latencies = [x for p in parts for x in p["latencies"]]
    row = summary(path, concurrency, decisions, elapsed, cpu, latencies, latency)
    row["processes"] = processes
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=48)
    parser.add_argument("--requests", type=int, default=6, help="decisions per worker (timed)")
    parser.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    parser.add_argument("--only", default=",".join(PATHS), help="comma-separated paths")
    parser.add_argument("--processes", type=int, default=1, help="client processes")
    parser.add_argument("--in-process", action="store_true", help="serve from a thread here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    paths = [p for p in args.only.split(",") if p]
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        parser.error(f"unknown path(s) {', '.join(unknown)}; choose from {', '.join(PATHS)}")
    server_cls = InProcessServer if args.in_process else ChildServer
    results = []
    with server_cls(args.latency) as server:
        for path in paths:
            server_cpu = server.cpu_seconds()
            row = measure_processes(
                path, server.url, args.concurrency, args.requests, args.latency, args.processes
            )
            # the server's CPU per request, warm-up included (is the peer the bottleneck?)
            served = row["decisions"] + args.concurrency
            row["server_cpu_ms_per_request"] = round(
                (server.cpu_seconds() - server_cpu) / served * 1000, 2
            )
            row.pop("latencies")
            results.append(row)
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"load_average": load, "results": results}, indent=2))
        return 0
    print(
        f"{args.concurrency} in flight over {args.processes} client process(es), server latency "
        f"{args.latency * 1000:.0f} ms, ideal {args.concurrency / args.latency:.0f} decisions/s, "
        f"goal >= {GOAL:.0%}; load average {load[0]:.2f} on {os.cpu_count()} cores"
    )
    print(
        f"{'path':<12} {'decisions/s':>12} {'ratio':>7} {'cpu ms/dec':>11} {'server ms':>10} "
        f"{'p50 ms':>8} {'p95 ms':>8}  goal"
    )
    for r in results:
        print(
            f"{r['path']:<12} {r['decisions_per_s']:>12.1f} {r['ratio']:>7.1%} "
            f"{r['cpu_ms_per_decision']:>11.2f} {r['server_cpu_ms_per_request']:>10.2f} "
            f"{r['latency_p50_ms']:>8.1f} {r['latency_p95_ms']:>8.1f}  "
            f"{'met' if r['goal_met'] else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
