"""Reading a journal into behavioural-metric rows: every game, in one process or several.

Journals in, tables out: the journal is opened read-only and never changed. Games of any other
environment (recorded by ``wrappers.recording``) get generic rows (:mod:`.generic_metrics`:
steps, total reward per agent, how the game ended); a game without readable turns is listed as
skipped with the reason; a game whose rows stop
being trustworthy (an edited or unreadable row) is analysed up to that turn and says so in its
``note``.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

from maze_envs.bench.analysis.agimaze_metrics import AgiMazeMetrics, agimaze_metrics
from maze_envs.bench.analysis.escape_metrics import (
    EVENT_KEYS,
    OBSERVATION_KEYS,
    AgentMetrics,
    game_metrics,
)
from maze_envs.bench.analysis.generic_metrics import GenericMetrics, generic_metrics
from maze_envs.journal import Journal, JournalError
from maze_envs.reading.tracks import escape_track, is_escape_game
from maze_envs.reading.turns import read_turns


@dataclass
class Analysis:
    """The metric rows of a journal's games."""

    escape: list[AgentMetrics] = field(default_factory=list)
    agimaze: list[AgiMazeMetrics] = field(default_factory=list)
    generic: list[GenericMetrics] = field(default_factory=list)  # games of other environments
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (game id, why)

    def extend(self, other: Analysis) -> None:
        self.escape += other.escape
        self.agimaze += other.agimaze
        self.generic += other.generic
        self.skipped += other.skipped


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees everything).

    Reading a game allocates hundreds of thousands of small dicts and lists (decoded JSON, which
    holds no reference cycles); the cyclic collector would rescan them over and over, which
    made the analysis about 1.5x slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def analyze_games(journal: Journal, game_ids: Sequence[int]) -> Analysis:
    """The metrics of the given games of an open journal."""
    with _no_cycle_collection():
        return _analyze_games(journal, game_ids)


def _analyze_games(journal: Journal, game_ids: Sequence[int]) -> Analysis:
    out = Analysis()
    for game_id in game_ids:
        try:
            info = journal.game(game_id)
            if is_escape_game(info):
                track = escape_track(
                    journal,
                    game_id,
                    info,
                    observations=OBSERVATION_KEYS,
                    events=EVENT_KEYS,
                    shared=True,
                )
                out.escape += game_metrics(track)
            elif info.env_id.startswith("maze_envs/AgiMaze"):
                turns, problem = read_turns(journal, game_id)
                if turns:
                    out.agimaze.append(agimaze_metrics(info, turns, problem or ""))
                else:
                    out.skipped.append((game_id, problem or "no turns recorded"))
            elif info.env_id.startswith("maze_envs/"):
                out.skipped.append((game_id, f"no behavioural metrics for {info.env_id}"))
            else:
                turns, problem = read_turns(journal, game_id)
                if turns:
                    out.generic += generic_metrics(info, turns, problem or "")
                else:  # nothing was recorded: no row to give
                    out.skipped.append((game_id, f"no behavioural metrics for {info.env_id}"))
        except (JournalError, ValueError) as exc:
            out.skipped.append((game_id, str(exc)))
    return out


def _analyze_chunk(path: str, game_ids: list[int]) -> Analysis:
    with Journal.open_readonly(path) as journal:
        return analyze_games(journal, game_ids)


def analyze_journal(
    path: str | os.PathLike[str],
    game_ids: Sequence[int] | None = None,
    *,
    workers: int | None = None,
) -> Analysis:
    """The metrics of a journal's games (all of them, or ``game_ids``), in id order.

    ``workers`` processes share the games (default: one per core, up to 4, when there are more
    than 50 games); each opens the journal read-only on its own.
    """
    with Journal.open_readonly(path) as journal:
        ids = journal.game_ids() if game_ids is None else list(game_ids)
        unknown = sorted(set(ids) - set(journal.game_ids()))
        if unknown:
            raise JournalError(f"no game {', '.join(map(str, unknown))} in {path}")
        if workers is None:
            workers = min(4, os.cpu_count() or 1) if len(ids) > 50 else 1
        if workers <= 1 or len(ids) < 2:
            return analyze_games(journal, ids)
    size = -(-len(ids) // (workers * 4))  # a few chunks per worker, so none idles long
    chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
    out = Analysis()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for part in pool.map(_analyze_chunk, [os.fspath(path)] * len(chunks), chunks):
            out.extend(part)
    return out
