"""``maze-envs demo``: play a few Maze Escape games end to end on embedded defaults.

Each game is played by a team of built-in movers (:mod:`maze_envs.policies`), recorded turn by
turn in a SQLite journal, drawn as a PNG of its final state, verified by replaying the journal,
and written as a self-contained HTML page to step through (:mod:`maze_envs.view`). A summary
table is printed at the end.

Example:
    >>> import tempfile
    >>> main(["--out", tempfile.mkdtemp(), "--seeds", "4", "--quiet"])
    0
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from maze_envs import maze_escape_v0
from maze_envs.escape.convert import observation_to_model
from maze_envs.escape.replay import verify_journal
from maze_envs.journal import Journal, VerifyReport
from maze_envs.policies import DepthFirstExplorer, Policy, RandomWalker
from maze_envs.view import escape_game_html

#: Setups cycled over the seeds: (label, preset or None for the defaults).
SETUPS: Final[tuple[tuple[str, str | None], ...]] = (
    ("default", None),
    ("sparse", "sparse"),
    ("navigator", "navigator"),
)
TABLE_HEADER: Final[tuple[str, ...]] = (
    "game",
    "seed",
    "setup",
    "size",
    "turns",
    "success",
    "exit turn per agent",
    "wall bumps",
    "fastest",
    "verified",
)
POLICIES: Final[dict[str, Callable[[], Policy]]] = {
    "explorer": DepthFirstExplorer,
    "random": RandomWalker,
}


@dataclass(frozen=True)
class GameSummary:
    game_id: int
    seed: int
    setup: str
    size: str
    outcome: dict[str, Any]
    picture: Path | None


def play_game(
    journal: Journal, seed: int, setup: str, preset: str | None, policy: str, out: Path
) -> GameSummary:
    """Play one journaled game with a team of ``policy`` movers; save its final picture."""
    env = maze_escape_v0.parallel_env(preset=preset, render_mode="rgb_array", journal=journal)
    observations, _ = env.reset(seed=seed)
    team = {agent: POLICIES[policy]() for agent in env.possible_agents}
    for number, (agent, member) in enumerate(team.items()):
        member.reset(agent, seed * 1000 + number)
    while env.agents:
        actions = {
            agent: team[agent].act(observation_to_model(observations[agent], env.config, agent))
            for agent in env.agents
        }
        observations, *_ = env.step(actions)
    outcome = env.outcome()
    game_id = journal.game_ids()[-1]
    picture = _save_picture(env.render(), out / f"game{game_id}_seed{seed}_{setup}.png")
    env.close()
    size = f"{env.config.width}x{env.config.height}"
    return GameSummary(game_id, seed, setup, size, outcome, picture)


def _save_picture(frame: Any, path: Path) -> Path | None:
    try:
        from PIL import Image
    except ImportError:  # pictures are optional: pip install 'maze-envs[render]'
        return None
    Image.fromarray(frame).save(path)
    return path


def _bump_rate(outcome: dict[str, Any]) -> str:
    bumps = sum(outcome["wall_bumps"].values())
    attempts = bumps + sum(outcome["moves"].values())
    return f"{100 * bumps / attempts:.1f}%" if attempts else "-"


def summary_table(games: list[GameSummary], reports: dict[int, VerifyReport]) -> str:
    """The printed summary: one row per game."""
    rows: list[tuple[str, ...]] = [TABLE_HEADER]
    for game in games:
        outcome = game.outcome
        exits = " ".join(
            f"{agent}:{'-' if turn is None else turn}"
            for agent, turn in outcome["first_visit_turn"].items()
        )
        report = reports.get(game.game_id)
        verified = "yes" if report is not None and report.ok else "NO"
        success = "yes" if outcome["success"] else "no"
        fastest = str(outcome["fastest_possible_finish"])
        row = (str(game.game_id), str(game.seed), game.setup, game.size, str(outcome["turns"]))
        rows.append((*row, success, exits, _bump_rate(outcome), fastest, verified))
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_HEADER))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(line.rstrip() for line in lines)


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"a seed is a whole number >= 0, got {text!r}")
    return seed


def main(argv: list[str]) -> int:
    """Play, journal, render and verify the demo games; exit 0 when every game verifies."""
    parser = argparse.ArgumentParser(
        prog="maze-envs demo",
        description="Play a few Maze Escape games with built-in movers, journal them to SQLite, "
        "draw each final state as a PNG and verify every game by replaying the journal.",
    )
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    parser.add_argument(
        "--seeds",
        type=_seed,
        nargs="+",
        default=[0, 1, 2],
        help="one game per seed (default: 0 1 2)",
    )
    parser.add_argument(
        "--policy",
        choices=sorted(POLICIES),
        default="explorer",
        help="built-in mover for every agent (default: explorer, a depth-first search)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    args = parser.parse_args(argv)
    say = (lambda *_: None) if args.quiet else print

    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"maze-envs demo: cannot use {out} as the output folder: {exc}")
        return 2
    path = out / "demo.sqlite"
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)  # each run writes a fresh journal

    started = time.perf_counter()
    say(f"Maze Escape demo: {len(args.seeds)} game(s), {args.policy} policy for every agent")
    games: list[GameSummary] = []
    with Journal(path) as journal:
        for number, seed in enumerate(args.seeds):
            setup, preset = SETUPS[number % len(SETUPS)]
            game = play_game(journal, seed, setup, preset, args.policy, out)
            games.append(game)
            result = "escaped" if game.outcome["success"] else "out of turns"
            turns = game.outcome["turns"]
            say(
                f"  game {game.game_id}: seed {seed}, {setup} {game.size}: {result} ({turns} turns)"
            )
    reports = {report.game_id: report for report in verify_journal(path)}
    pages: list[Path] = []
    with Journal(path, create=False) as journal:
        for game in games:
            page = out / f"game{game.game_id}_seed{game.seed}_{game.setup}.html"
            page.write_text(escape_game_html(journal, game.game_id), encoding="utf-8")
            pages.append(page)
    say("")
    say(summary_table(games, reports))
    say("")
    say("exit turn: the turn each agent first reached the exit (- never); wall bumps: moves into")
    say("a wall / all move attempts; fastest: the fastest possible team finish (ground truth).")
    for report in reports.values():
        if not report.ok:
            say(report.describe())
    say(f"\nwritten to {out}/:")
    say(f"  {path.name:<32} the journal; check it again with: maze-envs verify {path}")
    for game, page in zip(games, pages, strict=True):
        picture = game.picture.name if game.picture is not None else "(no PNG: install Pillow)"
        say(f"  {picture:<32} game {game.game_id}, final state")
        say(f"  {page.name:<32} game {game.game_id}, every turn and what each agent saw (browser)")
    say(f"done in {time.perf_counter() - started:.1f}s")
    return 0 if all(r.ok for r in reports.values()) else 1
