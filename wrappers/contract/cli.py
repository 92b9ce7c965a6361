"""``maze-envs contract``: play an environment through files in a workspace (EnvTraverse contract).

* ``maze-envs contract start --workspace W --env agimaze --path TUTORIAL/STAGE-01/0000.json``
  (``--env agimaze-set [--paths P ...] [--target T]``; ``--env escape [--agent A | --all-agents]
  [--teammates POLICY] [--preset full --width 9 --height 9 --max-turns 200]``; ``--seed N``);
* ``maze-envs contract move --workspace W '{"id": "up"}'`` (``-`` reads the JSON from stdin);
* ``maze-envs contract status --workspace W``: prints ``observations/status.json``.

Exit status: 0 done; 2 a request the session does not accept (bad JSON, unknown action, an
action after the end, no session in the workspace, bad options), with the workspace untouched.
``move`` and ``status`` print the status JSON on stdout.

Example:
    >>> import contextlib, io, json, tempfile
    >>> workspace = tempfile.mkdtemp()
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     codes = [start_main(["--workspace", workspace, "--env", "agimaze",
    ...                          "--path", "TUTORIAL/STAGE-01/0000.json"]),
    ...              move_main(["--workspace", workspace, '{"id": "left"}'])]
    >>> codes
    [0, 0]
    >>> json.loads(out.getvalue().splitlines()[-1])["steps"]
    1
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     code = move_main(["--workspace", workspace, '{"id": "jump"}'])
    >>> code
    2
    >>> print(err.getvalue().strip())
    maze-envs contract move: error: unknown action 'jump'; available: up, down, left, right
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from maze_envs.bench.spec import ENV_KINDS
from wrappers.contract.files import move, read_status, start_session
from wrappers.contract.session import ContractError, SessionSpec


def _fail(prog: str, error: Exception) -> int:
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 2


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    return parser.parse_args(list(sys.argv[1:] if argv is None else argv))


def _override(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def start_main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs contract start``: start a session in a workspace."""
    prog = "maze-envs contract start"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Start a session: write the environment description, the first "
        "observation files and status.json into WORKSPACE/observations. Exit 2 when the "
        "workspace already holds a session (see --force) or an option is wrong.",
    )
    parser.add_argument("--workspace", required=True, help="the workspace directory")
    parser.add_argument("--env", required=True, choices=ENV_KINDS)
    parser.add_argument("--seed", type=int, default=0, help="the game's seed (default 0)")
    parser.add_argument("--path", help="agimaze: pack path, e.g. TUTORIAL/STAGE-01/0000.json")
    parser.add_argument("--paths", nargs="+", help="agimaze-set: the labyrinths, in order")
    parser.add_argument("--target", help="agimaze-set: the final labyrinth of the default set")
    parser.add_argument("--budget-factor", type=float, default=5.0, help="AGI Maze budget")
    parser.add_argument("--preset", default="full", help="escape: the config preset")
    parser.add_argument("--width", type=int, default=9)
    parser.add_argument("--height", type=int, default=9)
    parser.add_argument("--max-turns", type=int, default=200)
    parser.add_argument(
        "--set",
        type=_override,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="escape: another Config field (repeatable), e.g. --set radio=false",
    )
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--agent", default="A", help="escape: the agent you play (default A)")
    who.add_argument("--all-agents", action="store_true", help="escape: play every agent")
    parser.add_argument("--teammates", default="explorer", help="escape: teammates' policy")
    parser.add_argument("--force", action="store_true", help="replace an existing session")
    args = _parse(parser, argv)
    try:
        spec = SessionSpec(
            env=args.env,
            seed=args.seed,
            path=args.path,
            paths=args.paths,
            target=args.target,
            budget_factor=args.budget_factor,
            preset=args.preset,
            width=args.width,
            height=args.height,
            max_turns=args.max_turns,
            overrides=dict(args.set),
            agent=None if args.all_agents else args.agent,
            teammates=args.teammates,
        )
        status = start_session(args.workspace, spec, force=args.force)
    except ValueError as exc:  # ContractError and pydantic's ValidationError
        return _fail(prog, exc)
    print(json.dumps(status, sort_keys=True))
    return 0


def move_main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs contract move``: send one JSON action."""
    prog = "maze-envs contract move"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Send one action (a JSON object, e.g. '{\"id\": \"up\"}'; '-' reads it "
        "from stdin). The new observation files and status.json replace the old ones. Exit 2 "
        "for a request that is not accepted; the workspace is then untouched.",
    )
    parser.add_argument("--workspace", required=True, help="the workspace directory")
    parser.add_argument("action", help="the action as JSON, or - for stdin")
    args = _parse(parser, argv)
    text = sys.stdin.read() if args.action == "-" else args.action
    try:
        status = move(args.workspace, text)
    except ContractError as exc:
        return _fail(prog, exc)
    print(json.dumps(status, sort_keys=True))
    return 0


def status_main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs contract status``: print the session's status.json."""
    prog = "maze-envs contract status"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Print the status of the session in WORKSPACE (terminal flag, steps, "
        "budget, solved, ...). Exit 2 when the workspace holds no session.",
    )
    parser.add_argument("--workspace", required=True, help="the workspace directory")
    args = _parse(parser, argv)
    try:
        status = read_status(args.workspace)
    except ContractError as exc:
        return _fail(prog, exc)
    print(json.dumps(status, indent=2, sort_keys=True))
    return 0
