"""Seed lists of an experiment, written as ranges (``0-49``), lists (``1,5,9``) or both.

How each game's policy seeds derive from its game seed is the policies' business:
:mod:`maze_envs.policies.seeds` (the runner and ``wrappers.SingleAgentEscape`` both use it).

Example:
    >>> parse_seeds("0-3,10")
    (0, 1, 2, 3, 10)
    >>> parse_seeds([5, "7-8"])
    (5, 7, 8)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
