"""``maze-envs analyze`` in one process: its CPU time, and how much of it is reading.

Measures, in one run and one process (one core), on a journal of ``--games`` Maze Escape games of
120 turns (``viewer_bench.py``'s games: 11x11, ``full``, random moves, rolling-log notes and
radio; built once into ``--games-file`` when given):

* the analysis, :func:`~maze_envs.bench.analysis.analyze_games` of every game (what
  ``maze-envs analyze --workers 1`` computes);
* its peer, reading the same games as the analysis reads them (each game's
  :func:`~maze_envs.reading.tracks.escape_track` with the analysis' observation and event
  keys) and nothing else.

The metrics' own cost is the difference. Rounds alternate the order of the two; the script
prints each round, the medians, the load average at the start and the end, and the verdict
against issue 30's goal (the analysis of 1,000 games of 120 turns in <= 2 s of CPU). Since a
difference of two noisy times is noisier still, it then times the metrics alone
(:func:`~maze_envs.bench.analysis.escape_metrics.game_metrics`) on the first ``--held`` games'
tracks read beforehand and held in memory. To compare two versions of the metrics, run the
script with each checkout first on ``PYTHONPATH`` on the same ``--games-file``.

With ``--stages`` it then times the analysis stage by stage on the first ``--held`` games
(:func:`stages`): the journal's floor (rows, inflating, hash chains, JSON parsing), the rows as
the analysis reads them, the boards, the tracks, the metrics.

Usage: ``python benchmarks/analyze_bench.py [--games 1000] [--rounds 3] [--held 200]
[--games-file PATH] [--stages]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
import viewer_bench

from maze_envs.bench.analysis.analyze import analyze_games
from maze_envs.bench.analysis.escape_metrics import EVENT_KEYS, OBSERVATION_KEYS, game_metrics
from maze_envs.journal import Journal
from maze_envs.journal.body import unpack_bodies
from maze_envs.journal.format import chain_body_hash, genesis
from maze_envs.reading.tracks import EscapeTrack, escape_track, game_layout

GOAL_SECONDS = 2.0
GOAL_GAMES = 1000


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _track(journal: Journal, game: int) -> EscapeTrack:
    return escape_track(
        journal,
        game,
        journal.game(game),
        observations=OBSERVATION_KEYS,
        events=EVENT_KEYS,
        shared=True,
    )


def metrics_alone(path: Path, held: int, rounds: int) -> str:
    """The metrics of ``held`` games whose tracks were read beforehand, ``rounds`` times."""
    with Journal(path, readonly=True) as journal:
        tracks = [_track(journal, game) for game in journal.game_ids()[:held]]
    gc.disable()
    try:
        costs = [_cpu(lambda: [game_metrics(track) for track in tracks]) for _ in range(rounds)]
    finally:
        gc.enable()
    return (
        f"  the metrics alone, {len(tracks)} games read beforehand: CPU "
        f"{statistics.median(costs):.2f} s (rounds {min(costs):.2f}-{max(costs):.2f} s; load "
        f"{os.getloadavg()[0]:.1f})"
    )


def stages(path: Path, games: int, rounds: int) -> str:
    """Where the analysis' time goes, stage by stage, each the least CPU time of ``rounds``
    (per 1,000 games): the journal's floor (fetching the rows, inflating the bodies and checking
    the hash chain, parsing the four JSON parts of every turn), the rows as the analysis reads
    them (``Journal.turns`` with its keys), the boards rebuilt, the tracks, the metrics."""
    with Journal(path, readonly=True) as journal:
        ids = journal.game_ids()[:games]
        infos = [journal.game(game) for game in ids]
        analyze_games(journal, ids[:3])  # warm-up
        rows = [list(journal.raw_turns(game)) for game in ids]
        payloads = [[parts for _, parts in unpack_bodies(r[1] for r in game)] for game in rows]

        def chain() -> None:
            for game in rows:
                previous = genesis(len(game[0][3]))
                for row in game:
                    previous = chain_body_hash(previous, row[2], row[1])

        def parse() -> None:
            for game in payloads:
                for parts in game:
                    for part in parts:
                        orjson.loads(part)

        tracks: list[EscapeTrack] = []
        work: list[tuple[str, Callable[[], object]]] = [
            ("fetch the rows (SQLite)", lambda: [list(journal.raw_turns(g)) for g in ids]),
            ("inflate the bodies", lambda: [unpack_bodies(r[1] for r in game) for game in rows]),
            ("check the hash chains", chain),
            ("parse the 4 JSON parts of every turn", parse),
            (
                "Journal.turns, the analysis' keys (all of the above, and the changes applied)",
                lambda: [
                    list(
                        journal.turns(
                            g, observations=OBSERVATION_KEYS, events=EVENT_KEYS, shared=True
                        )
                    )
                    for g in ids
                ],
            ),
            (
                "rebuild the boards (game_layout: the env's reset)",
                lambda: [game_layout(i) for i in infos],
            ),
            (
                "the tracks (escape_track: the turns, the boards, the walk)",
                lambda: tracks.extend(_track(journal, g) for g in ids),
            ),
            (
                "the metrics of the tracks",
                lambda: [game_metrics(track) for track in tracks[: len(ids)]],
            ),
            ("the analysis (analyze_games)", lambda: analyze_games(journal, ids)),
        ]
        lines = []
        gc.disable()
        try:
            for name, run in work:
                costs = []
                for _ in range(rounds):
                    costs.append(_cpu(run))
                    if name.startswith("the tracks") and len(tracks) > len(ids):
                        del tracks[len(ids) :]
                lines.append(f"  {min(costs) * 1000 / len(ids):6.2f} s  {name}")
        finally:
            gc.enable()
    return "\n".join(
        [f"stages, {len(ids)} games, least CPU of {rounds} rounds, per 1,000 games:", *lines]
    )


def measure(path: Path, games: int, rounds: int) -> str:
    """The analysis and its reading, ``rounds`` times each, alternating; a report."""
    if not path.exists():
        started = time.perf_counter()
        viewer_bench.many_games(path, games)
        print(f"built {games} games in {time.perf_counter() - started:.0f} s into {path}")
    with Journal(path, readonly=True) as journal:
        ids = journal.game_ids()[:games]

        def analysis() -> object:
            return analyze_games(journal, ids)

        def reading() -> None:
            gc.disable()  # as analyze_games does
            try:
                for game in ids:
                    _track(journal, game)
            finally:
                gc.enable()

        rows = len(analyze_games(journal, ids).escape)  # warm-up: board makers, caches
        costs: dict[str, list[float]] = {"analysis": [], "reading": []}
        lines = []
        for round_ in range(rounds):
            order = ("analysis", "reading") if round_ % 2 == 0 else ("reading", "analysis")
            for name in order:
                costs[name].append(_cpu(analysis if name == "analysis" else reading))
            lines.append(
                f"  round {round_ + 1}: analysis {costs['analysis'][-1]:.2f} s, reading "
                f"{costs['reading'][-1]:.2f} s (load {os.getloadavg()[0]:.1f})"
            )
    total = statistics.median(costs["analysis"])
    read = statistics.median(costs["reading"])
    metrics = statistics.median(
        a - r for a, r in zip(costs["analysis"], costs["reading"], strict=True)
    )
    scale = GOAL_GAMES / len(ids)
    verdict = "met" if total * scale <= GOAL_SECONDS else "NOT MET"
    return "\n".join(
        [
            f"maze-envs analyze, {len(ids)} games of 120 turns ({rows} rows), one process, "
            f"CPU seconds, {rounds} rounds:",
            *lines,
            f"  median: analysis {total:.2f} s = reading {read:.2f} s + metrics {metrics:.2f} s "
            f"({metrics / total:.0%} of it)",
            f"  per {GOAL_GAMES} games: {total * scale:.2f} s (goal <= {GOAL_SECONDS:.0f} s: "
            f"{verdict}); the metrics alone {metrics * scale:.2f} s",
        ]
    )


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count of games or rounds)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=_positive, default=GOAL_GAMES, help="games in the journal")
    parser.add_argument("--rounds", type=_positive, default=3, help="timed rounds of each")
    parser.add_argument("--held", type=_positive, default=200, help="games for the metrics alone")
    parser.add_argument("--games-file", type=Path, help="the journal (built once, kept)")
    parser.add_argument(
        "--stages", action="store_true", help="also time the analysis stage by stage"
    )
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as name:
        path = args.games_file or Path(name) / "games.sqlite"
        print(measure(path, args.games, args.rounds))
        if args.stages:
            print(stages(path, args.held, args.rounds))
        print(metrics_alone(path, args.held, args.rounds))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
