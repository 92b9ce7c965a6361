"""The ``maze-envs`` command line.

Each sub-command lives in the module that owns the feature and exposes ``main(argv) -> int``;
this file only routes to it, so adding a command never touches another feature's code.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: command words -> ("module", "function", one-line help)
COMMANDS: dict[tuple[str, ...], tuple[str, str, str]] = {
    ("demo",): (
        "maze_envs.escape.demo",
        "main",
        "play a few Maze Escape games on embedded defaults, journal, verify and render them",
    ),
    ("verify",): (
        "maze_envs.escape.replay",
        "main",
        "replay every game in a journal and check its state hashes",
    ),
    ("view",): (
        "maze_envs.view.escape_page",
        "main",
        "write a self-contained HTML page of a journaled game (maze + what each agent saw)",
    ),
    ("agimaze", "serve"): (
        "maze_envs.agimaze.server",
        "main",
        "serve the AGI Maze HTTP API over the embedded engine and packs",
    ),
    ("agimaze", "build-packs"): (
        "maze_envs.agimaze.packs.build",
        "main",
        "regenerate the shipped AGI Maze packs (deterministic)",
    ),
}


def _usage() -> str:
    lines = ["usage: maze-envs COMMAND [ARGS...]", "", "commands:"]
    for words, (_, _, help_text) in COMMANDS.items():
        lines.append(f"  {' '.join(words):<22} {help_text}")
    lines.append("")
    lines.append("Run `maze-envs COMMAND --help` for a command's options.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``maze-envs`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"}:
        print(_usage())
        return 0
    for words, (module_name, function_name, _) in COMMANDS.items():
        if tuple(args[: len(words)]) == words:
            module = importlib.import_module(module_name)
            result: int = getattr(module, function_name)(args[len(words) :])
            return result
    print(f"maze-envs: unknown command {' '.join(args[:2])!r}\n", file=sys.stderr)
    print(_usage(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
