"""The per-decision records of a journaled game, laid out for a viewer page.

The runner attaches each policy's decision record (for a language model: the prompt, the raw
reply, the parsed action, usage, cost...) to the turn whose action it chose. Large texts repeated
from turn to turn (a prompt's stable prefix) are journal blobs: the record holds
``{"$blob": key}`` and the page keeps one copy of each text in its ``blobs`` table, so a long
prompt is stored once, not 600 times.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from maze_envs.journal import Journal, JournalError, TurnRecord

BLOB_KEY = "$blob"


def blob_keys(value: Any) -> Iterator[str]:
    """Every blob key referenced anywhere inside ``value``.

    >>> sorted(blob_keys({"prompt": {"$blob": "ab"}, "x": [{"$blob": "cd"}, 3]}))
    ['ab', 'cd']
    """
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(BLOB_KEY), str):
            yield value[BLOB_KEY]
            return
        for item in value.values():
            yield from blob_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from blob_keys(item)


def decision_tables(
    journal: Journal, turns: Sequence[TurnRecord], agents: Sequence[str]
) -> tuple[dict[str, list[Any]] | None, dict[str, str]]:
    """({agent: [record or None per turn]}, {blob key: text}); None when no turn has records."""
    per_agent: dict[str, list[Any]] = {a: [] for a in agents}
    keys: set[str] = set()
    found = False
    for record in turns:
        decisions = record.decisions
        for agent in agents:
            item = decisions.get(agent)
            per_agent[agent].append(item)
            if item is not None:
                found = True
                keys.update(blob_keys(item))
    blobs: dict[str, str] = {}
    for key in sorted(keys):
        try:
            blobs[key] = journal.blob(key)
        except JournalError:  # absent or changed: the page shows the reference as missing
            continue
    return (per_agent if found else None), blobs
