"""How labyrinths are built: the structure figures compared between our packs and the real maps.

The real engine's generator is closed; its recordings (``../shared/agimaze/traces/``, SPEC
section 1) show a few thousand of its labyrinths. :func:`structure` measures the figures those
recordings allow, on any :class:`~maze_envs.agimaze.types.Labyrinth`:

* ``extra_openings``: open interior edges beyond a spanning tree, ``open - (cells - 1)`` (a
  connected board has at least ``cells - 1``; a perfect maze has exactly that);
* ``river_arrows``: the arrow cells of each river (its mouth not counted);
* ``mouth_pockets``: for each river, the cells a player reaches from its mouth by walking
  without entering any river arrow (the mouth included): the pocket the current delivers the
  player into. A pocket smaller than the board's non-arrow cells is closed off from the rest
  except through arrows, which is how a river becomes a trap;
* ``river_share``: the share of the board's cells that lie on a river (arrows and mouths).

:func:`recorded_labyrinths` reads the recordings into labyrinths, one per distinct real labyrinth
(a player glyph ``S`` hides the cell under it; records of the same labyrinth fill each other in),
and :func:`summarize` turns a list of structures into the figures of the comparison table
(``benchmarks/agimaze_structure.py``).

Example:
    >>> from maze_envs.agimaze.types import ExitGap, Labyrinth, River
    >>> lab = Labyrinth(rows=1, cols=4, open_edges=[[2, 10, 10, 8]],
    ...                 exit=ExitGap(cell=(0, 0), side="left"), start=(0, 0),
    ...                 rivers=[River(cells=[(0, 2)], mouth=(0, 3))])
    >>> s = structure(lab)
    >>> s.extra_openings, s.river_arrows, s.mouth_pockets, s.river_share
    (0, (1,), (1,), 0.5)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from maze_envs.agimaze.mapfmt import MapFormatError, board_size, parse_map, put_glyphs
from maze_envs.agimaze.types import DIRECTION_BITS, DIRECTION_DELTAS, Labyrinth, Pos

_MAP: Final = re.compile(r"<MAP>\n(.*?)\n</MAP>", re.S)
_PLAYER: Final = "S"


@dataclass(frozen=True)
class Structure:
    """The structure figures of one labyrinth (see the module docstring)."""

    cells: int
    extra_openings: int
    river_arrows: tuple[int, ...]
    mouth_pockets: tuple[int, ...]
    river_cells: int

    @property
    def river_share(self) -> float:
        return self.river_cells / self.cells

    @property
    def closed_pockets(self) -> int:
        """Rivers whose mouth pocket is cut off from the rest of the board's non-arrow cells."""
        free = self.cells - sum(self.river_arrows)
        return sum(1 for pocket in self.mouth_pockets if pocket < free)


def _open(lab: Labyrinth, cell: Pos, direction: str) -> bool:
    return bool(lab.open_edges[cell[0]][cell[1]] & DIRECTION_BITS[direction])


def _pocket(lab: Labyrinth, mouth: Pos, arrows: set[Pos]) -> int:
    seen, stack = {mouth}, [mouth]
    while stack:
        cell = stack.pop()
        for direction, (dr, dc) in DIRECTION_DELTAS.items():
            there = (cell[0] + dr, cell[1] + dc)
            if _open(lab, cell, direction) and there not in arrows and there not in seen:
                seen.add(there)
                stack.append(there)
    return len(seen)


def structure(lab: Labyrinth) -> Structure:
    """The structure figures of ``lab``."""
    cells = lab.rows * lab.cols
    bits = sum(bin(mask).count("1") for row in lab.open_edges for mask in row)
    arrows = {cell for river in lab.rivers for cell in river.cells}
    return Structure(
        cells=cells,
        extra_openings=bits // 2 - (cells - 1),
        river_arrows=tuple(len(river.cells) for river in lab.rivers),
        mouth_pockets=tuple(_pocket(lab, river.mouth, arrows) for river in lab.rivers),
        river_cells=sum(len(river.cells) + 1 for river in lab.rivers),
    )


def summarize(structures: Sequence[Structure]) -> dict[str, Any]:
    """The comparison figures of a group of labyrinths.

    ``labyrinths``; ``extra_openings`` (mean) and ``extra_openings_counts`` (value -> share of
    labyrinths); ``rivers`` (count); ``river_arrows`` (mean) and ``river_arrows_counts``;
    ``pocket_share`` (mean of pocket size / non-arrow cells); ``closed_pockets`` (share of rivers
    whose pocket is cut off); ``river_share`` (mean share of cells on rivers, over labyrinths
    with a river). Means are ``None`` where nothing was measured.
    """

    def mean(values: Sequence[float]) -> float | None:
        return float(np.mean(values)) if values else None

    def shares(values: Sequence[int]) -> dict[int, float]:
        found = sorted(set(values))
        return {v: values.count(v) / len(values) for v in found}

    extra = [s.extra_openings for s in structures]
    arrows = [a for s in structures for a in s.river_arrows]
    pocket_share = [
        p / (s.cells - sum(s.river_arrows)) for s in structures for p in s.mouth_pockets
    ]
    closed = sum(s.closed_pockets for s in structures)
    with_river = [s.river_share for s in structures if s.river_arrows]
    return {
        "labyrinths": len(structures),
        "extra_openings": mean(extra),
        "extra_openings_counts": shares(extra),
        "rivers": len(arrows),
        "river_arrows": mean(arrows),
        "river_arrows_counts": shares(arrows),
        "pocket_share": mean(pocket_share),
        "closed_pockets": closed / len(arrows) if arrows else None,
        "river_share": mean(with_river),
    }


