"""What the LLM policies of one game share: the game's caps and what its record already says.

A Maze Escape game has one policy per agent, made separately (the runner builds a fresh policy
per agent per game). A per-game cap (``max_tokens_per_game``, ``max_cost_per_game``) is a cap on
the *game*, so the policies of one game charge one :class:`~llm_policies.accounting.Budget`, and
a notice the game's record should carry once (the output mode ``auto`` chose, a context warning,
a trimmed history) is recorded by whichever agent meets it first.

Which policies play one game: those reset, one after the other, for distinct agents of the same
game configuration (the ``EscapeEpisode.config`` object the environment hands every agent of a
game) before any of them made a decision. The runner resets all agents of a game together right
after the environment's reset, before the first turn; a policy reset again for an agent that
already joined, or after the game's first decision, opens a new game.

    >>> from llm_policies.accounting import Budget
    >>> shares = GameShares()
    >>> config = object()
    >>> a = shares.join(("escape", id(config)), "A", config, lambda: Budget(100, name="game"))
    >>> b = shares.join(("escape", id(config)), "B", config, lambda: Budget(100, name="game"))
    >>> a is b, a.first_time("auto"), b.first_time("auto")
    (True, True, False)
    >>> a.started = True  # the first decision: the next reset of A is a new game
    >>> shares.join(("escape", id(config)), "A", config, lambda: Budget(100)) is a
    False
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from llm_policies.accounting import Budget


@dataclass
class GameShare:
    """One game's shared budget and the notices its record holds already."""

    budget: Budget
    #: kept so that its ``id`` (part of the key) is not reused while the game is open
    config: Any = None
    agents: set[str] = field(default_factory=set)
    #: a decision was made: no other agent joins this game
    started: bool = False
    _seen: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def first_time(self, key: str) -> bool:
        """True once per game for ``key`` (a notice kind): record it now."""
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
            return True


class GameShares:
    """The open games of this process by key (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Hashable, GameShare] = {}

    def join(
        self, key: Hashable, agent: str, config: Any, make_budget: Callable[[], Budget]
    ) -> GameShare:
        """The game ``agent`` is reset into: the open one of ``key``, or a new one."""
        with self._lock:
            share = self._open.get(key)
            if (
                share is None
                or share.started
                or agent in share.agents
                or share.config is not config
            ):
                share = self._open[key] = GameShare(make_budget(), config)
            share.agents.add(agent)
            return share


#: The open games of this process.
GAMES = GameShares()
