"""``maze-envs verify``: replay and check every game of a journal, whatever its environment.

One journal may hold games of several environments. Each game is checked by the replayer of its
env id: the table of environments (:mod:`maze_envs._registration`) names each one's replayer
(:data:`REPLAYERS`); games of other env ids get theirs from the caller (``replayers=``, or on the
command line ``--replayer ENV_ID=module:factory``). This module lives above the journal and the
environments, so the journal never imports an environment: the table holds import strings,
resolved when a game of that env id is met. A game whose env id has no replayer gets the row
checks only (contiguous turns, record-hash chain, blobs, outcome turns), and the report says so.

The journal is opened read-only (:class:`~maze_envs.journal.Journal` ``readonly=True``): verify
never writes, so it works on a read-only file or directory, and an empty file is refused (exit
status 2) and left untouched.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Final

from maze_envs import _registration
from maze_envs._registration import ENVIRONMENTS
from maze_envs.journal import Journal, JournalError, Replayer, VerifyReport, verify_game

#: Env ids -> ``"module:factory"`` of their replayer (a class or function returning one).
REPLAYERS: Final[Mapping[str, str]] = {env.id: env.replayer for env in ENVIRONMENTS}

ReplayerFactory = Callable[[], Replayer]


def _load(target: str) -> ReplayerFactory:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"a replayer is named as 'module:factory', got {target!r}")
    factory: ReplayerFactory = getattr(importlib.import_module(module_name), attribute)
    return factory


def replayer_for(
    env_id: str, extra: Mapping[str, str | ReplayerFactory] | None = None
) -> ReplayerFactory | None:
    """The replayer factory of ``env_id`` (None when no replayer is known).

    Looked up in ``extra`` (import strings or factories), then :data:`REPLAYERS`. The module is
    imported when the factory is called, so a replayer that cannot be imported is reported by
    the game's verification.
    """
    target: str | ReplayerFactory | None
    if extra is not None and env_id in extra:
        target = extra[env_id]
    else:  # the live table: a row added at run time (a test's fake version) is found too
        target = next((e.replayer for e in _registration.ENVIRONMENTS if e.id == env_id), None)
    if target is None or callable(target):
        return target
    name = target

    def factory() -> Replayer:
        return _load(name)()

    return factory


def verify_games(
    journal: Journal,
    game_ids: Sequence[int] | None = None,
    replayers: Mapping[str, str | ReplayerFactory] | None = None,
) -> list[VerifyReport]:
    """Verify games of an open journal (all of them, or ``game_ids``), each by its env id."""
    ids = journal.game_ids() if game_ids is None else list(game_ids)
    reports = []
    for game_id in ids:
        try:
            env_id = journal.game(game_id).env_id
        except JournalError:
            env_id = ""  # verify_game reports the unreadable header
        reports.append(verify_game(journal, game_id, replayer_for(env_id, replayers)))
    return reports


#: Games a journal needs before :func:`verify_journal` shares them among processes by itself.
POOL_MIN_GAMES: Final = 50


def verify_journal(
    path: str | os.PathLike[str],
    game_ids: Sequence[int] | None = None,
    replayers: Mapping[str, str | ReplayerFactory] | None = None,
    *,
    workers: int | None = None,
) -> list[VerifyReport]:
    """Open the journal at ``path`` read-only and verify its games (see :func:`verify_games`),
    reports in the order of ``game_ids`` (every game, in id order, by default).

    ``workers`` processes share the games, each opening the journal read-only on its own
    (default: one per core, up to 4, for more than :data:`POOL_MIN_GAMES` games, when every
    replayer given is an import string; replayer objects are verified in this process). The
    workers are started fresh (forkserver): replayers are found by import string there, so an
    environment row added to the table at run time is seen with ``workers=1`` only.
    """
    with Journal(path, readonly=True) as journal:
        ids = journal.game_ids() if game_ids is None else list(game_ids)
        if workers is None:
            named = replayers is None or all(isinstance(r, str) for r in replayers.values())
            workers = verify_workers(len(ids)) if named else 1
        if workers <= 1 or len(ids) < 2:
            return verify_games(journal, ids, replayers)
    return [report for part in verify_chunks(path, ids, replayers, workers) for report in part]


def verify_workers(games: int) -> int:
    """The processes :func:`verify_journal` uses by default for ``games`` games."""
    return min(4, os.cpu_count() or 1) if games > POOL_MIN_GAMES else 1


def verify_chunks(
    path: str | os.PathLike[str],
    game_ids: Sequence[int],
    replayers: Mapping[str, str | ReplayerFactory] | None,
    workers: int,
) -> Iterator[list[VerifyReport]]:
    """The reports of ``game_ids``, chunk after chunk in their order, verified by ``workers``
    processes (a few chunks each, so none idles long while another finishes)."""
    ids = list(game_ids)
    size = max(1, -(-len(ids) // (workers * 4)))
    chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
    named = dict(replayers) if replayers else None
    # (forkserver: no worker inherits the caller's open SQLite connections)
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(
            _verify_chunk, [os.fspath(path)] * len(chunks), chunks, [named] * len(chunks)
        )


def _verify_chunk(
    path: str, game_ids: list[int], replayers: Mapping[str, str | ReplayerFactory] | None
) -> list[VerifyReport]:
    with Journal(path, readonly=True) as journal:
        return verify_games(journal, game_ids, replayers)


def _row(journal: Journal, report: VerifyReport) -> str:
    try:
        info = journal.game(report.game_id)
        env_id, seed, turns = info.env_id, str(info.seed), str(info.turn_count)
    except JournalError:
        env_id = seed = turns = "?"
    result = report.describe().removeprefix(f"game {report.game_id}: ")
    return f"{report.game_id:>5}  {env_id:<24}  {seed:>12}  {turns:>5}  {result}"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes >= 1, got {text!r}")
    return value


def _replayer_option(text: str) -> tuple[str, str]:
    env_id, sep, target = text.partition("=")
    if not sep or not env_id or ":" not in target:
        raise argparse.ArgumentTypeError(f"expected ENV_ID=module:factory, got {text!r}")
    return env_id, target


def journal_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a command that reads games of a journal: ``JOURNAL [--game N ...]``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("journal", help="path of the SQLite journal (opened read-only)")
    parser.add_argument(
        "--game", type=int, action="append", metavar="N", help="only game N (repeatable)"
    )
    return parser


def open_games(path: str | os.PathLike[str], prog: str) -> tuple[Journal, list[int]] | None:
    """The journal at ``path``, opened read-only, and its game ids; None, once ``prog: the
    problem`` is printed to stderr, when the file is not a usable journal."""
    try:
        journal = Journal(path, readonly=True)
    except JournalError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None
    try:
        return journal, journal.game_ids()
    except JournalError as exc:
        journal.close()
        print(f"{prog}: {exc}", file=sys.stderr)
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs verify JOURNAL [--game N ...]``: exit 0 when every game verifies."""
    parser = journal_parser(
        "maze-envs verify",
        "Replay every game of a journal (Maze Escape and AGI Maze games alike) and "
        "check each turn's state hash, observations and events, the stored rows and blobs, and "
        "that each outcome claims exactly the stored turns. The file is opened read-only. Exit "
        "status: 0 every game verifies (games abandoned before their end included), 1 a game "
        "failed or is unfinished (no outcome), 2 the file is not a usable journal.",
    )
    parser.add_argument(
        "--replayer",
        type=_replayer_option,
        action="append",
        default=[],
        metavar="ENV_ID=MODULE:FACTORY",
        help="the replayer of games of another env id (repeatable)",
    )
    parser.add_argument(
        "--workers",
        type=_positive,
        metavar="N",
        help=f"processes that share the games (default: one per core, up to 4, for more than "
        f"{POOL_MIN_GAMES} games)",
    )
    args = parser.parse_args(argv)
    opened = open_games(args.journal, "maze-envs verify")
    if opened is None:
        return 2
    journal, ids = opened
    with journal:
        if args.game:
            unknown = sorted(set(args.game) - set(ids))
            if unknown:
                print(
                    f"maze-envs verify: no game {unknown} in {args.journal}; games: {ids}",
                    file=sys.stderr,
                )
                return 2
            ids = args.game
        replayers = dict(args.replayer)
        print(f"{args.journal}: {len(ids)} game(s)")
        print(f"{'game':>5}  {'env':<24}  {'seed':>12}  {'turns':>5}  result")
        workers = verify_workers(len(ids)) if args.workers is None else args.workers
        if workers > 1 and len(ids) > 1:
            parts: Iterator[list[VerifyReport]] = verify_chunks(
                args.journal, ids, replayers, workers
            )
        else:
            parts = (verify_games(journal, [game_id], replayers) for game_id in ids)
        reports = []
        for part in parts:
            for report in part:
                reports.append(report)
                print(_row(journal, report), flush=True)
    good = sum(r.ok for r in reports)
    unreplayed = sum(not r.replayed for r in reports)
    note = f" ({unreplayed} without a replayer: rows only)" if unreplayed else ""
    print(f"{good} of {len(reports)} game(s) verified{note}")
    return 0 if good == len(reports) else 1


__all__ = [
    "POOL_MIN_GAMES",
    "REPLAYERS",
    "journal_parser",
    "main",
    "open_games",
    "replayer_for",
    "verify_chunks",
    "verify_games",
    "verify_journal",
    "verify_workers",
]