# --- the real engine's recordings --------------------------------------------------------------


def _walls(text: str) -> str:
    """The map text with every cell glyph blanked: walls and frame only."""
    lines = text.split("\n")
    for n in range(1, len(lines), 2):
        chars = list(lines[n])
        chars[2::4] = " " * len(chars[2::4])
        lines[n] = "".join(chars)
    return "\n".join(lines)


def _glyphs(text: str) -> dict[Pos, str]:
    return {
        (r, c): glyph
        for r, line in enumerate(text.split("\n")[1::2])
        for c, glyph in enumerate(line[2::4])
    }


@dataclass
class _Seen:
    """What the records of one labyrinth show: glyphs (S excluded) and the player's cells."""

    walls: str
    glyphs: dict[Pos, str]
    players: set[Pos]


def _family(path: Path) -> str:
    """``3x4-rivers`` from a recording name such as ``3x4-rivers-8step-rnd-valid.jsonl``."""
    size, kind = path.name.split("-")[:2]
    return f"{size}-{kind}"


def recorded_maps(traces: Path) -> dict[str, list[tuple[str, bool]]]:
    """Every distinct map of the recordings under ``traces``, by family (``3x4-rivers``).

    Each map is ``(text, on_floor)``: ``on_floor`` is true for ``seq`` and ``txt`` records,
    whose player stands on the trace's start cell, which the SPEC shows is always plain floor
    (never an item, an arrow or a mouth), and false for ``per_step`` records, where the player
    may hide anything. Reads the train and valid JSON-lines files.
    """
    out: dict[str, set[tuple[str, bool]]] = {}
    for file in sorted(traces.glob("*/*.jsonl")):
        found = out.setdefault(_family(file), set())
        on_floor = file.parent.name != "per_step"
        for line in file.read_text(encoding="ascii").splitlines():
            record = json.loads(line)
            text = record.get("input") or record.get("trace") or ""
            match = _MAP.search(text)
            if match is not None:
                found.add((match.group(1), on_floor))
    return {family: sorted(maps) for family, maps in sorted(out.items())}


def merge_records(maps: Iterable[tuple[str, bool]]) -> list[_Seen]:
    """Group maps into labyrinths: same walls, and the same glyph wherever both show one.

    The player ``S`` hides the glyph under it (unless the map is ``on_floor``: see
    :func:`recorded_maps`), so two records of one labyrinth differ only where either shows the
    player; each group keeps the union of what its records show.
    """
    groups: dict[str, list[_Seen]] = {}
    for text, on_floor in maps:
        walls = _walls(text)
        glyphs = _glyphs(text)
        player = next(cell for cell, glyph in glyphs.items() if glyph == _PLAYER)
        shown = {cell: glyph for cell, glyph in glyphs.items() if glyph != _PLAYER}
        if on_floor:
            shown[player] = " "
        for seen in groups.setdefault(walls, []):
            if all(seen.glyphs.get(cell, glyph) == glyph for cell, glyph in shown.items()):
                seen.glyphs.update(shown)
                seen.players.add(player)
                break
        else:
            groups[walls].append(_Seen(walls, shown, {player}))
    return [seen for found in groups.values() for seen in found]


def _labyrinth(seen: _Seen) -> Labyrinth | None:
    """The labyrinth of a group, started on a cell the records show as floor.

    None when some cell is never shown (always under the player) or no record shows the player
    on a plain floor cell.
    """
    rows, cols = board_size(seen.walls)
    if len(seen.glyphs) != rows * cols:
        return None
    start = next((p for p in sorted(seen.players) if seen.glyphs.get(p) == " "), None)
    if start is None:
        return None
    text = put_glyphs(put_glyphs(seen.walls, seen.glyphs), {start: _PLAYER})
    try:
        lab = parse_map(text).labyrinth
    except MapFormatError:
        return None
    # every recorded labyrinth shows its key and chest (items stay drawn): a group without them
    # merged records of two labyrinths that share their walls
    return lab if lab.key is not None and lab.chest is not None else None


def recorded_labyrinths(traces: Path) -> dict[str, list[Labyrinth]]:
    """One labyrinth per distinct real labyrinth of the recordings under ``traces``, by family.

    A group with a cell no record shows (always under the player), whose records never show
    the player on a plain floor cell, whose glyphs do not make a valid labyrinth, or that lacks
    the key or the chest (records of two labyrinths with the same walls merged), is left out.
    """
    out: dict[str, list[Labyrinth]] = {}
    for family, maps in recorded_maps(traces).items():
        labs = [_labyrinth(seen) for seen in merge_records(maps)]
        out[family] = [lab for lab in labs if lab is not None]
    return out


__all__ = [
    "Structure",
    "merge_records",
    "recorded_labyrinths",
    "recorded_maps",
    "structure",
    "summarize",
]
