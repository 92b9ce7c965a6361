"""Verifying a run's games while it plays: each game replayed in its worker as soon as it ends.

``maze-envs bench --verify`` (on for the main job) checks every game of the run's journal as
``maze-envs verify`` does. With the process pool the check is done where the game was played,
in parallel with the games still being played, instead of in a pass of its own after the last
game:

1. the worker that played a game, once the game is settled in its shard journal, verifies it
   there (:func:`verify_played`: :func:`maze_envs.journal.verify_game` with the game's replayer,
   every observation rebuilt and compared byte for byte, the same function ``maze-envs verify``
   runs) and takes the SHA-256 digest of the game's stored rows as it verified them
   (:func:`stored_digest`: the header, every turn row, the blobs its decisions reference);
2. the runner copies the game's rows into ``games.sqlite`` (verbatim, as before), reads the
   copy back and takes its digest (:class:`WorkerVerdicts`): only when the two digests are
   equal is the worker's report adopted as the verdict on the game in ``games.sqlite`` (the
   bytes ``maze-envs verify`` would read are then the very bytes that were verified, and the
   report is the one it would print);
3. every other game of the run's journal (a digest that differs, games of an earlier run that
   ``--resume`` continues, a worker that did not verify) is verified from ``games.sqlite``
   after the games, as before.

So the run's verdicts are those of ``maze-envs verify games.sqlite``, game for game;
the run's report says how many were checked in the workers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
from dataclasses import dataclass
from typing import Any

from maze_envs.journal import Journal, JournalError, StoredGame, VerifyReport


@dataclass(frozen=True, slots=True)
class Verdict:
    """A game verified where it was played: the report, and the digest of the rows verified."""

    report: VerifyReport
    digest: bytes


def stored_digest(game: StoredGame) -> bytes:
    """The SHA-256 digest of a game's stored rows: its header (every ``games`` column after the
    id), every turn row and the blobs its decisions reference, as the file holds them (the id
    and the file it was read from are left out: a verbatim copy has the same digest)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    # no memo: equal rows give equal bytes, whichever of their objects happen to be shared
    pickler.fast = True
    pickler.dump((game.schema_version, game.header, game.turns, game.blobs))
    return hashlib.sha256(buffer.getbuffer()).digest()


def verify_played(journal: Journal, game_id: int) -> Verdict:
    """Verify game ``game_id`` of ``journal`` (settled; the worker's own journal) as
    ``maze-envs verify`` does, with the digest of its rows as verified."""
    from maze_envs.journal import verify_game
    from maze_envs.verify import replayer_for

    try:
        env_id = journal.game(game_id).env_id
    except JournalError:
        env_id = ""  # verify_game reports the unreadable header
    report = verify_game(journal, game_id, replayer_for(env_id))
    return Verdict(report, stored_digest(journal.stored_game(game_id)))


class WorkerVerdicts:
    """The runner's side: the workers' verdicts adopted for the games of the run's journal whose
    copy is byte for byte what the worker verified (module doc)."""

    def __init__(self) -> None:
        self.reports: dict[int, VerifyReport] = {}
        #: games whose copy differed from what the worker verified (verified again from the file)
        self.differed = 0

    def adopt(self, journal: Journal, game_id: int, verdict: Verdict) -> None:
        """Adopt ``verdict`` for game ``game_id`` of ``journal`` (just copied there) if the copy's
        rows have the digest of the rows the worker verified."""
        try:
            copied = stored_digest(journal.stored_game(game_id))
        except JournalError:
            copied = b""
        if copied != verdict.digest:
            self.differed += 1
            return
        self.reports[game_id] = dataclasses.replace(verdict.report, game_id=game_id)

    def complete(self, path: Any, verify: Any) -> list[VerifyReport]:
        """Every game of the journal at ``path``: the adopted reports, and ``verify(path, ids)``
        (a list of reports) of the others; in game id order."""
        with Journal(path, readonly=True) as journal:
            ids = journal.game_ids()
        rest = [game_id for game_id in ids if game_id not in self.reports]
        reports = {game_id: self.reports[game_id] for game_id in ids if game_id in self.reports}
        if rest:
            reports.update((report.game_id, report) for report in verify(path, rest))
        return [reports[game_id] for game_id in sorted(reports)]


__all__ = ["Verdict", "WorkerVerdicts", "stored_digest", "verify_played"]
