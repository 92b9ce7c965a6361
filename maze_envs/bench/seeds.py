"""Seed lists of an experiment, written as ranges (``0-49``), lists (``1,5,9``) or both; and
how each game's policy seeds derive from its game seed.

**Policy seeds.** The game seed is the environment's reset seed. Each agent's policy gets its
own seed (``policy.reset(agent, seed, episode)``, the policy's only source of randomness):

    policy seed = :func:`agent_seed` (game seed, agent index, salt)

drawn from ``numpy.random.SeedSequence((game seed, agent index, salt))``, where ``salt``
(``case.salt``, the first 60 bits of a SHA-256) tells the games of one arm apart beyond their
seed: for Maze Escape the environment and the maze size, for AGI Maze the bundle (path, pack
root and pack version). So teammates get independent streams; every game of an arm gets its own
(another seed, another maze size, another AGI Maze bundle: another policy seed, so a random agent
never replays one action sequence on every bundle); the same game always gets the same ones, in
any process; and arms that play the same maze or bundle with the same seed hand their policies
the same seeds even when their rules differ (the radio, the meeting alert, the budget), so paired
arms differ in the rule alone (common random numbers).

Unless asked: an arm with ``policy_seed = N`` (a policy entry field in an experiment file) hands
agent ``i`` the seed ``agent_seed(N, i)`` in *every* game (common random numbers across games).
The seeds each game's policies got are stored in its journal meta (``policy_seeds``).

Example:
    >>> parse_seeds("0-3,10")
    (0, 1, 2, 3, 10)
    >>> parse_seeds([5, "7-8"])
    (5, 7, 8)
    >>> agent_seed(0, 1) == agent_seed(0, 1) != agent_seed(0, 2)
    True
    >>> game = policy_seeds(0, ("A", "B"), salt=7)
    >>> game == policy_seeds(0, ("A", "B"), salt=7) != policy_seeds(0, ("A", "B"), salt=8)
    True
    >>> policy_seeds(0, ("A",), salt=7, fixed=3) == policy_seeds(5, ("A",), salt=9, fixed=3)
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: Seeds are stored in SQLite integers (signed 64-bit).
MAX_SEED = 2**63 - 1


def _seed(text: str, whole: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(
            f"seeds {whole!r}: {text.strip()!r} is not a whole number; write seeds as 0-49, "
            "1,5,9 or a mix (0-9,20)"
        ) from None
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"seeds {whole!r}: a seed is a whole number from 0 to 2**63-1")
    return value


def parse_seeds(value: Any) -> tuple[int, ...]:
    """The seeds ``value`` names, in the order given, without repeats.

    ``value`` is an int, a text of comma-separated seeds and ``a-b`` ranges (both ends
    included), or a list of those. Raises ValueError for anything else, an empty list or a
    backwards range.
    """
    parts: Iterable[Any]
    if isinstance(value, bool):
        raise ValueError(f"seeds must be numbers or ranges such as '0-49', got {value!r}")
    if isinstance(value, int):
        parts = [str(value)]
    elif isinstance(value, str):
        parts = value.split(",")
    elif isinstance(value, list | tuple):
        parts = [p for item in value for p in parse_seeds(item)]
        parts = [str(p) for p in parts]
    else:
        raise ValueError(f"seeds must be numbers or ranges such as '0-49', got {value!r}")
    seeds: list[int] = []
    for part in parts:
        part = part.strip()
        if not part:
            continue
        low, dash, high = part.partition("-")
        if dash and low.strip():
            first, last = _seed(low, str(value)), _seed(high, str(value))
            if last < first:
                raise ValueError(f"seeds {value!r}: range {part!r} runs backwards")
            if last - first >= 1_000_000:
                raise ValueError(f"seeds {value!r}: range {part!r} has over a million seeds")
            seeds.extend(range(first, last + 1))
        else:
            seeds.append(_seed(part, str(value)))
    if not seeds:
        raise ValueError(f"seeds {value!r} name no seed; write e.g. 0-49 or 1,5,9")
    return tuple(dict.fromkeys(seeds))


def agent_seed(game_seed: int, agent_index: int, salt: int = 0) -> int:
    """The seed of agent ``agent_index``'s policy in the game seeded ``game_seed``.

    Drawn from ``numpy.random.SeedSequence((game_seed, agent_index, salt))``, so teammates get
    independent streams and the same game always gets the same ones. ``salt`` tells games of
    different setups apart (the runner passes a hash of the game's environment), so that, say,
    a random policy does not replay the same action sequence on every AGI Maze bundle.
    """
    state = np.random.SeedSequence((game_seed, agent_index, salt)).generate_state(2, np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1


def policy_seeds(
    game_seed: int, agents: Sequence[str], salt: int, fixed: int | None = None
) -> dict[str, int]:
    """The seed of each agent's policy in one game (see the module docstring): from the game
    seed and the environment's ``salt``, or, when an arm asks for it, from its ``fixed``
    policy seed alone (the same in every game of the arm)."""
    if fixed is not None:
        return {agent: agent_seed(fixed, index) for index, agent in enumerate(agents)}
    return {agent: agent_seed(game_seed, index, salt) for index, agent in enumerate(agents)}
