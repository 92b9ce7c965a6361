"""The offline AGI Maze server under a public client's whole benchmark, and its memory ceiling.

Everything runs against ``maze-envs agimaze serve`` with its default limits (1,000 sessions,
one-hour TTL) in a subprocess on 127.0.0.1:

1. **Public benchmark, sequential**: the public benchmark runner's shape, ``--per-stage``
   episodes (default 50) on each of the 24 TRAINING stages (1,200 episodes), a uniform random
   agent (the public ``demo_random_agent``: ``seq`` 1, 2, 3, ...) playing each episode to its
   end, a win or ``max_steps`` steps, and never ending a session (the public API has no call
   for it). One standard-library ``urllib`` request per call, as the public agents make them.
   Reported: errors (goal 0), HTTP 503s, requests, the pooled success rate, the server's RSS.
2. **Public benchmark, 16 clients in parallel**: the same 1,200 episodes shared by 16 threads.
2b. **Public runner stopping every episode early** (issue 23): the public benchmark runner with
   ``--max-steps 1`` (``--abandon``, default 2,000 episodes): each episode starts a session,
   takes one step and is left unfinished, sequentially, as ``demo_bench_runner.py`` runs the
   random agent. A full server evicts the least recently used unfinished session idle past
   ``--idle-evict`` (1 s); reported: starts refused (goal 0), errors, episodes per second.
3. **Memory** (in process, ``tracemalloc``): bytes held per live session after 64 steps on the
   largest shipped board (CLASSIC/HARD 10x10; the replay window is 64 replies), and per retired
   session (an evicted finished one: its last replies and snapshot).
4. **Ceiling of the default limits**: the RSS of a server holding 1,000 unfinished sessions of
   64 steps on the 10x10 board, 1,000 retired sessions of that board, one compiled board per
   shipped bundle (about half of the 1,024-board cache) and the records of the sessions that
   are gone (10,000 at most). It also checks that the 1,001st unfinished start gets 503
   ``server_full`` while every unfinished session is in play (run with ``--idle-evict`` as long
   as the TTL: filling the server takes longer than the default idle limit) and that all 1,000
   unfinished sessions survive it.

Run: ``python benchmarks/agimaze_server_bench.py [--per-stage 50] [--clients 16] [--abandon 2000]
[--only public|abandon|memory]`` (the public runs are about 180,000 requests each: several
minutes on a small machine; the abandoning runner about 4,000 requests).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import threading
import time
import tracemalloc
import urllib.error
import urllib.request
from typing import Any

import numpy as np
from agimaze_bench import memory_kib, server_process  # the sibling script (run from here)

from maze_envs.agimaze.api.client import AgiMazeAPIError, AgiMazeClient
from maze_envs.agimaze.api.service import AgiMazeService, GameSession
from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from maze_envs.agimaze.planner import solve

STAGES = [
    f"TRAINING/{f}/STAGE-{s:02d}"
    for f in ("S0-keys", "S1-rivers", "S2-pits", "S3-full")
    for s in range(1, 7)
]
LARGEST = "CLASSIC/HARD/keys/10x10"
WINDOW = 64
DEFAULT_SESSIONS = 1000


# -- a public client: urllib, one request per call, the body kept on HTTP errors --------------


def post_json(url: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            return int(reply.status), json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), json.loads(exc.read())


class Tally:
    """Counts shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.episodes = self.errors = self.full = self.requests = self.solved = 0
        self.first_error = ""

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)


def random_episode(base: str, path: str, rng: np.random.Generator, tally: Tally) -> None:
    """One episode of the public random agent, to its end; errors counted, never raised."""
    status, start = post_json(
        f"{base}/api/start",
        {"path": path, "seed": int(rng.integers(1 << 30)), "client": "api", "agent": "random"},
    )
    requests = 1
    if status != 200:
        tally.add(episodes=1, errors=1, full=int(status == 503), requests=requests)
        tally.first_error = tally.first_error or f"start: {status} {start}"
        return
    actions, budget = start["actions"], start["task_meta"]["max_steps"] or 50
    done = False
    for seq in range(1, budget + 1):
        action = actions[int(rng.integers(len(actions)))]
        status, out = post_json(
            f"{base}/api/step", {"id": start["id"], "action": action, "seq": seq}
        )
        requests += 1
        if status != 200:
            tally.add(episodes=1, errors=1, full=int(status == 503), requests=requests)
            tally.first_error = tally.first_error or f"step: {status} {out}"
            return
        if out["done"]:
            done = True
            break
    tally.add(episodes=1, requests=requests, solved=int(done))


