"""``maze-envs view JOURNAL [--game ID] [--out FILE]``: write viewer pages of journaled games.

The page is chosen by the kind of the game's ``env_id`` in the table of environments
(:data:`PAGES`: Maze Escape, any version; AGI Maze and its labyrinth sets); a game of any other
environment (a kind without a page of its own, or one recorded by ``wrappers.recording``) gets
the generic page: its rows as recorded, marked as not verified by replay. Without
``--game`` every game of the journal gets a page, written as ``JOURNAL-gameN.html`` beside the
journal (or in ``--out`` when it names a directory); with ``--game`` (repeatable) only those.
The journal is opened read-only and never changed.

Every game is verified on the way (replayed, or its rows checked for a game of another
environment). A game that fails (or is unfinished: no outcome) still gets its page, drawn up
to its last good turn with the verdict in red, and a warning on the console.

Exit status: 0 pages written and every game verifies, 1 pages written but a game failed
verification or is unfinished, 2 not a usable journal or an unknown game id.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from maze_envs._registration import ENVIRONMENTS, load
from maze_envs.journal import Journal, JournalError, VerifyReport
from maze_envs.verify import journal_parser, open_games
from maze_envs.view.page import render_page

#: The page of each environment kind of the table that has a page of its own (import strings,
#: loaded for the games that need them); a game of any other kind, or of an environment outside
#: the library, gets the generic page: its rows as recorded.
PAGES: Final[dict[str, str]] = {
    "escape": "maze_envs.view.escape_data:escape_game_data",
    "agimaze": "maze_envs.view.agimaze_data:agimaze_game_data",
}


def game_data(journal: Journal, game_id: int, report: VerifyReport | None = None) -> dict[str, Any]:
    """The page data of any game (dispatch on the kind of its ``env_id`` in the table;
    ``report``: its verification, when already made on this journal)."""
    info = journal.game(game_id)
    kinds = {entry.id: entry.kind for entry in ENVIRONMENTS}
    page = PAGES.get(kinds.get(info.env_id, ""))
    if page is not None:
        make: Callable[[Journal, int, VerifyReport | None], dict[str, Any]] = load(page)
        return make(journal, game_id, report)
    from maze_envs.view.generic_data import generic_game_data

    return generic_game_data(journal, game_id, report)


def _title(data: dict[str, Any]) -> str:
    if data["kind"] == "generic":
        return (
            f"{data['env_id']} game {data['game']}, seed {data['seed']} (recorded, not replayable)"
        )
    name = "Maze Escape" if data["kind"] == "escape" else "AGI Maze"
    return f"{name} game {data['game']}, seed {data['seed']}"


def game_html(
    journal: Journal,
    game_id: int,
    *,
    compress: bool | None = None,
    report: VerifyReport | None = None,
) -> str:
    """The whole page of one game (``compress``: force or forbid the gzip payload; ``report``:
    the game's verification, when already made on this journal: it is not replayed again)."""
    data = game_data(journal, game_id, report)
    return render_page(_title(data), data["kind"], data, compress=compress)


def escape_game_html(journal: Journal, game_id: int, *, compress: bool | None = None) -> str:
    """The page of one Maze Escape game."""
    from maze_envs.view.escape_data import escape_game_data

    data = escape_game_data(journal, game_id)
    return render_page(_title(data), "escape", data, compress=compress)


def agimaze_game_html(journal: Journal, game_id: int, *, compress: bool | None = None) -> str:
    """The page of one AGI Maze game."""
    from maze_envs.view.agimaze_data import agimaze_game_data

    data = agimaze_game_data(journal, game_id)
    return render_page(_title(data), "agimaze", data, compress=compress)


def verified(data: dict[str, Any]) -> bool:
    """Whether the game of page ``data`` verified (its rows only, for a generic game)."""
    return bool(data["rows_intact"] if data["kind"] == "generic" else data["verified"])


def _out_path(journal: Path, out: str | None, game_id: int, many: bool) -> Path:
    default = f"{journal.with_suffix('').name}-game{game_id}.html"
    if out is None:
        return journal.with_name(default)
    target = Path(out)
    if target.is_dir() or (many and not target.suffix):
        return target / default
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Write the viewer pages (see the module docstring)."""
    parser = journal_parser(
        "maze-envs view",
        "Write a self-contained HTML page (no network) per journaled game, for both "
        "Maze Escape and AGI Maze, and for games of any other environment recorded by "
        "wrappers.recording (shown as recorded, not verified by replay): step through the game "
        "turn by turn and see what each agent saw and did. Exit status: 0 written, 1 written "
        "but a game does not verify (a warning names it), 2 not a "
        "journal or unknown game.",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="output file (one game) or directory (default: JOURNAL-gameN.html beside it)",
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    path = Path(args.journal)
    opened = open_games(path, "maze-envs view")
    if opened is None:
        return 2
    journal, ids = opened
    written = []
    with journal:
        wanted = args.game or ids
        unknown = sorted(set(wanted) - set(ids))
        if unknown:
            print(
                f"maze-envs view: no game {', '.join(map(str, unknown))} in {path}; games: {ids}",
                file=sys.stderr,
            )
            return 2
        if not wanted:
            print(f"maze-envs view: {path} holds no games", file=sys.stderr)
            return 2
        if args.out and len(wanted) > 1 and Path(args.out).suffix == ".html":
            print("maze-envs view: --out FILE names one page; give a directory", file=sys.stderr)
            return 2
        failed = []
        for game_id in wanted:
            try:
                data = game_data(journal, game_id)
            except (JournalError, ValueError) as exc:
                print(f"maze-envs view: game {game_id}: cannot draw it: {exc}", file=sys.stderr)
                return 2
            page = render_page(_title(data), data["kind"], data)
            target = _out_path(path, args.out, game_id, len(wanted) > 1)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(page, encoding="utf-8")
            written.append(target)
            print(f"wrote {target} ({len(page.encode()) / 1024:.0f} KiB)")
            if not verified(data):
                failed.append(game_id)
                print(
                    f"maze-envs view: warning: game {game_id} does not verify: "
                    f"{data['verification']}; its page draws {data['n']} turn(s) up to the "
                    "last good one",
                    file=sys.stderr,
                )
    if failed:
        print(
            f"maze-envs view: {len(failed)} of {len(wanted)} game(s) do not verify "
            f"({', '.join(map(str, failed))}); see `maze-envs verify {path}`",
            file=sys.stderr,
        )
        return 1
    return 0
