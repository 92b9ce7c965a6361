"""The ``maze-envs`` command line: routing only.

Each command lives in the module that owns the feature, as ``main(argv) -> int`` building its own
``argparse`` parser (``prog="maze-envs <words>"``); this module maps command words to those
functions, so adding a command is one row of :data:`COMMANDS` and never touches another feature.
Command groups (``maze-envs agimaze``) list their commands; ``--version`` prints the version.

Commands of packages above ``maze_envs`` (which it must not import: ``llm_policies``,
``wrappers``) come from the entry-point group :data:`ENTRY_POINT_GROUP` (``maze_envs.commands``):
the entry point's name is the command words joined by spaces (``"contract start"``), its value
the ``"module:function"``; the command's help line is the first line of the function's
docstring (without a leading ````maze-envs ...``:````). An entry point that names a string
(``contract = "wrappers.contract.cli:GROUP_HELP"``) gives the help line of a command group.
They are merged with :data:`COMMANDS` (built-in rows win) at lookup and in ``--help``, and only
the module of the command that runs is imported (listings import the plug-ins' modules for their
help lines; one that fails to import is listed as unavailable).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Iterable, Iterator, Sequence
from importlib.metadata import entry_points
from typing import Final

#: command words -> ("module:function", one-line help)
COMMANDS: dict[tuple[str, ...], tuple[str, str]] = {
    ("bench",): (
        "maze_envs.bench.command:main",
        "run a benchmark: env setups x policies x seeds, journaled, with tables and plots",
    ),
    ("verify",): (
        "maze_envs.verify:main",
        "replay every game in a journal (both environments) and check every turn",
    ),
    ("view",): (
        "maze_envs.view.cli:main",
        "write self-contained HTML pages of journaled games (both environments)",
    ),
    ("analyze",): (
        "maze_envs.bench.analysis.cli:main",
        "behavioural metrics of journaled Maze Escape games per agent and game (table, CSV)",
    ),
    ("study", "list"): (
        "maze_envs.studies.cli:list_main",
        "the studies shipped with maze-envs, each with the question it answers",
    ),
    ("study", "show"): (
        "maze_envs.studies.cli:show_main",
        "print a study's file (TOML: a starting point to copy)",
    ),
    ("study", "report"): (
        "maze_envs.studies.cli:report_main",
        "(re)write the report of a study run from its folder (Markdown, HTML, plots)",
    ),
    ("agimaze", "serve"): (
        "maze_envs.agimaze.api.server:main",
        "serve the AGI Maze HTTP API over the embedded engine and packs",
    ),
    ("agimaze", "build-packs"): (
        "maze_envs.agimaze.packs.build:main",
        "regenerate the shipped AGI Maze packs (deterministic)",
    ),
}

#: command groups -> one-line help
GROUPS: dict[tuple[str, ...], str] = {
    ("agimaze",): "AGI Maze tools: the offline HTTP server and the pack builder",
    (
        "study",
    ): "replicated, paired studies of the Maze Escape write-up's questions (run: llm extra)",
}


#: Entry-point group of the commands of other packages (see the module docstring).
ENTRY_POINT_GROUP: Final = "maze_envs.commands"


def plugin_entries() -> dict[tuple[str, ...], str]:
    """Command words -> ``"module:attribute"`` of every ``maze_envs.commands`` entry point."""
    found: dict[tuple[str, ...], str] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        words = tuple(point.name.split())
        if words:
            found.setdefault(words, point.value)
    return found


def _is_group(words: tuple[str, ...], table: Iterable[tuple[str, ...]]) -> bool:
    return any(len(w) > len(words) and w[: len(words)] == words for w in table)


def _loaded(target: str) -> object:
    module_name, _, attribute = target.partition(":")
    loaded: object = importlib.import_module(module_name.strip())
    for part in attribute.strip().split(".") if attribute else ():
        loaded = getattr(loaded, part)
    return loaded


def _help_line(target: str) -> str:
    """The one-line help of a plug-in entry (a string, or a function's docstring)."""
    try:
        loaded = _loaded(target)
    except Exception as exc:  # a broken plug-in must not break the listing
        return f"(unavailable: {type(exc).__name__}: {exc})"
    text = loaded if isinstance(loaded, str) else (getattr(loaded, "__doc__", None) or "")
    line = text.strip().split("\n", 1)[0].strip()
    if line.startswith("``maze-envs") and "``:" in line:
        line = line.split("``:", 1)[1].strip()
    return line.rstrip(".") or target


def all_commands() -> dict[tuple[str, ...], tuple[str, str | None]]:
    """Every command: :data:`COMMANDS` rows and plug-in commands (help ``None``: not loaded)."""
    table: dict[tuple[str, ...], tuple[str, str | None]] = dict(COMMANDS)
    plugins = plugin_entries()
    for words, target in plugins.items():
        if words not in table and not _is_group(words, {**plugins, **COMMANDS}):
            table[words] = (target, None)
    return table


def all_groups() -> dict[tuple[str, ...], str | None]:
    """Every command group's help: :data:`GROUPS` and plug-in group entries (None: not loaded)."""
    groups: dict[tuple[str, ...], str | None] = dict(GROUPS)
    plugins = plugin_entries()
    table = {**plugins, **COMMANDS}
    for words in plugins:
        if words not in groups and _is_group(words, table):
            groups[words] = None
    return groups


def _version() -> str:
    from maze_envs import __version__

    return __version__


def _commands_under(prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """(words after ``prefix``, help) of every command and group directly below ``prefix``."""
    seen: set[tuple[str, ...]] = set()
    groups = all_groups()
    plugins = plugin_entries()
    for words, (target, help_text) in all_commands().items():
        if words[: len(prefix)] != prefix or len(words) == len(prefix):
            continue
        head = words[: len(prefix) + 1]
        if head in seen:
            continue
        seen.add(head)
        if len(words) == len(head):
            yield head[len(prefix) :], help_text if help_text is not None else _help_line(target)
        else:
            group_help = groups.get(head)
            if group_help is None and head in plugins:
                group_help = _help_line(plugins[head])
            yield head[len(prefix) :], group_help or "command group"


def _parser(prefix: tuple[str, ...]) -> argparse.ArgumentParser:
    """The help-and-errors parser of the top level or of a command group."""
    prog = " ".join(("maze-envs", *prefix))
    listing = "\n".join(
        f"  {' '.join(words):<22} {help_text}" for words, help_text in _commands_under(prefix)
    )
    parser = argparse.ArgumentParser(
        prog=prog,
        usage=f"{prog} [-h]{' [--version]' if not prefix else ''} COMMAND [ARGS...]",
        description=("Maze environments for research on agents." if not prefix else _group(prefix)),
        epilog=f"commands:\n{listing}\n\nRun `{prog} COMMAND --help` for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if not prefix:
        parser.add_argument("--version", action="version", version=f"maze-envs {_version()}")
    return parser


def _group(prefix: tuple[str, ...]) -> str | None:
    if prefix in GROUPS:
        return GROUPS[prefix]
    target = plugin_entries().get(prefix)
    return _help_line(target) if target is not None else None


def _run(target: str, words: tuple[str, ...], argv: list[str]) -> int:
    function = _loaded(target)
    if not callable(function):
        raise TypeError(f"the command target {target!r} is not a function")
    # A parser that leaves ``prog`` unset takes it from argv[0]: make that the command's name.
    saved, sys.argv[0] = sys.argv[0], " ".join(("maze-envs", *words))
    try:
        result: int = function(argv)
    finally:
        sys.argv[0] = saved
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``maze-envs`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    prefix: tuple[str, ...] = ()
    commands = all_commands()
    while True:
        words = (*prefix, args[len(prefix)]) if len(args) > len(prefix) else None
        if words is not None and words in commands:
            return _run(commands[words][0], words, args[len(words) :])
        if words is not None and any(w[: len(words)] == words for w in commands):
            prefix = words  # a command group: look at the next word
            continue
        parser = _parser(prefix)
        rest = args[len(prefix) :]
        if not rest or rest[0].startswith("-"):
            try:
                parser.parse_args(rest)  # --help / --version print and exit 0
            except SystemExit as exit_:
                return int(exit_.code or 0)
            parser.print_help()  # no command given: show what there is
            return 0
        choices = [" ".join(w) for w, _ in _commands_under(prefix)]
        close = difflib.get_close_matches(rest[0], choices, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        parser.print_usage(sys.stderr)
        print(
            f"{parser.prog}: error: unknown command {' '.join((*prefix, rest[0]))!r}{hint} "
            f"(commands: {', '.join(choices)})",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
