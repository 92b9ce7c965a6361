"""What each command of the README costs here: wall-clock seconds, with the load it ran under.

Every figure of the README's "What each command costs" table comes from this script. It runs each
command as a user types it (in a temporary folder, the checkout's ``.venv`` on ``PATH``), one
after the other, and prints a Markdown table: the command, its wall-clock time, its exit status,
and the 1-minute load average before and after (the project's VM has 2 cores shared with other
jobs: a load above 2 means the command waited for a core, and its time is longer than it needs).

    python benchmarks/command_costs.py                 # every command but the test suite
    python benchmarks/command_costs.py --only demo     # one (names: see --help)
    python benchmarks/command_costs.py --with-tests    # also bash scripts/test.sh (20-40 min)

``demo`` is ``time bash scripts/demo.sh`` with its set-up done (the script's own ``pip`` install
is made current first, untimed, so the figure is the main job's); it writes to a temporary
``--out`` folder, not to the checkout's ``out/``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent

#: The README's MaskablePPO snippet, read from the README itself (the figure is of what it says).
MASKABLE_PPO = next(
    block
    for block in re.findall(r"^```python\n(.*?)^```", (REPO / "README.md").read_text(), re.S | re.M)
    if "MaskablePPO" in block
)


@dataclass(frozen=True)
class Command:
    name: str
    shown: str  # as the README writes it
    argv: list[str]


def _typed(shown: str, *extra: str) -> Command:
    """A command as the README writes it, plus the options that keep its output here."""
    name = shown.split()[0]
    return Command(name, shown, [*shlex.split(shown), *extra])


def commands(work: Path) -> list[Command]:
    out, first = work / "out", work / "first"
    named = [
        (
            "demo",
            Command("demo", "bash scripts/demo.sh", ["bash", str(REPO / "scripts" / "demo.sh")]),
            ("--out", str(out)),
        ),
        ("verify", _typed(f"maze-envs verify {out}/games.sqlite"), ()),
        (
            "first-bench",
            _typed(
                "maze-envs bench --env escape --size 9 13 --policy random --policy explorer "
                "--seeds 0-9"
            ),
            ("--out", str(first)),
        ),
        ("view-all", _typed(f"maze-envs view {first}/games.sqlite --out {first}/pages"), ()),
        (
            "agimaze-bench",
            _typed(
                "maze-envs bench --env agimaze --pack TRAINING --policy random --policy explorer"
            ),
            ("--out", str(work / "agimaze")),
        ),
        (
            "study-offline",
            _typed("maze-envs study run radio --model stand-in:wall-follower --seeds 0-1 --size 7"),
            ("--out", str(work / "study")),
        ),
        (
            "inspect-offline",
            _typed("inspect eval maze_envs/escape --model stand-in/wall-follower --limit 2"),
            ("--display", "none", "--log-dir", str(work / "logs")),
        ),
        (
            "ppo-example",
            Command(
                "ppo-example",
                "python examples/train_agimaze_ppo.py",
                [sys.executable, str(REPO / "examples" / "train_agimaze_ppo.py")],
            ),
            (),
        ),
        (
            "maskable-ppo",
            Command(
                "maskable-ppo",
                "the README's MaskablePPO snippet (10,000 steps)",
                [sys.executable, "-c", MASKABLE_PPO],
            ),
            (),
        ),
        (
            "tests",
            Command("tests", "bash scripts/test.sh", ["bash", str(REPO / "scripts" / "test.sh")]),
            (),
        ),
    ]
    return [
        Command(name, command.shown.replace(str(work) + "/", ""), [*command.argv, *extra])
        for name, command, extra in named
    ]


def run(command: Command, work: Path) -> tuple[float, int, float, float]:
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.setdefault("PYTHONPATH", str(REPO))
    before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        command.argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0,):
        sys.stderr.write(f"{command.name}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    return seconds, done.returncode, before, os.getloadavg()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [c.name for c in commands(Path("."))]
    parser.add_argument("--only", nargs="+", choices=names, help="run only these")
    parser.add_argument("--with-tests", action="store_true", help="also bash scripts/test.sh")
    args = parser.parse_args(argv)
    wanted = set(args.only or [n for n in names if n != "tests"])
    if args.with_tests:
        wanted.add("tests")
    # the demo's set-up, untimed: its pip install made current (a stamp; see scripts/venv.sh)
    subprocess.run(
        ["bash", "-c", "source scripts/venv.sh && install_once render,bench"], cwd=REPO, check=True
    )
    print(f"{os.cpu_count()} cores; Python {sys.version.split()[0]}")
    print("| command | wall clock | exit | load before / after |")
    print("|---|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="maze-envs-costs-") as folder:
        work = Path(folder)
        for command in commands(work):
            if command.name not in wanted:
                continue
            seconds, status, before, after = run(command, work)
            print(
                f"| `{command.shown}` | {seconds:.1f} s | {status} | {before:.1f} / {after:.1f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