def public_benchmark(per_stage: int, clients: int, seed: int) -> dict[str, Any]:
    """The 24 TRAINING stages x ``per_stage`` episodes over ``clients`` threads."""
    jobs = [stage for stage in STAGES for _ in range(per_stage)]
    tally = Tally()
    with server_process() as (base, pid):
        shares = [jobs[i::clients] for i in range(clients)]

        def run(index: int) -> None:
            rng = np.random.default_rng([seed, index])
            for path in shares[index]:
                random_episode(base, path, rng, tally)

        began = time.perf_counter()
        threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - began
        rss = memory_kib(pid, "VmRSS")
        peak = memory_kib(pid, "VmHWM")
    return {
        "episodes": tally.episodes,
        "errors": tally.errors,
        "server_full": tally.full,
        "requests": tally.requests,
        "success": tally.solved / max(1, tally.episodes),
        "seconds": elapsed,
        "rss_mb": None if rss is None else rss / 1024,
        "peak_mb": None if peak is None else peak / 1024,
        "first_error": tally.first_error,
    }


def abandoning_runner(episodes: int, max_steps: int, seed: int) -> dict[str, Any]:
    """The public runner with ``--max-steps``: every episode stopped after ``max_steps`` steps,
    its session left unfinished, against a server with the default limits."""
    tally = Tally()
    rng = np.random.default_rng(seed)
    first_refusal = None
    with server_process() as (base, _):
        began = time.perf_counter()
        for n in range(episodes):
            path = STAGES[n % len(STAGES)]
            status, start = post_json(
                f"{base}/api/start",
                {"path": path, "seed": None, "client": "api", "agent": "random"},
            )
            if status != 200:
                tally.add(episodes=1, errors=1, full=int(status == 503), requests=1)
                tally.first_error = tally.first_error or f"start: {status} {start}"
                first_refusal = first_refusal if first_refusal is not None else n + 1
                continue
            failed = 0
            for seq in range(1, max_steps + 1):
                action = start["actions"][int(rng.integers(len(start["actions"])))]
                status, out = post_json(
                    f"{base}/api/step", {"id": start["id"], "action": action, "seq": seq}
                )
                if status != 200:
                    failed = 1
                    tally.first_error = tally.first_error or f"step: {status} {out}"
                    break
            tally.add(episodes=1, errors=failed, requests=1 + max_steps)
        elapsed = time.perf_counter() - began
    return {
        "episodes": tally.episodes,
        "refused": tally.full,
        "errors": tally.errors,
        "first_refusal": first_refusal,
        "seconds": elapsed,
        "first_error": tally.first_error,
    }


def gone_record_bytes(records: int = 10_000) -> float:
    """Bytes per remembered gone session (what a 404 reads to say what happened)."""
    from maze_envs.agimaze.api.sessions import SessionStore

    now = [0.0]
    store: SessionStore[int] = SessionStore(max_sessions=1, clock=lambda: now[0], max_gone=records)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for n in range(records + 1):  # each start evicts the one before, idle past the limit
        now[0] += 2.0
        store.add(n)
    gc.collect()
    held = (tracemalloc.get_traced_memory()[0] - before) / records
    tracemalloc.stop()
    return held


# -- memory -------------------------------------------------------------------------------------


def _start(service: AgiMazeService, path: str, seed: int = 0) -> str:
    raw = json.dumps({"path": path, "seed": seed, "agent": "bench"}).encode()
    status, body = service.start(raw)
    if status != 200:
        raise RuntimeError(f"start {path}: {status} {body}")
    return str(body["id"])


def _steps(service: AgiMazeService, sid: str, actions: list[str], first_seq: int = 1) -> None:
    for seq, action in enumerate(actions, first_seq):
        raw = json.dumps({"id": sid, "action": action, "seq": seq}).encode()
        status, body = service.step(raw)
        if status != 200:
            raise RuntimeError(f"step {seq}: {status} {body}")


def wandering(count: int, seed: int) -> list[str]:
    """``count`` moves that wander (every reply differs in position and text)."""
    moves = ("up", "left", "down", "right")
    rng = np.random.default_rng(seed)
    return [moves[int(i)] for i in rng.integers(4, size=count)]


def winning_plan(path: str) -> list[str]:
    plan = solve(resolve_pack_path(path)[1].labyrinth)
    if plan is None:
        raise RuntimeError(f"{path} cannot be won")
    return plan


