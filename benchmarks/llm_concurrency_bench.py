"""Concurrency through the benchmark runner: Maze Escape games of LLM policies at once.

16 Maze Escape games of 3 agents (``--games``, ``--turns``) are played by ``maze_envs.bench``
all at once, so up to 48 model calls are in flight (the agents of a turn are awaited together).
``--executors`` picks where: ``inline``, every game in the runner's one event loop
(``concurrency = games``); ``process``, a process pool of ``--workers`` (2) processes, each
playing its share of the games at once in its own event loop (``--executor process --workers 2
--concurrency 8``: 16 games = 2 workers x 8). Both run by default, interleaved, so the figures
of a line are comparable. The model is a loopback server in a child
process (``python -m tests.llm.servers``) answering every request after 200 ms (``--latency``),
reached through each path's real client stack. The figure is decisions per second against the
ideal ``agents x concurrency / latency`` (240/s for 16 x 3 at 200 ms); the goal is 80% of it on
2 cores. Everything the runner does is in the time: the journal (shards, copies), rows, results.

Paths (``--only``):

* ``scripted``: an in-process backend that only sleeps (no HTTP): the runner's own ceiling;
* ``ollama``: Ollama's native ``/api/chat`` through the official client (``ollama:qwen3:8b``),
  the backends of one host sharing a pool of clients; ``ollama-unshared``: a client per policy;
* ``openai-chat``: Chat Completions through pydantic-ai and the OpenAI SDK, as
  ``--policy openai-chat:...`` builds it: the policies of one endpoint share 8 providers;
* ``openai-chat-shared``: the same with one pydantic-ai provider (one SDK client, one HTTP
  connection pool) shared by every agent of every game (``provider=``);
* ``openai-chat-unshared``: a provider of its own per policy, as backends were built before
  they shared providers (:class:`llm_policies.backends.pydantic_ai.SharedProviders`).

Each line also gives the client's CPU per decision (process time): one process cannot exceed
``1000 / cpu_ms`` decisions/s, whatever the concurrency. With the process pool it is the runner
process's CPU only (merging the workers' games into the journal), not the workers'.
``--profile`` writes a pyinstrument profile of one path, inline (``pip install pyinstrument``).
The pool's fork server preloads the model clients (:data:`CLIENT_MODULES`, appended to
``maze_envs.bench.executors.PRELOAD``), as a long run amortises their import; ``--cold-workers``
measures without (every run's workers import them again).

Usage: ``python benchmarks/llm_concurrency_bench.py [--games 16] [--turns 25] [--latency 0.2]
[--runs 3] [--only scripted,ollama,openai-chat,openai-chat-shared] [--executors inline,process]
[--workers 2] [--no-journal] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the loopback servers live with the tests
sys.path.insert(0, str(Path(__file__).resolve().parent))  # this module's policy factories

from llm_bench import ACTION, ChildServer  # noqa: E402  (after the path set-up above)

from llm_policies.backends.scripted import ScriptedReply  # noqa: E402
from llm_policies.registry import make_llm_policy  # noqa: E402
from maze_envs.bench import executors as bench_executors  # noqa: E402
from maze_envs.bench.runner import RunOptions, run_experiment  # noqa: E402
from maze_envs.bench.spec import Experiment  # noqa: E402

GOAL = 0.80
AGENTS = 3
PATHS = (
    "scripted",
    "ollama",
    "ollama-unshared",
    "openai-chat",
    "openai-chat-shared",
    "openai-chat-unshared",
)
EXECUTORS = ("inline", "process")
#: What the process pool's fork server imports once more than the runner's own list, so that
#: workers start with the model clients loaded (importing the pydantic-ai stack costs ~1.4 s of
#: CPU per worker, which a long run amortises but a 5 s benchmark run would pay each time).
CLIENT_MODULES = [
    "llm_policies.registry",
    "llm_policies.backends.pydantic_ai",
    "llm_policies.backends.ollama",
    "pydantic_ai",
    "openai",
    "ollama",
    "llm_concurrency_bench",
]
_SHARED: dict[str, Any] = {}


def scripted_policy(latency: float = 0.2) -> Any:
    """A Maze Escape LLM policy whose model only sleeps ``latency`` (an import-path factory)."""
    delayed = ScriptedReply(
        tool_arguments=ACTION, input_tokens=1200, output_tokens=18, delay_s=latency
    )
    return make_llm_policy("scripted:sleep", "escape", client=lambda request: delayed)


def shared_provider_policy(base_url: str, retries: int = 4) -> Any:
    """An ``openai-chat`` policy sending through one provider shared by every policy made here."""
    from llm_policies.backends.pydantic_ai import build_provider

    provider = _SHARED.get(base_url)
    if provider is None:
        provider = _SHARED[base_url] = build_provider("openai-chat", base_url)
    return make_llm_policy("openai-chat:gpt-4o-mini", "escape", provider=provider, retries=retries)


def unshared_provider_policy(base_url: str, retries: int = 4) -> Any:
    """An ``openai-chat`` policy with a provider of its own (how backends were built before they
    shared one: a new SDK client, HTTP client and TLS context per agent per game)."""
    from llm_policies.backends.pydantic_ai import build_provider

    provider = build_provider("openai-chat", base_url)
    return make_llm_policy("openai-chat:gpt-4o-mini", "escape", provider=provider, retries=retries)


def unshared_ollama_policy(base_url: str, retries: int = 4) -> Any:
    """An ``ollama`` policy with a client of its own (as before backends shared client pools)."""
    import ollama

    client = ollama.AsyncClient(host=base_url)
    return make_llm_policy("ollama:qwen3:8b", "escape", client=client, retries=retries)


def policy_spec(path: str, url: str, latency: float, retries: int) -> str:
    if path == "scripted":
        return f"llm_concurrency_bench:scripted_policy:latency={latency}"
    if path == "ollama":
        return f"ollama:qwen3:8b:base_url={url},retries={retries}"
    if path == "ollama-unshared":
        return f"llm_concurrency_bench:unshared_ollama_policy:base_url={url},retries={retries}"
    if path == "openai-chat":
        return f"openai-chat:gpt-4o-mini:base_url={url}/v1,retries={retries}"
    if path == "openai-chat-shared":
        return f"llm_concurrency_bench:shared_provider_policy:base_url={url}/v1,retries={retries}"
    if path == "openai-chat-unshared":
        return f"llm_concurrency_bench:unshared_provider_policy:base_url={url}/v1,retries={retries}"
    raise ValueError(f"unknown path {path!r}; choose from {', '.join(PATHS)}")


def experiment(spec: str, games: int, turns: int, size: int) -> Experiment:
    return Experiment.model_validate(
        {
            "name": "llm concurrency",
            "seeds": f"0-{games - 1}",
            "escape": [
                {"preset": "navigator", "sizes": [size], "max_turns": turns, "policies": [spec]}
            ],
        }
    )


def machine_busy() -> float:
    """Seconds of CPU every process of the machine has used (Linux ``/proc/stat``; 0 elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    idle = int(fields[3]) + int(fields[4])
    return (sum(int(f) for f in fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def measure(
    path: str,
    url: str,
    args: argparse.Namespace,
    out: Path,
    profile: bool = False,
    games: int | None = None,
    turns: int | None = None,
    executor: str = "inline",
) -> dict[str, Any]:
    spec = policy_spec(path, url, args.latency, args.retries)
    games = games or args.games
    exp = experiment(spec, games, turns or args.turns, args.size)
    workers = args.workers if executor == "process" else None
    options = RunOptions(
        executor=executor,
        workers=workers,
        concurrency=games if workers is None else -(-games // workers),  # per worker
        fresh=True,
        journal=not args.no_journal,
        verify=False,
        plots=False,
        quiet=True,
    )
    profiler = None
    if profile:
        try:
            from pyinstrument import Profiler  # type: ignore[import-not-found]
        except ImportError:
            raise SystemExit("--profile needs pyinstrument: pip install pyinstrument") from None

        profiler = Profiler(async_mode="enabled")
        profiler.start()
    busy0 = machine_busy()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = run_experiment(exp, out, options)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    busy = machine_busy() - busy0
    if profiler is not None:
        profiler.stop()
        target = Path.cwd() / f"profile-{path}.txt"
        target.write_text(profiler.output_text(unicode=False, color=False))
        print(f"profile written to {target}", file=sys.stderr)
    decisions = sum(int(r.get("decisions") or 0) for r in result.rows)
    bad = [r for r in result.rows if r.get("status") != "ok"]
    if bad:
        raise RuntimeError(f"{path}: {len(bad)} games did not end ok: {bad[0].get('error')}")
    ideal = AGENTS * games / args.latency
    return {
        "path": path,
        "executor": executor if workers is None else f"{executor} x{workers}",
        "decisions": decisions,
        "wall_s": wall,
        "per_s": decisions / wall,
        "share": decisions / wall / ideal,
        "cpu_ms": 1000 * cpu / decisions,
        "outages": sum(int(r.get("outages") or 0) for r in result.rows),
        "machine_busy": busy / wall / (os.cpu_count() or 1),  # every process, ours or not
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/llm_concurrency_bench.py")
    parser.add_argument("--games", type=int, default=16, help="games at once (concurrency)")
    parser.add_argument("--turns", type=int, default=25, help="turns per game")
    parser.add_argument("--size", type=int, default=9, help="maze size")
    parser.add_argument("--latency", type=float, default=0.2, help="model latency in seconds")
    parser.add_argument("--runs", type=int, default=3, help="runs of each path (interleaved)")
    parser.add_argument("--retries", type=int, default=4, help="retries of each model call")
    parser.add_argument("--only", default=",".join(PATHS), help="comma-separated paths")
    parser.add_argument(
        "--executors", default=",".join(EXECUTORS), help="comma-separated: inline, process"
    )
    parser.add_argument("--workers", type=int, default=2, help="process pool size")
    parser.add_argument(
        "--cold-workers",
        action="store_true",
        help="do not preload the model clients in the pool's fork server",
    )
    parser.add_argument("--no-journal", action="store_true", help="play without the journal")
    parser.add_argument("--profile", metavar="PATH", help="write a pyinstrument profile of PATH")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    paths = [p.strip() for p in args.only.split(",") if p.strip()]
    for path in paths:
        policy_spec(path, "http://x", args.latency, args.retries)  # validates the names
    executors = [e.strip() for e in args.executors.split(",") if e.strip()]
    for executor in executors:
        if executor not in EXECUTORS:
            parser.error(f"unknown executor {executor!r}; choose from {', '.join(EXECUTORS)}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    lines = [(path, executor) for path in paths for executor in executors]
    os.environ.setdefault("OPENAI_API_KEY", "loopback-key")
    ideal = AGENTS * args.games / args.latency
    results: dict[str, list[dict[str, Any]]] = {f"{p} @{e}": [] for p, e in lines}
    if not args.cold_workers:
        bench_executors.PRELOAD.extend(
            m for m in CLIENT_MODULES if m not in bench_executors.PRELOAD
        )
    with ChildServer(args.latency) as server, tempfile.TemporaryDirectory() as tmp:
        for path, executor in lines:  # warm-up: imports, first connections (not timed)
            out = Path(tmp) / f"warm-{path}-{executor}"
            measure(path, server.url, args, out, games=2, turns=2, executor=executor)
        for run in range(args.runs):
            for path, executor in lines:
                out = Path(tmp) / f"{path}-{executor}-{run}"
                profile = args.profile == path and run == args.runs - 1 and executor == "inline"
                results[f"{path} @{executor}"].append(
                    measure(path, server.url, args, out, profile, executor=executor)
                )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if args.json:
        print(json.dumps({"ideal_per_s": ideal, "load": load, "results": results}, indent=2))
        return 0
    print(
        f"{args.games} games x {AGENTS} agents x {args.turns} turns, latency "
        f"{args.latency * 1000:.0f} ms, ideal {ideal:.0f} decisions/s, goal {GOAL:.0%}; "
        f"journal {'off' if args.no_journal else 'on'}; {os.cpu_count()} cores, load {load:.1f}"
    )
    print(
        f"{'path @executor':<30} {'decisions/s (runs)':<22} {'of ideal':<12} "
        "runner CPU/decision   cores busy"
    )
    for path, runs in results.items():
        rates = [r["per_s"] for r in runs]
        shares = [r["share"] for r in runs]
        cpu = [r["cpu_ms"] for r in runs]
        label = f"{path.split(' @')[0]} @{runs[0]['executor']}" if runs else path
        print(
            f"{label:<30} {', '.join(f'{x:.0f}' for x in rates):<22} "
            f"{min(shares):.0%}-{max(shares):.0%}{'':<4} "
            f"{statistics.median(cpu):.2f} ms (median)     "
            f"{statistics.median(r['machine_busy'] for r in runs):.0%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
