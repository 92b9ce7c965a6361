"""A game's turns as far as they can be trusted."""

from __future__ import annotations

from collections.abc import Collection

from maze_envs.journal import CorruptTurnError, Journal, TurnRecord


def read_turns(
    journal: Journal,
    game_id: int,
    *,
    observations: bool | Collection[str] = True,
    events: Collection[str] | None = None,
    shared: bool = False,
) -> tuple[list[TurnRecord], str | None]:
    """A game's readable turns, and why reading stopped early (None: every turn was read).

    ``observations=False`` reads them without rebuilding the observations, a collection of
    keys with only those keys of each agent's observation (and ``events``: of its events), and
    ``shared`` with what did not change shared from turn to turn (read-only; see
    :meth:`maze_envs.journal.Journal.turns`).
    """
    turns: list[TurnRecord] = []
    try:
        read = journal.turns(game_id, observations=observations, events=events, shared=shared)
        for record in read:
            turns.append(record)
    except CorruptTurnError as exc:
        return turns, f"turn {exc.turn}: {exc.reason}"
    return turns, None


__all__ = ["read_turns"]
