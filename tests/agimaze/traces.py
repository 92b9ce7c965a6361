"""Parsing the real engine's recordings (../shared/agimaze/traces) for the conformance tests.

Record schemas (traces/MANIFEST.md):

* per_step / seq: ``input`` = a ``<MAP>`` block then ``<ACT>a</ACT>`` lines, ``target`` =
  ``<POS>(r, c)</POS>`` (the position after the actions).
* txt: ``trace`` = ``<MAP>``, ``<START>`` (board, start), then ``<ACT>``/``<TXT>`` pairs and
  ``<END>Win</END>`` when the trace ends with a win.

Only ``*valid*`` files are used; the ``*train*`` files are kept for acceptance.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_MAP = re.compile(r"<MAP>\n(.*?)\n</MAP>", re.S)
_ACT = re.compile(r"<ACT>(.*?)</ACT>")
_POS = re.compile(r"<POS>\((-?\d+), (-?\d+)\)</POS>")
_STEP = re.compile(r"<ACT>(.*?)</ACT>\n<TXT>(.*?)</TXT>", re.S)
_START = re.compile(r"<START>\nboard: (\d+)x(\d+)\nstart: \((\d+), (\d+)\)\n</START>")

Pos = tuple[int, int]


@dataclass(frozen=True)
class PositionRecord:
    """A per_step or seq record: a map, actions and the recorded final position."""

    line: int  # 1-based line number in its file
    map_text: str
    actions: list[str]
    target: Pos


@dataclass(frozen=True)
class NarrationTrace:
    """A txt record: a map, the start, and (action, narration) pairs."""

    line: int
    map_text: str
    board: tuple[int, int]
    start: Pos
    steps: list[tuple[str, str]]
    won: bool


def valid_files(traces_root: Path, kind: str) -> list[Path]:
    """The ``*valid*`` files of one kind (per_step, seq, txt), sorted; never the train files."""
    return sorted(p for p in (traces_root / kind).glob("*valid*.jsonl") if "train" not in p.name)


def read_position_records(path: Path) -> list[PositionRecord]:
    out: list[PositionRecord] = []
    for n, raw in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        record = json.loads(raw)
        found = _MAP.search(record["input"])
        pos = _POS.fullmatch(record["target"])
        if found is None or pos is None:
            raise ValueError(f"{path.name}:{n}: not a per_step/seq record")
        actions = _ACT.findall(record["input"][found.end() :])
        out.append(PositionRecord(n, found.group(1), actions, (int(pos[1]), int(pos[2]))))
    return out


def read_narration_traces(path: Path) -> list[NarrationTrace]:
    out: list[NarrationTrace] = []
    for n, raw in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        trace = json.loads(raw)["trace"]
        found, start = _MAP.search(trace), _START.search(trace)
        if found is None or start is None:
            raise ValueError(f"{path.name}:{n}: not a txt record")
        body = trace[start.end() :]
        steps = [(a, t) for a, t in _STEP.findall(body)]
        out.append(
            NarrationTrace(
                n,
                found.group(1),
                (int(start[1]), int(start[2])),
                (int(start[3]), int(start[4])),
                steps,
                body.rstrip("\n").endswith("<END>Win</END>"),
            )
        )
    return out


def player_cell(map_text: str) -> Pos:
    """Where ``S`` is drawn."""
    for r, line in enumerate(map_text.split("\n")[1::2]):
        col = line.find("S")
        if col >= 0:
            return r, (col - 2) // 4
    raise ValueError("no S on the map")


def _cell_glyphs(map_text: str) -> list[str]:
    return [line[2::4] for line in map_text.split("\n")[1::2]]


def _walls(map_text: str) -> str:
    """The map with every glyph blanked: walls and frame only."""
    lines = map_text.split("\n")
    out = []
    for n, line in enumerate(lines):
        if n % 2:
            chars = list(line)
            chars[2::4] = " " * len(chars[2::4])
            line = "".join(chars)
        out.append(line)
    return "\n".join(out)


def recover_hidden_glyphs(records: list[PositionRecord], window: int = 60) -> list[str | None]:
    """Glyph under ``S`` for each per_step record, read from a nearby record of the same maze.

    per_step files hold random-walk states of one maze in runs of nearby lines; another record
    of the same maze (same walls, same glyphs everywhere but under both players) shows the cell.
    None when no record within ``window`` lines settles it.
    """
    walls = [_walls(r.map_text) for r in records]
    glyphs = [_cell_glyphs(r.map_text) for r in records]
    players = [player_cell(r.map_text) for r in records]
    out: list[str | None] = []
    for i in range(len(records)):
        p = players[i]
        found: str | None = None
        for dist in range(1, window + 1):
            for j in (i - dist, i + dist):
                if not 0 <= j < len(records) or players[j] == p or walls[j] != walls[i]:
                    continue
                q = players[j]
                if _same_except(glyphs[i], glyphs[j], {p, q}):
                    found = glyphs[j][p[0]][p[1]]
                    break
            if found is not None:
                break
        out.append(found)
    return out


def _same_except(a: list[str], b: list[str], cells: set[Pos]) -> bool:
    for r, (row_a, row_b) in enumerate(zip(a, b, strict=True)):
        if row_a == row_b:
            continue
        for c, (x, y) in enumerate(zip(row_a, row_b, strict=True)):
            if x != y and (r, c) not in cells:
                return False
    return True


#: file label -> (agreeing, total, unit); filled by the conformance tests, printed by conftest.
AGREEMENT: dict[str, tuple[int, int, str]] = {}
