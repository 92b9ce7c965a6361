"""The journal's costs, in one run: size per turn, journal on / off, per-turn parts, verify, blobs.

* **bytes per journaled turn**: the journal file (after ``close``) of :data:`SIZE_GAMES` whole
  games of each Maze Escape workload, less the pages of an empty journal (the schema, the game
  headers' page), divided by the turns it holds:

  - ``navigator, notes``: Maze Escape v1, preset ``navigator``, 17x17, 3 agents, 600 turns,
    random moves, every agent appends a ~70-byte note to its rolling-log notebook every turn
    (the notebooks reach their 8 KiB cap near turn 115 and drop their oldest lines from then
    on) and radios a ~60-byte message whenever the cooldown allows;
  - ``full, splices``: ``escape_bench.py``'s workload (v0, preset ``full``, 17x17, random moves,
    short notes spliced in at the front, some rejected deletions, radio);

  and what a turn stores (its four parts before compression, its compressed body, its two
  hashes);
* **journal on / off**: turns per second with the journal (default ``durability="batch"``)
  and without, for both workloads, in *rounds*: each round times one window of each runner back
  to back (the order alternating), and the ratio is computed within the round; the run prints
  the median ratio and the range over rounds, with the machine's load average; for the default
  (turns stored as what changed, with Maze Escape's change hints) and for
  ``Journal(changes=False)`` (every turn stored whole, a stream of its own);
* per-turn parts of ``record_turn`` on pre-played rows (encoding, hashing, the rest);
* AGI Maze steps per second with the journal off and on (both storage modes), by rounds (random
  actions on a TRAINING bundle);
* ``maze-envs verify`` replay speed, turns per second, for both environments;
* blobs: bytes stored per decision record that carries a 4 KiB prompt prefix, with and without
  :class:`~maze_envs.journal.Blob`.

``--profile`` instead runs one journaled ``navigator, notes`` game under cProfile and prints the
top entries by own time (what benchmarks/README.md shows before and after schema version 4).

``--verify JOURNAL`` instead times ``maze-envs verify`` of that journal (every game replayed, every
observation compared byte for byte), as the command does by default (a worker process per core,
up to 4, for more than 50 games; the CPU time printed is then the driver's only) or with
``--verify-workers N`` (1: one process, whose CPU time is then all of it): the main job's
journal is the goal's.

``--analyze N`` instead measures ``maze-envs analyze`` in one process on a journal of ``N``
Maze Escape games of 120 turns (``viewer_bench.py``'s games: 11x11, ``full``, random moves, notes
and radio; built once into ``--games-file`` when given): the CPU and wall time of the analysis
(:func:`~maze_envs.bench.analysis.analyze_games`, one core), and, in the same run as its peer,
the time to read the same games with every observation rebuilt whole (what the analysis read
before it read only the observation keys its metrics use); ``--profile`` with it profiles the
analysis instead.

Usage: ``python benchmarks/journal_bench.py [--rounds 7] [--turns 1500] [--profile]
[--analyze 1000 [--games-file PATH]] [--verify JOURNAL]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import escape_bench  # the same Maze Escape setup as the step-rate benchmark
import viewer_bench  # the games of the analysis benchmark

from maze_envs import maze_escape_v0, maze_escape_v1
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.bench.analysis.analyze import analyze_games
from maze_envs.journal import Blob, Journal
from maze_envs.journal.blobs import encode_decisions
from maze_envs.journal.body import PARTS, unpack_bodies
from maze_envs.journal.format import chain_record_hash, encode_json_bytes, encode_received
from maze_envs.reading.turns import read_turns
from maze_envs.verify import verify_journal, verify_workers

AGIMAZE_BUNDLE = "TRAINING/S0-keys/STAGE-01/0005.json"
NAVIGATOR_CONFIG: dict[str, Any] = {"preset": "navigator", "width": 17, "height": 17}
WORDS = ("piano", "tree", "dead end", "corridor", "fork", "exit?", "picture", "back")
#: The goals of issue 30, checked by this script.
GOAL_BYTES_PER_TURN = 160
GOAL_JOURNAL_RATIO = 0.6
GOAL_ANALYZE_SECONDS = 2.0
GOAL_VERIFY_SECONDS = 10.0
#: Games of each workload in the file whose bytes per turn are measured.
SIZE_GAMES = 5


# -- workloads ---------------------------------------------------------------------------------


def navigator_actions(count: int, seed: int) -> list[dict[str, dict[str, Any]]]:
    """``count`` turns of the ``navigator, notes`` workload for agents A, B, C."""
    rng = np.random.default_rng(seed)
    turns = []
    for turn in range(count):
        actions = {}
        for agent in "ABC":
            word = WORDS[int(rng.integers(len(WORDS)))]
            note = (
                f"t{turn} {agent}: moved {'NESW'[int(rng.integers(4))]}, saw {word}, "
                f"{int(rng.integers(2, 9))} steps since the {WORDS[turn % len(WORDS)]}"
            )
            radio = f"{agent} here: found a {word} {int(rng.integers(20))} cells from start"
            actions[agent] = {
                "move": int(rng.integers(0, 5)),
                "notebook": {"append": note},
                "radio": radio if turn % 6 == 0 else "",
            }
        turns.append(actions)
    return turns


WORKLOADS: dict[str, tuple[Callable[..., Any], dict[str, Any], Callable[[int, int], Any]]] = {
    "navigator, notes": (maze_escape_v1.parallel_env, NAVIGATOR_CONFIG, navigator_actions),
    "full, splices": (
        maze_escape_v0.parallel_env,
        escape_bench.ESCAPE_CONFIG,
        escape_bench.escape_actions,
    ),
}


class EscapeRunner:
    """Plays pre-generated turns of one workload, resetting whenever a game ends."""

    def __init__(self, workload: str, journal: Journal | None, seed: int = 1) -> None:
        make, config, actions = WORKLOADS[workload]
        self.env = make(journal=journal, **config)
        self.journal = journal
        self.actions = actions(4096, seed)
        self.cursor = 0
        self.games = 0
        self.env.reset(seed=0)

    def run(self, turns: int) -> float:
        """Play ``turns`` turns (the last batch committed inside the window); seconds taken."""
        env, actions = self.env, self.actions
        start = time.perf_counter()
        for _ in range(turns):
            if not env.agents:
                self.games += 1
                env.reset(seed=self.games)
            env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
        if self.journal is not None:
            self.journal.settle()
        return time.perf_counter() - start

    def close(self) -> None:
        self.env.close()


def play_games(
    workload: str, path: Path, games: int = 1, seed: int = 3, changes: bool = True
) -> int:
    """Play ``games`` whole games of ``workload`` into a new journal at ``path``; its turns."""
    make, config, actions = WORKLOADS[workload]
    moves = actions(config.get("max_turns", 600), seed)
    turns = 0
    with Journal(path, changes=changes) as journal:
        env = make(journal=journal, **config)
        for game in range(games):
            env.reset(seed=seed + game)
            played = 0
            while env.agents:
                env.step(moves[played])
                played += 1
            turns += played + 1  # turn 0 included
        env.close()
    return turns


def bytes_per_turn(workload: str, folder: Path, changes: bool = True) -> dict[str, float]:
    """Bytes per stored turn of :data:`SIZE_GAMES` whole games (the file less an empty
    journal's pages), and what a turn stores: its parts before compression, its body, hashes."""
    name = workload.replace(",", "").replace(" ", "-")
    path = folder / f"size-{name}-{changes}.sqlite"
    turns = play_games(workload, path, SIZE_GAMES, changes=changes)
    empty = folder / f"empty-{name}-{changes}.sqlite"
    with Journal(empty) as journal:  # the schema and the games' header page, no turn
        for game in range(SIZE_GAMES):
            journal.start_game(env_id="x", config={}, seed=game, library_version="b")
    size = path.stat().st_size - empty.stat().st_size
    db = sqlite3.connect(path)
    version = db.execute("PRAGMA user_version").fetchone()[0]
    bodies = [row[0] for row in db.execute("SELECT body FROM turns ORDER BY game_turn")]
    hashes = db.execute("SELECT SUM(LENGTH(state_hash) + LENGTH(record_hash)) FROM turns")
    hash_bytes = hashes.fetchone()[0] or 0
    db.close()
    starts = [i for i, body in enumerate(bodies) if body[0] == 1] + [len(bodies)]
    parts = dict.fromkeys(PARTS, 0)
    for first, end in itertools.pairwise(starts):
        for _, stored in unpack_bodies(bodies[first:end]):
            for part, text in zip(PARTS, stored, strict=True):
                parts[part] += len(text)
    figures = {f"{part} (uncompressed)": value / turns for part, value in parts.items()}
    figures.update(
        {"body": sum(map(len, bodies)) / turns, "hashes": hash_bytes / turns, "file": size / turns}
    )
    figures.update(turns=turns, schema=version)
    return figures


def journal_ratios(
    rounds: int, turns: int, folder: Path, changes: bool = True
) -> dict[str, list[float]]:
    """Per-round ratios journal on / journal off (default durability) for each workload."""
    ratios: dict[str, list[float]] = {}
    for workload in WORKLOADS:
        journal = Journal(folder / f"ratio-{len(ratios)}-{changes}.sqlite", changes=changes)
        runners = {"off": EscapeRunner(workload, None), "on": EscapeRunner(workload, journal)}
        for runner in runners.values():  # warm-up
            runner.run(max(turns // 10, 50))
        values = []
        for round_ in range(rounds):
            order = ["off", "on"] if round_ % 2 == 0 else ["on", "off"]
            rates = {name: turns / runners[name].run(turns) for name in order}
            values.append(rates["on"] / rates["off"])
        for runner in runners.values():
            runner.close()
        journal.close()
        ratios[workload] = values
    return ratios


# -- per-turn parts, AGI Maze, verify, blobs -----------------------------------------------------


def escape_rows(count: int) -> list[tuple[Any, Any, Any, bytes]]:
    """(observations, actions, events, digest) of ``count`` played ``navigator, notes`` turns."""
    make, config, actions = WORKLOADS["navigator, notes"]
    moves = actions(count, 1)
    env = make(**config)
    env.reset(seed=0)
    rows = []
    for index, turn in enumerate(moves):
        if not env.agents:
            env.reset(seed=index)
        observations, _, _, _, infos = env.step(turn)
        events = {agent: info["events"] for agent, info in infos.items()}
        rows.append((observations, turn, events, env.state_digest()))
    return rows


def per_turn_costs(rows: list[tuple[Any, Any, Any, bytes]], folder: Path) -> dict[str, float]:
    """Microseconds per turn: encoding and hashing the whole JSON, ``record_turn`` in full."""

    def timed(work: Callable[[], object]) -> float:
        work()  # warm-up: the first pass pays for allocating the results' memory
        start = time.perf_counter()
        work()
        return (time.perf_counter() - start) / len(rows) * 1e6

    encoded = [
        (encode_json_bytes(o), encode_received(a), encode_json_bytes(e)) for o, a, e, _ in rows
    ]
    costs = {
        "encode whole JSON": timed(
            lambda: [
                (encode_json_bytes(o), encode_received(a), encode_json_bytes(e))
                for o, a, e, _ in rows
            ]
        ),
        "hash whole JSON": timed(
            lambda: [chain_record_hash(bytes(32), "0" * 64, o, a, e, b"{}") for o, a, e in encoded]
        ),
    }
    for durability, key in (("batch", "record_turn"), ("turn", 'the same, durability="turn"')):
        with Journal(folder / f"{durability}.sqlite", durability=durability) as journal:

            def record(journal: Journal = journal) -> None:
                game = journal.start_game(env_id="bench", config={}, seed=0, library_version="b")
                for turn, (o, a, e, digest) in enumerate(rows):
                    journal.record_turn(
                        game, turn, observations=o, actions=a, events=e, state_digest=digest
                    )
                journal.flush()  # the last batch's commit is part of the cost
                journal.finish_game(game, {})

            costs[key] = timed(record)
    return costs


class AgiMazeRunner:
    """Random actions on one bundle, resetting at each episode's end."""

    def __init__(self, journal: Journal | None) -> None:
        self.env = AgiMazeEnv(path=AGIMAZE_BUNDLE, journal=journal)
        self.env.reset(seed=0)
        self.actions = [int(a) for a in np.random.default_rng(0).integers(0, 4, size=8192)]
        self.cursor = 0
        self.games = 0

    def run(self, steps: int) -> float:
        env, actions = self.env, self.actions
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(actions[self.cursor % len(actions)])
            self.cursor += 1
            if terminated or truncated:
                self.games += 1
                env.reset(seed=self.games)
        return time.perf_counter() - start


def agimaze_ratios(rounds: int, steps: int, folder: Path, changes: bool = True) -> list[float]:
    """Per-round ratios AGI Maze steps/s with the journal on / off."""
    journal = Journal(folder / f"agimaze-{changes}.sqlite", changes=changes)
    runners = {"off": AgiMazeRunner(None), "on": AgiMazeRunner(journal)}
    for runner in runners.values():
        runner.run(200)
    values = []
    for round_ in range(rounds):
        order = ["off", "on"] if round_ % 2 == 0 else ["on", "off"]
        rates = {name: steps / runners[name].run(steps) for name in order}
        values.append(rates["on"] / rates["off"])
    for runner in runners.values():
        runner.env.close()
    journal.close()
    return values


def verify_rates(folder: Path, turns: int) -> dict[str, float]:
    """Turns per second that ``verify`` replays, for a journal of each environment."""
    rates = {}
    escape_path = folder / "verify-escape.sqlite"
    journal = Journal(escape_path)
    runner = EscapeRunner("navigator, notes", journal, seed=2)
    runner.run(turns)
    runner.close()
    journal.close()
    agimaze_path = folder / "verify-agimaze.sqlite"
    agimaze = AgiMazeRunner(None)
    agimaze.env = AgiMazeEnv(path=AGIMAZE_BUNDLE, journal=agimaze_path)
    agimaze.env.reset(seed=0)
    agimaze.run(turns)
    agimaze.env.close()
    for name, path in (("Maze Escape", escape_path), ("AGI Maze", agimaze_path)):
        start = time.perf_counter()
        reports = verify_journal(path)
        elapsed = time.perf_counter() - start
        if not all(r.ok for r in reports):
            raise RuntimeError([r.describe() for r in reports if not r.ok])
        rates[name] = sum(r.turns_verified for r in reports) / elapsed
    return rates


def blob_savings(decisions: int) -> dict[str, float]:
    prefix = "You are agent A in a maze. Here are the rules. " * 85  # ~4 KiB
    plain = inline = 0
    stored_once: set[str] = set()
    for turn in range(decisions):
        record = {"A": {"prompt": [prefix, f"turn {turn}: what now?"], "reply": "E"}}
        plain += len(encode_decisions(record)[0])
        blobbed = {"A": {"prompt": [Blob(prefix), f"turn {turn}: what now?"], "reply": "E"}}
        text, blobs = encode_decisions(blobbed)
        inline += len(text) + sum(len(t) for k, t in blobs.items() if k not in stored_once)
        stored_once.update(blobs)
    return {"plain": plain / decisions, "with_blob": inline / decisions}


def profile(top: int) -> str:
    """cProfile of one journaled ``navigator, notes`` game: the top entries by own time."""
    make, config, actions = WORKLOADS["navigator, notes"]
    moves = actions(600, 3)
    with tempfile.TemporaryDirectory() as name:
        journal = Journal(Path(name) / "profile.sqlite")
        env = make(journal=journal, **config)
        env.reset(seed=3)
        profiler = cProfile.Profile()
        profiler.enable()
        turns = 0
        while env.agents:
            env.step(moves[turns])
            turns += 1
        journal.settle()
        profiler.disable()
        env.close()
        journal.close()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return f"one journaled game, {turns} turns:\n" + out.getvalue()


def analyze_costs(path: Path, games: int, rounds: int, profiled: bool) -> str:
    """``maze-envs analyze`` on ``games`` games of 120 turns, one process: CPU and wall time of
    the analysis and of its peer, reading the games with every observation whole."""
    if not path.exists():
        started = time.perf_counter()
        viewer_bench.many_games(path, games)
        print(f"built {games} games in {time.perf_counter() - started:.0f} s into {path}")
    with Journal(path, readonly=True) as journal:
        ids = journal.game_ids()[:games]
        if profiled:
            profiler = cProfile.Profile()
            profiler.enable()
            analyze_games(journal, ids)
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(20)
            return f"maze-envs analyze, {len(ids)} games, one process:\n" + out.getvalue()
        rows = len(analyze_games(journal, ids).escape)  # warm-up: board makers, caches

        def whole() -> None:
            for game in ids:
                read_turns(journal, game)

        costs: dict[str, list[tuple[float, float]]] = {"analyze": [], "read whole": []}
        for round_ in range(rounds):
            order = ["analyze", "read whole"] if round_ % 2 == 0 else ["read whole", "analyze"]
            for name in order:
                work: Callable[[], object] = (
                    whole if name == "read whole" else lambda: analyze_games(journal, ids)
                )
                wall, cpu = time.perf_counter(), time.process_time()
                work()
                costs[name].append((time.process_time() - cpu, time.perf_counter() - wall))
    cpu = [c for c, _ in costs["analyze"]]
    per_thousand = statistics.median(cpu) * 1000 / len(ids)  # (the goal is of 1,000 games)
    verdict = "met" if per_thousand <= GOAL_ANALYZE_SECONDS else "NOT MET"
    ratios = [w[0] / a[0] for a, w in zip(costs["analyze"], costs["read whole"], strict=True)]
    return "\n".join(
        [
            f"maze-envs analyze, {len(ids)} games of 120 turns ({rows} rows), one process, "
            f"{rounds} rounds:",
            f"  analysis CPU {statistics.median(cpu):.2f} s (rounds {min(cpu):.2f}-{max(cpu):.2f}"
            f" s; wall {statistics.median(w for _, w in costs['analyze']):.2f} s) "
            f"(per 1,000 games {per_thousand:.2f} s; goal <= {GOAL_ANALYZE_SECONDS:.0f} s: "
            f"{verdict})",
            f"  peer, reading the same games with every observation whole: CPU "
            f"{statistics.median(c for c, _ in costs['read whole']):.2f} s; whole read / analysis "
            f"{_range(ratios)}",
        ]
    )


def verify_costs(path: Path, workers: int | None = None) -> str:
    """``maze-envs verify`` of a journal as the command runs it (``workers``: its
    ``--workers``; None: its default): wall time, the driver's CPU time (all of it with one
    process), games, turns."""
    load = os.getloadavg()[0]
    if workers is None:
        with Journal(path, readonly=True) as journal:
            workers = verify_workers(len(journal.game_ids()))
    wall, cpu = time.perf_counter(), time.process_time()
    reports = verify_journal(path, workers=workers)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ok = sum(report.ok for report in reports)
    turns = sum(report.turns_verified for report in reports)
    verdict = "met" if wall <= GOAL_VERIFY_SECONDS else "NOT MET"
    return (
        f"maze-envs verify {path}: {ok} of {len(reports)} games ok, {turns:,} turns replayed "
        f"and compared by {workers} process(es), in {wall:.1f} s (CPU of this process "
        f"{cpu:.1f} s; goal <= {GOAL_VERIFY_SECONDS:.0f} s: "
        f"{verdict}); load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"
    )


def _range(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x (rounds {min(values):.2f}-{max(values):.2f}x)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per ratio")
    parser.add_argument("--turns", type=int, default=1500, help="turns (steps) per window")
    parser.add_argument("--profile", action="store_true", help="profile one journaled game")
    parser.add_argument("--top", type=int, default=25, help="profile entries to print")
    parser.add_argument("--analyze", type=int, metavar="N", help="time analyze on N games")
    parser.add_argument("--games-file", type=Path, help="the analysis journal (kept)")
    parser.add_argument("--verify", type=Path, metavar="JOURNAL", help="time verify of it")
    parser.add_argument(
        "--verify-workers", type=int, metavar="N", help="verify's --workers (default: its own)"
    )
    args = parser.parse_args(argv)
    if args.verify:
        print(verify_costs(args.verify, args.verify_workers))
        return 0
    if args.analyze:
        print(f"load average {os.getloadavg()[0]:.2f} at the start")
        with tempfile.TemporaryDirectory() as name:
            path = args.games_file or Path(name) / "games.sqlite"
            print(analyze_costs(path, args.analyze, max(args.rounds // 2, 1), args.profile))
        print(f"load average {os.getloadavg()[0]:.2f} at the end")
        return 0
    if args.profile:
        print(f"load average {os.getloadavg()[0]:.2f}")
        print(profile(args.top))
        return 0
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        sizes = {workload: bytes_per_turn(workload, folder) for workload in WORKLOADS}
        whole = {w: bytes_per_turn(w, folder, changes=False)["file"] for w in WORKLOADS}
        ratios = journal_ratios(args.rounds, args.turns, folder)
        ratios_whole = journal_ratios(args.rounds, args.turns, folder, changes=False)
        costs = per_turn_costs(escape_rows(2000), folder)
        agimaze = agimaze_ratios(args.rounds, args.turns, folder)
        agimaze_whole = agimaze_ratios(args.rounds, args.turns, folder, changes=False)
        replay = verify_rates(folder, 3000)
    blobs = blob_savings(200)
    lines = [f"load average {load:.2f} (1 min) at the start, {os.getloadavg()[0]:.2f} at the end"]
    for workload, size in sizes.items():
        columns = ", ".join(
            f"{name} {value:,.0f}"
            for name, value in size.items()
            if name not in ("file", "turns", "schema")
        )
        verdict = "met" if size["file"] <= GOAL_BYTES_PER_TURN else "NOT MET"
        lines += [
            f"bytes per journaled turn, {workload} ({size['turns']:.0f} turns, schema "
            f"{size['schema']:.0f}): {size['file']:,.0f} (goal <= {GOAL_BYTES_PER_TURN}: "
            f"{verdict}); stored whole (changes=False): {whole[workload]:,.0f}",
            f"  stored per turn: {columns}",
        ]
    lines.append(
        f"journal on / off, default durability, {args.rounds} rounds of {args.turns} turns:"
    )
    for workload, values in ratios.items():
        verdict = "met" if statistics.median(values) >= GOAL_JOURNAL_RATIO else "NOT MET"
        lines.append(
            f"  {workload:<18} {_range(values)}  (goal >= {GOAL_JOURNAL_RATIO}x: {verdict}); "
            f"stored whole: {_range(ratios_whole[workload])}"
        )
    lines += [
        "per navigator turn (3 agents, 17x17, notes every turn):",
        *(f"  {part:<28} {value:7.1f} us" for part, value in costs.items()),
        f"AGI Maze ({AGIMAZE_BUNDLE}, random actions), journal on / off: {_range(agimaze)}; "
        f"stored whole: {_range(agimaze_whole)}",
        "maze-envs verify (replay):",
        *(f"  {name:<22} {rate:>9,.0f} turns/s" for name, rate in replay.items()),
        "a decision record with a 4 KiB prompt prefix, bytes stored per decision:",
        f"  inline text            {blobs['plain']:>9,.0f}",
        f"  prefix as a Blob       {blobs['with_blob']:>9,.0f}",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
