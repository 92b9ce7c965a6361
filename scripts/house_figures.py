"""The house's figures, drawn from the code (issue 26): floors, rooms, arrows up, import circles,
size, and duplicate-code pairs. Run from the repository root::

    .venv/bin/python scripts/house_figures.py            # the figures
    .venv/bin/python scripts/house_figures.py --details  # and what each figure counts

Definitions (the same in every run, so two commits compare):

* **imports**: every import statement of ``maze_envs``, ``wrappers`` and ``llm_policies`` that
  names a module of them, as grimp draws it: lazy imports inside functions and imports under
  ``if TYPE_CHECKING:`` included.
* **floors**: the layers of the ``floors`` contract of ``[tool.importlinter]`` in pyproject.toml
  (``a | b`` and ``a : b`` are one floor); a module's floor is that of the longest name of the
  contract it lies in.
* **rooms**: the package folders, each with its subfolders; the three root packages are no room
  (they hold every floor): each of their own modules is a room of its own.
* **arrow up**: a room that imports a room whose highest floor lies above its own highest floor
  (a folder that holds two floors shows up here: who imports its lower part reaches the upper one).
* **import circles**: the strongly connected groups of two or more modules (each module reaches
  every other one of its group through imports).
* **duplicate-code pairs**: pairs of places in two files (or two places of one file) that share a
  run of six or more lines, identical or of the same shape: each line is compared after its
  names, numbers and strings are replaced by placeholders, so a copy with other names counts.
  Blank lines, comments and docstring-only lines are left out before comparing; runs made only of
  imports, ``__all__`` entries, brackets or decorators are not counted. A pair is counted once
  however long the run (two files sharing two separate runs count twice). "Inside the library":
  both places in ``maze_envs``, ``wrappers`` or ``llm_policies``; the total adds ``tests``,
  ``examples``, ``benchmarks`` and ``scripts``.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tokenize
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("maze_envs", "wrappers", "llm_policies")
OTHER_CODE = ("tests", "examples", "benchmarks", "scripts")
RUN = 6


# --- the import graph ------------------------------------------------------------------------


def floors() -> list[list[str]]:
    """The floors contract's layers, top first, each a list of module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "floors"]
    return [
        [part.strip() for part in layer.replace(":", "|").split("|")]
        for layer in contract["layers"]
    ]


def floor_of(module: str, layers: list[list[str]]) -> int | None:
    """The height of ``module``'s floor (0 = the lowest), or None when it lies in none."""
    best: tuple[int, int] | None = None
    for index, names in enumerate(layers):
        for name in names:
            inside = module == name or module.startswith(name + ".")
            if inside and (best is None or len(name) > best[0]):
                best = (len(name), len(layers) - 1 - index)
    return None if best is None else best[1]


def room_of(module: str) -> str:
    """The room of a module: its second-level package (a root's own module is its own room)."""
    return ".".join(module.split(".")[:2])


def import_graph():  # type: ignore[no-untyped-def]
    import grimp

    sys.path.insert(0, str(ROOT))
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two or more nodes."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return groups


def structure(details: bool) -> dict[str, object]:
    graph = import_graph()
    layers = floors()
    modules = set(graph.modules)
    edges: dict[str, set[str]] = defaultdict(set)
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported in modules and imported != module:
                edges[module].add(imported)
    # rooms: second-level packages (with their subfolders), or a root's own module
    rooms: dict[str, set[str]] = defaultdict(set)
    for module in modules:
        if module in PACKAGES:
            continue
        rooms[room_of(module)].add(module)
    room_floor = {}
    for room, members in rooms.items():
        heights = [floor_of(m, layers) for m in members]
        room_floor[room] = max((h for h in heights if h is not None), default=-1)
    module_room = {m: r for r, members in rooms.items() for m in members}
    arrows = set()
    for importer, targets in edges.items():
        for imported in targets:
            a, b = module_room.get(importer), module_room.get(imported)
            if a is None or b is None or a == b:
                continue
            if room_floor[b] > room_floor[a]:
                arrows.add((a, b, importer, imported))
    arrow_pairs = sorted({(a, b) for a, b, _, _ in arrows})
    circles = strongly_connected(modules, edges)
    unplaced = sorted(m for m in modules - set(PACKAGES) if floor_of(m, layers) is None)
    multi_floor = sorted(
        room
        for room, members in rooms.items()
        if len({floor_of(m, layers) for m in members} - {None}) > 1
    )
    lines = sum(
        len(p.read_text(encoding="utf-8").splitlines())
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
    )
    figures: dict[str, object] = {
        "modules": len(modules),
        "lines": lines,
        "floors": len(layers),
        "rooms": len(rooms),
        "arrows up (room pairs)": len(arrow_pairs),
        "import circles": len(circles),
        "rooms holding two or more floors": len(multi_floor),
        "modules in no floor": len(unplaced),
    }
    if details:
        for a, b in arrow_pairs:
            via = sorted(f"{i} -> {j}" for x, y, i, j in arrows if (x, y) == (a, b))
            print(f"arrow up: {a} ({room_floor[a]}) -> {b} ({room_floor[b]}): {'; '.join(via)}")
        for circle in circles:
            print(f"circle: {' <-> '.join(circle)}")
        for room in multi_floor:
            print(f"room holding two floors: {room}")
        for module in unplaced:
            print(f"in no floor: {module}")
    return figures


