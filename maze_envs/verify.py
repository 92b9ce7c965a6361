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
import os
import sys
from collections.abc import Callable, Mapping, Sequence
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


def verify_journal(
    path: str | os.PathLike[str],
    game_ids: Sequence[int] | None = None,
    replayers: Mapping[str, str | ReplayerFactory] | None = None,
) -> list[VerifyReport]:
    """Open the journal at ``path`` read-only and verify its games (see :func:`verify_games`)."""
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


def _replayer_option(text: str) -> tuple[str, str]:
    env_id, sep, target = text.partition("=")
    if not sep or not env_id or ":" not in target:
        raise argparse.ArgumentTypeError(f"expected ENV_ID=module:factory, got {text!r}")
    return env_id, target


def main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs verify JOURNAL [--game N ...]``: exit 0 when every game verifies."""
    parser = argparse.ArgumentParser(
        prog="maze-envs verify",
        description="Replay every game of a journal (Maze Escape and AGI Maze games alike) and "
        "check each turn's state hash, observations and events, the stored rows and blobs, and "
        "that each outcome claims exactly the stored turns. The file is opened read-only. Exit "
        "status: 0 every game verifies (games abandoned before their end included), 1 a game "
        "failed or is unfinished (no outcome), 2 the file is not a usable journal.",
    )
    parser.add_argument("journal", help="path of the SQLite journal")
    parser.add_argument(
        "--game", type=int, action="append", metavar="N", help="verify only game N (repeatable)"
    )
    parser.add_argument(
        "--replayer",
        type=_replayer_option,
        action="append",
        default=[],
        metavar="ENV_ID=MODULE:FACTORY",
        help="the replayer of games of another env id (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        journal = Journal(args.journal, readonly=True)
    except JournalError as exc:
        print(f"maze-envs verify: {exc}", file=sys.stderr)
        return 2
    with journal:
        try:
            ids = journal.game_ids()
        except JournalError as exc:
            print(f"maze-envs verify: {exc}", file=sys.stderr)
            return 2
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
        reports = []
        for game_id in ids:
            (report,) = verify_games(journal, [game_id], replayers)
            reports.append(report)
            print(_row(journal, report), flush=True)
    good = sum(r.ok for r in reports)
    unreplayed = sum(not r.replayed for r in reports)
    note = f" ({unreplayed} without a replayer: rows only)" if unreplayed else ""
    print(f"{good} of {len(reports)} game(s) verified{note}")
    return 0 if good == len(reports) else 1


__all__ = [
    "REPLAYERS",
    "main",
    "replayer_for",
    "verify_games",
    "verify_journal",
]
