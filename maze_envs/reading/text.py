"""How one text changed into the next: the notebook changes the viewer marks and the analysis
measures (copied passages)."""

from __future__ import annotations


def common_affixes(a: str, b: str) -> tuple[int, int]:
    """Lengths of the longest common prefix and, after it, the longest common suffix.

    Found by halving on slice comparisons (done in C), not character by character: notebooks
    and prompts of thousands of characters change by a line at a time.

    >>> common_affixes("abXYc", "abc"), common_affixes("aaa", "aa"), common_affixes("", "x")
    ((2, 1), (2, 0), (0, 0))
    """
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    prefix = low
    low, high = 0, limit - prefix
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            low = mid
        else:
            high = mid - 1
    return prefix, low


__all__ = ["common_affixes"]
