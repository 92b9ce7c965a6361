"""The ``maze-envs`` command line: routing only.

Each command lives in the module that owns the feature, as ``main(argv) -> int`` building its own
``argparse`` parser (``prog="maze-envs <words>"``); this module maps command words to those
functions, so adding a command is one row of :data:`COMMANDS` and never touches another feature.
Command groups (``maze-envs agimaze``) list their commands; ``--version`` prints the version.

Every command of the wheel is a row, the commands of the packages above ``maze_envs``
(``llm_policies``, ``wrappers``) too: a row names its function by an import string, so this
module imports none of them, and only the module of the command that runs is imported.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence

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
    ("study", "run"): (
        "llm_policies.apps.study_run:main",
        "play a study with a model, through the benchmark runner (llm extra)",
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
    ("replay-decisions",): (
        "llm_policies.apps.replay:main",
        "replay a journal's decisions and print the report",
    ),
    ("contract", "start"): ("wrappers.contract.cli:start_main", "start a session in a workspace"),
    ("contract", "move"): ("wrappers.contract.cli:move_main", "send one JSON action"),
    ("contract", "status"): (
        "wrappers.contract.cli:status_main",
        "print the session's status.json",
    ),
}

#: command groups -> one-line help
GROUPS: dict[tuple[str, ...], str] = {
    ("agimaze",): "AGI Maze tools: the offline HTTP server and the pack builder",
    ("contract",): "play an environment through files in a workspace (EnvTraverse contract)",
    (
        "study",
    ): "replicated, paired studies of the Maze Escape write-up's questions (run: llm extra)",
}


def _loaded(target: str) -> object:
    module_name, _, attribute = target.partition(":")
    loaded: object = importlib.import_module(module_name.strip())
    for part in attribute.strip().split(".") if attribute else ():
        loaded = getattr(loaded, part)
    return loaded


def _version() -> str:
    from maze_envs import __version__

    return __version__


def _commands_under(prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """(words after ``prefix``, help) of every command and group directly below ``prefix``."""
    seen: set[tuple[str, ...]] = set()
    for words, (_, help_text) in COMMANDS.items():
        if words[: len(prefix)] != prefix or len(words) == len(prefix):
            continue
        head = words[: len(prefix) + 1]
        if head in seen:
            continue
        seen.add(head)
        if len(words) == len(head):
            yield head[len(prefix) :], help_text
        else:
            yield head[len(prefix) :], GROUPS.get(head, "command group")


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
    return GROUPS.get(prefix)


def _run(target: str, words: tuple[str, ...], argv: list[str]) -> int:
    function = _loaded(target)
    if not callable(function):
        raise TypeError(f"the command target {target!r} is not a function")
    # A parser that leaves ``prog`` unset takes it from argv[0]: make that the command's name.
    saved, sys.argv[0] = sys.argv[0], " ".join(("maze-envs", *words))
    try:
        result: int = function(argv)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at interpreter exit
    except BrokenPipeError:
        # the reader left early (`maze-envs study list | head`): stop quietly, as Unix tools do,
        # and keep Python's own flush at exit from printing a traceback to stderr
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    finally:
        sys.argv[0] = saved
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``maze-envs`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    prefix: tuple[str, ...] = ()
    commands = COMMANDS
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
