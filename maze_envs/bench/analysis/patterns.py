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
* A **self-tracked position** is a coordinate pair an agent writes about itself
  (:func:`self_positions`): right after a position word that starts a clause (``at``, ``pos``,
  ``position``, ``here``, ``now``, ``me``, optionally after a turn tag such as ``t12:``), or
  after ``my position``, ``I am at``, ``I'm at``. ``exit at [2,5]`` or ``B at [5,-3]`` name
  something else and do not count.
* A message **names a landmark** when it holds the name of one of the maze's landmarks as a word
  (:func:`names_landmark`): ``5W,1N of the picture``.
* A note **states a frame offset** when it writes one agent's frame as another's plus a pair
  (:func:`states_offset`): ``B = A + (6,0)``, ``B frame = C frame + (4,-3)``.
* A note **doubts the trail** when one line mentions the trail and a word of doubt (lag,
  conflict, mismatch, wrong, stale, behind, inconsistent, disagree, doubt, off by one)
  (:func:`doubts_trail`): ``trail lagged``, ``position conflicts with trail``.

Example:
    >>> has_coordinates("exit at [2,5]"), names_frame("exit at [2,5]")
    (True, False)
    >>> has_coordinates("A-frame [-2, 1]"), names_frame("A-frame [-2, 1]")
    (True, True)
    >>> names_frame("B = A + (-4,-3)"), has_coordinates("10 west and 3 south of the key")
    (True, False)
    >>> self_positions("t12: at [3, -1]; exit at [2,5]; B at [5,-3]")
    [(3, -1)]
    >>> names_landmark("exit is 5W,1N of the Picture", ["picture", "piano"])
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from maze_envs.reading.text import common_affixes

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


_SELF_POSITION: Final = re.compile(
    r"(?:(?:^|[;.,:(\n-])[ \t]*(?:(?:t|turn)[ \t]*\d+[ \t]*[:.)-]?[ \t]*)?"
    r"(?:(?:i[ \t]*am|i'm)[ \t]+(?:now[ \t]+)?at|now[ \t]+at|at|pos(?:ition)?|here|now|me)"
    r"|\bmy[ \t]+pos(?:ition)?|\bi[ \t]*(?:am|'m)[ \t]+(?:now[ \t]+)?at)"
    r"[ \t]*(?:is[ \t]*|[=:][ \t]*)?"
    r"[\[(][ \t]*(?P<x>[+-]?\d+)[ \t]*[,;][ \t]*(?P<y>[+-]?\d+)[ \t]*[\])]",
    re.IGNORECASE,
)
_OFFSET_NOTE: Final = re.compile(
    r"\b[A-Z](?:'s)?(?:[ \t]+frame)?[ \t]*=[ \t]*[A-Z](?:'s)?(?:[ \t]+frame)?[ \t]*[+-][ \t]*"
    r"[\[(][ \t]*[+-]?\d+[ \t]*,[ \t]*[+-]?\d+[ \t]*[\])]"
)
_TRAIL: Final = re.compile(r"\btrail\b", re.IGNORECASE)
_DOUBT: Final = re.compile(
    r"\b(?:lag\w*|conflict\w*|mismatch\w*|wrong|stale|behind|inconsisten\w*|disagree\w*|"
    r"doubt\w*|off[ \t]+by[ \t]+one)\b",
    re.IGNORECASE,
)


def self_positions(text: str) -> list[tuple[int, int]]:
    """The coordinate pairs ``text`` gives as the writer's own position (module docstring).

    >>> self_positions("Position: [0, 2]. I am at (1,1); now at [2, 2]; my position is [-1, 0]")
    [(0, 2), (1, 1), (2, 2), (-1, 0)]
    >>> self_positions("exit at [2,5]; the piano is at [1, 1]; route to [3,3]")
    []
    """
    if "[" not in text and "(" not in text:  # (every match holds its pair in brackets)
        return []
    return [(int(m.group("x")), int(m.group("y"))) for m in _SELF_POSITION.finditer(text)]


def names_landmark(message: str, landmarks: Iterable[str]) -> bool:
    """Whether ``message`` names one of ``landmarks`` (as a word, in any case).

    >>> names_landmark("go to the key", ["key"]), names_landmark("keyboard", ["key"])
    (True, False)
    """
    lowered = message.lower() if message.isascii() else None
    return any(
        (lowered is None or not name.isascii() or name.lower() in lowered)  # (see _lacks)
        and _landmark_pattern(name).search(message) is not None
        for name in landmarks
    )


def _lacks(text: str, *words: str) -> bool:
    """Whether an ASCII ``text`` holds none of ``words`` (lower-case ASCII) in any case: then no
    case-insensitive pattern that needs one of them can match it, so the pattern need not run.
    False for any other text (a case-insensitive pattern also matches letters outside ASCII
    that ``lower`` does not fold into its own, such as the Kelvin sign for ``k``)."""
    if not text.isascii():
        return False
    lowered = text.lower()
    return not any(word in lowered for word in words)


@lru_cache(maxsize=1024)
def _landmark_pattern(name: str) -> re.Pattern[str]:
    """The pattern of one landmark's name as a word (one per name of the vocabulary, not one
    per game's set of landmarks: a thousand games compile a few dozen patterns)."""
    return re.compile(rf"\b(?:{re.escape(name)})\b", re.IGNORECASE)


def states_offset(text: str) -> bool:
    """Whether ``text`` writes one agent's frame as another's plus an offset.

    >>> states_offset("so B = A + (6,0)"), states_offset("B frame = C frame + (4,-3)")
    (True, True)
    >>> states_offset("A = 3")
    False
    """
    if "=" not in text:  # (what every match holds; a quick test for the many lines without)
        return False
    return _OFFSET_NOTE.search(text) is not None


def doubts_trail(line: str) -> bool:
    """Whether one line of a note doubts the trail (module docstring).

    >>> doubts_trail("trail lagged again"), doubts_trail("position conflicts with trail")
    (True, True)
    >>> doubts_trail("trail: [0, 1], [0, 2]"), doubts_trail("the map is wrong")
    (False, False)
    """
    if _lacks(line, "trail"):
        return False
    return _TRAIL.search(line) is not None and _DOUBT.search(line) is not None


def has_coordinates(message: str) -> bool:
    """Whether a radio message carries a coordinate pair (see the module docstring)."""
    if "[" not in message and "(" not in message and "=" not in message and ":" not in message:
        return False  # (every match holds one of them)
    return _PAIR.search(message) is not None


def names_frame(message: str) -> bool:
    """Whether a radio message says whose frame its coordinates are in."""
    if _lacks(message, "frame", "absolute", "coord", "="):  # (one of them is in every match)
        return False
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
