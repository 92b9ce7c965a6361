"""Text patterns of the behavioural metrics: coordinates and frames in radio messages, and
passages copied from a teammate's notebook.

These are the checks the Maze Escape study ran by hand, made exact so every user counts the same:

* A radio message **carries coordinates** when it holds a pair of integers in brackets or
  parentheses (``[2,5]``, ``(-4, -3)``) or written as ``x=2, y=5``.
* It **names whose frame** they are in when it also says ``frame`` (``A-frame [-2,1]``,
  ``B frame``, ``my frame``, ``shared frame``), ``absolute``, whose coordinates they are
  (``my coords``, ``C's coordinates``), or gives an offset between two agents' frames
  (``B = A + (6,0)``).
* A **copied passage** is a run of at least :data:`COPY_MIN_CHARS` characters that is new in an
  agent's notebook and was, the turn before, in the notebook of a teammate on its cell (which it
  was shown). Copying in one's own words scores zero, as the study noted.

Example:
    >>> has_coordinates("exit at [2,5]"), names_frame("exit at [2,5]")
    (True, False)
    >>> has_coordinates("A-frame [-2, 1]"), names_frame("A-frame [-2, 1]")
    (True, True)
    >>> names_frame("B = A + (-4,-3)"), has_coordinates("10 west and 3 south of the key")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from maze_envs.journal.read.text import common_affixes

#: Shortest run of characters counted as a copied passage.
COPY_MIN_CHARS: Final = 40

_PAIR: Final = re.compile(
    r"[\[(]\s*[+-]?\d+\s*[,;]\s*[+-]?\d+\s*[\])]"
    r"|\bx\s*[=:]\s*[+-]?\d+\s*[,;]?\s*y\s*[=:]\s*[+-]?\d+",
    re.IGNORECASE,
)
_FRAME_WORDS: Final = re.compile(
    r"frames?\b|\babsolute\b|\b(?:my|own|your|our|their|his|her)\s+(?:coords?|coordinates)\b",
    re.IGNORECASE,
)
_WHOSE: Final = re.compile(r"\b[A-Z]'s\s+(?:coords?|coordinates)\b", re.IGNORECASE)
_OFFSET: Final = re.compile(r"\b[A-Z]\s*=\s*[A-Z]\s*[+-]")  # agent names are capitals


def has_coordinates(message: str) -> bool:
    """Whether a radio message carries a coordinate pair (see the module docstring)."""
    return _PAIR.search(message) is not None


def names_frame(message: str) -> bool:
    """Whether a radio message says whose frame its coordinates are in."""
    return bool(_FRAME_WORDS.search(message) or _WHOSE.search(message) or _OFFSET.search(message))


def added_text(before: str, after: str) -> str:
    """The text an edit put into a notebook: ``after`` less the common prefix and suffix.

    A splice replaces one region and a rolling log appends (dropping whole lines at the front),
    so the changed region holds everything new; text already in ``before`` is filtered out by
    :func:`copied_passages`.

    >>> added_text("abc", "abXYc"), added_text("a1\\nb2\\n", "b2\\nnew\\n")
    ('XY', 'b2\\nnew')
    """
    if after.startswith(before):
        return after[len(before) :]
    start, end = common_affixes(before, after)
    return after[start : len(after) - end]


@lru_cache(maxsize=64)
def _windows(text: str, size: int) -> frozenset[str]:
    return frozenset(text[i : i + size] for i in range(len(text) - size + 1))


def copied_passages(
    before: str, after: str, shown: Iterable[str], minimum: int = COPY_MIN_CHARS
) -> list[str]:
    """Passages of at least ``minimum`` characters new in ``after`` found in a ``shown`` text.

    Each passage is the longest run starting where it starts; runs do not overlap; a run that
    was already in ``before`` (the agent's own notebook) does not count.

    >>> mate = "B: exit is 5W,1N of the picture; route N3,W,S,W,S,E"
    >>> copied_passages("", "copied:" + mate[3:] + "!", [mate])
    ['exit is 5W,1N of the picture; route N3,W,S,W,S,E']
    >>> copied_passages("", "exit is near", [mate])
    []
    """
    added = added_text(before, after)
    if len(added) < minimum:
        return []
    found: list[str] = []
    for mate in shown:
        if len(mate) < minimum:
            continue
        windows = _windows(mate, minimum)
        i = 0
        while i + minimum <= len(added):
            if added[i : i + minimum] not in windows:
                i += 1
                continue
            length = minimum
            while i + length < len(added) and added[i : i + length + 1] in mate:
                length += 1
            passage = added[i : i + length]
            if passage not in before and passage not in found:
                found.append(passage)
            i += length
    return found