def per_session_bytes(sessions: int) -> tuple[float, float]:
    """(bytes per live session after 64 steps, bytes per retired stand-in), 10x10 board."""
    path = list_bundles(LARGEST + "/")[0]
    service = AgiMazeService(max_sessions=2 * sessions + 1)
    _start(service, path)  # board compiled and cached before measuring
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    live = [_start(service, path) for _ in range(sessions)]
    for n, sid in enumerate(live):
        _steps(service, sid, wandering(WINDOW, n))
    gc.collect()
    live_bytes = (tracemalloc.get_traced_memory()[0] - before) / sessions
    tracemalloc.stop()
    plan = winning_plan(path)
    won = [_start(service, path, seed=n) for n in range(sessions)]
    for sid in won:
        _steps(service, sid, plan)
    games = [g for g in map(service.sessions.get, won) if isinstance(g, GameSession)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    stand_ins = [game.retire() for game in games]  # what eviction keeps of each
    gc.collect()
    retired_bytes = (tracemalloc.get_traced_memory()[0] - before) / len(stand_ins)
    tracemalloc.stop()
    return live_bytes, retired_bytes


def ceiling(sessions: int) -> dict[str, Any]:
    """RSS of a server at the default limits' worst case (see the module docstring)."""
    path = list_bundles(LARGEST + "/")[0]
    plan = winning_plan(path)
    # every unfinished session counts as in play: filling the server takes minutes, far longer
    # than the default idle limit, after which the 1,001st start would evict the oldest
    options = ("--max-sessions", str(sessions), "--idle-evict", "3600")
    with server_process(*options) as (base, pid):
        client = AgiMazeClient(base, timeout=120, retries=0)
        idle = memory_kib(pid, "VmRSS")

        def play(name: str, actions: list[str]) -> str:
            sid = str(client.start(name, seed=0, agent="bench")["id"])
            for seq, action in enumerate(actions, 1):
                client.step(sid, action, seq)
            return sid

        for name in list_bundles():  # one compiled board per shipped bundle, each game won
            play(name, winning_plan(name))
        won = [play(path, plan) for _ in range(sessions)]  # to be retired
        playing = [play(path, wandering(WINDOW, n)) for n in range(sessions)]  # evict the won
        full = memory_kib(pid, "VmRSS")
        try:
            client.start(path, agent="late")
            refused: tuple[Any, ...] = (200,)
        except AgiMazeAPIError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            refused = (exc.status, body.get("error"), body.get("unfinished"))
        survivors = sum(
            client.step(sid, "up", WINDOW + 1).get("text") is not None for sid in playing
        )
        resends = sum(client.step(sid, plan[-1], len(plan))["done"] is True for sid in won)
        client.close()
    return {
        "idle_mb": None if idle is None else idle / 1024,
        "full_mb": None if full is None else full / 1024,
        "refused": refused,
        "survivors": survivors,
        "resends": resends,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-stage", type=int, default=50, help="episodes per TRAINING stage")
    parser.add_argument("--clients", type=int, default=16, help="parallel clients of run 2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-public", action="store_true", help="only the memory figures")
    parser.add_argument(
        "--abandon", type=int, default=2000, help="episodes of the runner stopping each early"
    )
    parser.add_argument("--max-steps", type=int, default=1, help="its steps per episode")
    parser.add_argument(
        "--only", choices=("public", "abandon", "memory"), help="run only this part"
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=DEFAULT_SESSIONS,
        help="sessions of the memory runs (the server's default limit; smaller for a smoke run)",
    )
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    failed = False
    wanted = {args.only} if args.only else {"public", "abandon", "memory"}
    if args.skip_public:
        wanted -= {"public"}
    if "public" in wanted:
        for clients in (1, args.clients):
            run = public_benchmark(args.per_stage, clients, args.seed)
            failed |= run["errors"] > 0
            print(
                f"public benchmark, {clients} client(s): {run['episodes']} episodes, "
                f"{run['requests']:,} requests in {run['seconds']:.0f} s, {run['errors']} errors "
                f"({run['server_full']} HTTP 503), success {run['success']:.2%}, server RSS "
                f"{run['rss_mb']:.1f} MB (peak {run['peak_mb']:.1f} MB)"
            )
            if run["first_error"]:
                print(f"  first error: {run['first_error']}")
    if "abandon" in wanted:
        run = abandoning_runner(args.abandon, args.max_steps, args.seed)
        failed |= run["refused"] > 0 or run["errors"] > 0
        print(
            f"public runner with --max-steps {args.max_steps}, default server: "
            f"{run['episodes']} episodes in {run['seconds']:.1f} s "
            f"({run['episodes'] / run['seconds']:.0f}/s), {run['refused']} starts refused "
            f"(first at episode {run['first_refusal']}), {run['errors']} errors; load "
            f"{os.getloadavg()[0]:.1f}"
        )
        if run["first_error"]:
            print(f"  first error: {run['first_error']}")
    if "memory" not in wanted:
        print(f"load average at end: {os.getloadavg()[0]:.1f}")
        return 1 if failed else 0
    print(f"per gone session remembered (404 reasons): {gone_record_bytes():.0f} bytes")
    live, retired = per_session_bytes(args.sessions)
    print(
        f"per session on {LARGEST} (tracemalloc): {live / 1024:.1f} KiB live after {WINDOW} "
        f"steps, {retired / 1024:.1f} KiB retired"
    )
    top = ceiling(args.sessions)
    print(
        f"ceiling of the defaults: server RSS {top['idle_mb']:.1f} MB idle, {top['full_mb']:.1f} "
        f"MB with {args.sessions} unfinished x {WINDOW} steps + {args.sessions} retired "
        f"+ {len(list_bundles())} boards; the next start got {top['refused']}; "
        f"{top['survivors']}/{args.sessions} unfinished sessions still played; "
        f"{top['resends']}/{args.sessions} retired final steps resent"
    )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
