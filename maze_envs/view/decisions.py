"""The per-decision records of a journaled game, laid out for a viewer page.

The runner attaches each policy's decision record (for a language model: the prompt, the raw
reply, the parsed action, usage, cost...) to the turn whose action it chose. Large texts repeated
from turn to turn (a prompt's stable prefix) are journal blobs: the record holds
``{"$blob": key}`` and the page keeps one copy of each text in its ``blobs`` table, so a long
prompt is stored once, not 600 times.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from maze_envs.journal import Journal, JournalError, TurnRecord
from maze_envs.metrics import METRIC, metrics_for

#: The viewer's metrics :func:`metric_lines` words into its sentence; any other row of
#: METRICS the viewer shows follows as "label value".
_IN_THE_SENTENCE: Final = frozenset(
    {"decisions", "fallbacks", "outages", "wall_move_rate", "moves_tried"}
)

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


def metric_lines(metrics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per agent (and the team) of a page's decision metrics
    (:func:`maze_envs.metrics.decision_metrics`), e.g. ``A: 12 decisions (1 fallback),
    wall-move rate 25.0% (2 of 8 moves tried), 3 STAY``.

    >>> metric_lines({"A": {"decisions": 4, "fallbacks": 1, "outages": 0, "moves_tried": 2,
    ...                     "wall_moves": 1, "wall_move_rate": 0.5, "stays": 1}})
    ['A: 4 decisions (1 fallback), wall-move rate 50.0% (1 of 2 moves tried), 1 STAY']
    """
    rate, tried = METRIC["wall_move_rate"], METRIC["moves_tried"].label
    lines = []
    for name, counts in metrics.items():
        apart = [
            f"{counts[key]} {METRIC[key].label.removesuffix('s')}"
            for key in ("fallbacks", "outages")
            if counts.get(key)
        ]
        text = f"{name}: {counts['decisions']} {METRIC['decisions'].label}"
        text += f" ({', '.join(apart)})" if apart else ""
        text += (
            ", no move tried"
            if counts.get("wall_move_rate") is None
            else f", {rate.label} {rate.format(counts['wall_move_rate'])} "
            f"({counts['wall_moves']} of {counts['moves_tried']} {tried})"
        )
        if "stays" in counts:
            text += f", {counts['stays']} STAY"
        text += "".join(
            f", {m.label} {m.format(counts[m.column('viewer')])}"
            for m in metrics_for("viewer")
            if m.name not in _IN_THE_SENTENCE and m.column("viewer") in counts
        )
        lines.append(text)
    return lines