# --- duplicate code --------------------------------------------------------------------------

# Python 3.12 tokenizes f-strings in parts: the start stands for the string, the rest is dropped
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_REST = {getattr(tokenize, n, -1) for n in ("FSTRING_MIDDLE", "FSTRING_END")}
# lines left out before comparing: imports, brackets alone, decorators, `__all__ = [`
_TRIVIAL = re.compile(r"^(from \S+ import|import |[)\]}]+[,:]?$|@|__all__ )")
# lines of literals only (strings, numbers, punctuation): data or message text, not code
_DATA_ONLY = re.compile(r"^[S0\s(){}\[\],:+\-*%.=]*$")


def shape_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, shape) of the code lines of a file: names, numbers and strings replaced by
    placeholders, comments and docstrings dropped."""
    source = path.read_text(encoding="utf-8")
    shapes: dict[int, list[str]] = defaultdict(list)
    previous = tokenize.NEWLINE
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for tok in tokens:
        kind, text = tok.type, tok.string
        if kind in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT):
            previous = kind if kind != tokenize.COMMENT else previous
            continue
        if kind in (tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        if kind == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, None):
            # a statement that is only a string: a docstring
            previous = kind
            continue
        if kind == tokenize.NUMBER:
            word = "0"
        elif kind == tokenize.STRING or kind == _FSTRING_START:
            word = "S"
        elif kind in _FSTRING_REST:
            continue
        else:
            word = text
        shapes[tok.start[0]].append(word)
        previous = kind
    lines = source.splitlines()
    out = []
    for number in sorted(shapes):
        shape = " ".join(shapes[number])
        if _DATA_ONLY.match(shape) or _trivial(lines[number - 1]):
            continue
        out.append((number, shape))
    return out


def _keyword(word: str) -> bool:
    import keyword

    return keyword.iskeyword(word) or word in {"self", "cls", "None", "True", "False"}


def _trivial(raw: str) -> bool:
    return bool(_TRIVIAL.match(raw.strip()))


def duplicates(roots: tuple[str, ...]) -> list[tuple[str, int, str, int, int]]:
    """Pairs of places sharing a run of RUN or more same-shape code lines."""
    files = sorted(p for root in roots for p in (ROOT / root).rglob("*.py"))
    seqs: dict[Path, list[tuple[int, str]]] = {}
    windows: dict[tuple[str, ...], list[tuple[Path, int]]] = defaultdict(list)
    for path in files:
        if ".venv" in path.parts:
            continue
        seqs[path] = shape_lines(path)
        seq = seqs[path]
        for start in range(len(seq) - RUN + 1):
            window = seq[start : start + RUN]
            windows[tuple(s for _, s in window)].append((path, start))
    # grow the matching windows into maximal runs: one pair per (file a, file b, run)
    seen: set[tuple[Path, int, Path, int]] = set()
    pairs = []
    for places in windows.values():
        if len(places) < 2 or len(places) > 40:  # 40+: boilerplate shapes, not copies
            continue
        for i, (pa, sa) in enumerate(places):
            for pb, sb in places[i + 1 :]:
                if pa == pb and abs(sa - sb) < RUN:
                    continue
                # walk back to the start of the run, so each run is counted once
                a, b = sa, sb
                while a > 0 and b > 0 and seqs[pa][a - 1][1] == seqs[pb][b - 1][1]:
                    if pa == pb and abs(a - b) < RUN:
                        break
                    a, b = a - 1, b - 1
                if (pa, a, pb, b) in seen:
                    continue
                seen.add((pa, a, pb, b))
                length = 0
                while (
                    a + length < len(seqs[pa])
                    and b + length < len(seqs[pb])
                    and seqs[pa][a + length][1] == seqs[pb][b + length][1]
                ):
                    length += 1
                pairs.append(
                    (
                        str(pa.relative_to(ROOT)),
                        seqs[pa][a][0],
                        str(pb.relative_to(ROOT)),
                        seqs[pb][b][0],
                        length,
                    )
                )
    return sorted(pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true", help="list what each figure counts")
    parser.add_argument("--no-duplicates", action="store_true", help="skip the duplicate scan")
    args = parser.parse_args(argv)
    figures = structure(args.details)
    if not args.no_duplicates:
        library = duplicates(PACKAGES)
        everything = duplicates(PACKAGES + OTHER_CODE)
        figures["duplicate-code pairs inside the library"] = len(library)
        figures["duplicate-code pairs, library + tests/examples/benchmarks/scripts"] = len(
            everything
        )
        if args.details:
            for a, la, b, lb, n in library:
                print(f"duplicate: {a}:{la} ~ {b}:{lb} ({n} lines)")
    width = max(map(len, figures))
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
