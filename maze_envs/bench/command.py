"""``maze-envs bench``: run an experiment from the command line or a file.

Three ways to say what to run:

* nothing: the **main job**, the classical baselines of both environments on embedded defaults
  (``maze_envs/bench/data/main.toml``), with the journal verified;
* ``--config experiment.toml`` (or ``.yaml``/``.json``): one experiment file;
* ``--env escape`` (``--preset``, ``--size``, ``--max-turns``, ``--set key=value``,
  ``--escape-version``), ``--env agimaze`` (``--pack``, ``--budget-factor``, ``--pack-root``,
  ``--pack-version``) or ``--env agimaze-set`` (``--target``, each a set after the tutorials, or
  ``--paths`` for one explicit set; ``--tutorials`` to change what comes first), with
  ``--policy NAME[:k=v,...]`` and ``--team a,b,c`` (each repeatable) and ``--seeds``.

Exit status: 0 done (and verified, when verifying; a run that reached its cap is done: its
stopped games are in the table apart), 1 a game failed verification, 2 bad arguments, an
unusable output folder (one holding another run, say; a damaged journal to resume) or an
executor that is not installed, 3
the run failed (its journal could not be written, or its workers kept dying before playing a
game), 130 / 143 stopped by SIGINT (Ctrl-C) / SIGTERM (``timeout``, Slurm, CI): every finished
game is in the journal and ``--resume`` completes the run. Statuses 3, 130 and 143 print how to
resume. 4: a model could not be reached: some decisions were outages (the message names the
model, its endpoint and how many decisions; those games are reported apart, status ``outage``,
and ``--resume --retry-outages`` plays them again).

The main job writes to ``out`` like any run, and starts over only a folder holding its own
earlier run (``main-job.txt`` marks one); another run there is refused with status 2 (use
``--out`` or ``--fresh``). ``--fresh`` says what it deletes.

Example:
    >>> import tempfile
    >>> main(["--env", "escape", "--size", "7", "--max-turns", "40", "--policy", "explorer",
    ...       "--seeds", "0-1", "--out", tempfile.mkdtemp(), "--quiet"])
    0
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from maze_envs.bench.executors import EXECUTORS, ExecutorError
from maze_envs.bench.policyspec import PolicyEntry, PolicySpec, parse_assignments
from maze_envs.bench.ray_executor import parse_runtime_env
from maze_envs.bench.report import (
    agimaze_level_table,
    escape_table,
    outage_report,
    stop_reasons,
)
from maze_envs.bench.results import excluded_counts
from maze_envs.bench.runner import (
    RunError,
    RunOptions,
    RunResult,
    run_experiment,
)
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import (
    ENV_KINDS,
    ESCAPE_VERSIONS,
    Experiment,
    describe_errors,
    setup_classes,
)
from maze_envs.bench.stopping import RunStopped
from maze_envs.journal import JournalError

#: Exit status of a run in which a model could not be reached (outage decisions).
EXIT_OUTAGE = 4
#: Policies of a command-line setup when none is given.
DEFAULT_POLICY = "explorer"
DEFAULT_OUT = "out"


def main_experiment() -> Experiment:
    """The main job's experiment (package data ``maze_envs/bench/data/main.toml``)."""
    import tomllib

    text = resources.files("maze_envs.bench").joinpath("data/main.toml").read_text("utf-8")
    return Experiment.model_validate(tomllib.loads(text))


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line naming where the options are listed, not
    the error after the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="maze-envs bench",
        description="Run a benchmark: environment setups x policies x seeds, every game journaled, "
        "results as a table (CSV, JSON, Markdown) with intervals, and plots. With no setup "
        "options: the classical baselines of both environments (the main job).",
    )
    what = parser.add_argument_group("what to run")
    what.add_argument("--config", metavar="FILE", help="an experiment file (.toml, .yaml, .json)")
    what.add_argument("--env", choices=ENV_KINDS, help="one environment setup")
    what.add_argument("--name", help="the experiment's name (tables, results.json)")
    what.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME[:k=v,...]",
        help="a policy for every agent (repeatable): explorer, wall-follower-left, "
        "package.module:Class, anthropic:<model>, ollama:<model>, ...; options after a colon, "
        "separated by commas (ollama:qwen3:8b:temperature=0.2,check=required); a list value "
        "separates its items with | (order=radio|check|move|notebook)",
    )
    what.add_argument(
        "--team",
        action="append",
        default=[],
        metavar="A,B,C",
        help="one policy per Maze Escape agent, e.g. explorer,explorer,random (repeatable)",
    )
    what.add_argument("--seeds", nargs="+", metavar="SEEDS", help="e.g. 0-49 or 1 5 9 (default 0)")
    escape = parser.add_argument_group("Maze Escape (--env escape)")
    escape.add_argument(
        "--escape-version", type=int, default=ESCAPE_VERSIONS[-1], choices=ESCAPE_VERSIONS
    )
    escape.add_argument("--preset", help="sparse, navigator, shared_frame or full")
    escape.add_argument("--size", nargs="+", metavar="N", help="maze sizes, e.g. 9 11 13 or 13x9")
    escape.add_argument("--max-turns", type=int, help="turn limit")
    escape.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config override, e.g. radio=false (repeatable)",
    )
    agimaze = parser.add_argument_group("AGI Maze (--env agimaze)")
    agimaze.add_argument(
        "--pack",
        action="append",
        default=[],
        metavar="PATH",
        help="pack path or group: TUTORIAL, TRAINING, TRAINING/S1-rivers, a bundle (repeatable)",
    )
    agimaze.add_argument("--budget-factor", type=float, help="evaluation budget x max_steps (5)")
    agimaze.add_argument("--pack-root", help="a pack tree of your own instead of the shipped one")
    agimaze.add_argument(
        "--pack-version", help="a shipped pack version, e.g. agimaze-packs-2 (default: current)"
    )
    sets = parser.add_argument_group("AGI Maze labyrinth sets (--env agimaze-set)")
    sets.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="PATH",
        help="a target bundle, or a pack path whose every bundle is one (repeatable): each is "
        "played as the last labyrinth of its own set, after the tutorials",
    )
    sets.add_argument(
        "--tutorials",
        nargs="*",
        metavar="PATH",
        help="what each set plays before its target (default: TUTORIAL/STAGE-01..07/0000.json; "
        "give none to play each target alone)",
    )
    sets.add_argument("--paths", nargs="+", metavar="PATH", help="one set: these bundles, in order")
    run = parser.add_argument_group("how to run")
    run.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=None,
        help="where games run (default: inline; the main job uses a process pool)",
    )
    run.add_argument("--workers", type=int, help="processes or Ray workers (default 2)")
    run.add_argument(
        "--concurrency",
        type=int,
        help="games at once per event loop (async policies): in-process, or in each worker",
    )
    run.add_argument(
        "--ray-address",
        help="the Ray cluster to join, HOST:PORT of its head (--executor ray; default: start a "
        "local one); its nodes need not share this machine's disk (docs/cluster.md)",
    )
    run.add_argument(
        "--ray-runtime-env",
        metavar="JSON|FILE",
        help="Ray's runtime environment of the workers, a JSON object or a .json file: "
        '\'{"pip": ["maze-envs[llm]"], "env_vars": {"OPENAI_API_KEY": "..."}}\'',
    )
    run.add_argument(
        "--out",
        default=None,
        help=f"output folder (default: {DEFAULT_OUT}); a folder holding another run is refused",
    )
    run.add_argument("--resume", action="store_true", help="skip games already done in --out")
    run.add_argument(
        "--retry-outages",
        action="store_true",
        help="with --resume: play again the games an outage touched (the model could not be "
        "reached), which are otherwise kept as they are, reported apart",
    )
    run.add_argument(
        "--fresh", action="store_true", help="delete the run in --out first (says what it deletes)"
    )
    run.add_argument(
        "--max-tokens-per-run",
        type=int,
        metavar="N",
        help="stop the run once its games used N model tokens (input + output), all workers "
        "together",
    )
    run.add_argument(
        "--max-cost-per-run",
        type=float,
        metavar="USD",
        help="stop the run once its games cost USD dollars, all workers together",
    )
    run.add_argument("--no-journal", action="store_true", help="do not record games")
    run.add_argument(
        "--verify",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replay every game of the journal after the run and check every turn, as "
        "`maze-envs verify` does (default: on for the main job, off otherwise)",
    )
    run.add_argument(
        "--pages",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write viewer pages into pages/ for index.html's sample games: per table line "
        "(a size, a stage) its first failure, first success, error, outage or stopped game, "
        "within 32 MB (default: on; every other game's page is one `maze-envs view` command "
        "away, shown on index.html)",
    )
    run.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    run.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return parser


def _entries(args: argparse.Namespace) -> list[PolicyEntry]:
    entries = [PolicyEntry(policy=PolicySpec.parse(text)) for text in args.policy]
    entries += [PolicyEntry.parse_team(text) for text in args.team]
    return entries or [PolicyEntry(policy=PolicySpec.parse(DEFAULT_POLICY))]


def _setup_options(args: argparse.Namespace) -> list[str]:
    given = {
        "--preset": args.preset,
        "--size": args.size,
        "--max-turns": args.max_turns,
        "--set": args.set,
        "--pack": args.pack,
        "--budget-factor": args.budget_factor,
        "--pack-root": args.pack_root,
        "--pack-version": args.pack_version,
        "--target": args.target,
        "--tutorials": args.tutorials is not None,
        "--paths": args.paths,
        "--policy": args.policy,
        "--team": args.team,
    }
    return [flag for flag, value in given.items() if value]


def build_experiment(args: argparse.Namespace) -> tuple[Experiment, bool]:
    """The experiment the arguments describe, and whether it is the main job."""
    setup_flags = _setup_options(args)
    seeds: dict[str, Any] = {} if not args.seeds else {"seeds": parse_seeds(list(args.seeds))}
    if args.config:
        if args.env or setup_flags:
            raise ValueError(
                f"give the setup either in --config or by --env options, not both "
                f"(also given: {', '.join(['--env'] * bool(args.env) + setup_flags)})"
            )
        experiment = Experiment.load(args.config)
        changes = {**seeds, **({"name": args.name} if args.name else {})}
        return (experiment.model_copy(update=changes) if changes else experiment), False
    agimaze_only = ["--pack", "--budget-factor", "--pack-root", "--pack-version"]
    set_only = ["--target", "--tutorials", "--paths"]
    escape_only = ["--preset", "--size", "--max-turns", "--set", "--team"]
    if args.env is None:
        if setup_flags:
            envs = [
                env
                for env, flags in (
                    ("escape", escape_only),
                    ("agimaze", agimaze_only),
                    ("agimaze-set", set_only),
                )
                if set(flags) & set(setup_flags)
            ] or ["escape", "agimaze", "agimaze-set"]
            verb = "needs" if len(setup_flags) == 1 else "need"
            raise ValueError(
                f"{', '.join(setup_flags)} {verb} "
                + " or ".join(f"--env {env}" for env in envs)
                + " (without --env, maze-envs bench runs the main job, which takes no setup "
                "options)"
            )
        experiment = main_experiment()
        return (experiment.model_copy(update=seeds) if seeds else experiment), True
    # the flags of each setup that has some; a setup without flags of its own (a new
    # environment's) is played with its defaults, and every setup flag is misplaced there
    wrong = {
        "escape": agimaze_only + set_only,
        "agimaze": escape_only + set_only,
        "agimaze-set": [*escape_only, "--pack"],
    }.get(args.env, escape_only + agimaze_only + set_only)
    misplaced = [flag for flag in setup_flags if flag in wrong]
    if misplaced:
        verb = "does" if len(misplaced) == 1 else "do"
        raise ValueError(f"{', '.join(misplaced)} {verb} not apply to --env {args.env}")
    setup: dict[str, Any] = {"policies": _entries(args)}
    if args.env == "escape":
        overrides: dict[str, Any] = {}
        for text in args.set:
            overrides.update(parse_assignments(text, "--set"))
        setup.update(version=args.escape_version, preset=args.preset, set=overrides)
        if args.size:
            setup["sizes"] = list(args.size)
        if args.max_turns is not None:
            setup["max_turns"] = args.max_turns
    elif args.env in ("agimaze", "agimaze-set"):
        if args.env == "agimaze":
            setup["packs"] = args.pack or ["TRAINING"]
        elif args.paths:
            setup["paths"] = args.paths
        else:
            from maze_envs.agimaze.set_env import DEFAULT_TARGET

            setup["targets"] = args.target or [DEFAULT_TARGET]
        if args.tutorials is not None:
            setup["tutorials"] = args.tutorials
        if args.budget_factor is not None:
            setup["budget_factor"] = args.budget_factor
        if args.pack_root:
            setup["pack_root"] = args.pack_root
        if args.pack_version:
            setup["pack_version"] = args.pack_version
    table = setup_classes()[args.env].table
    data = {"name": args.name or f"{args.env} bench", table: [setup], **seeds}
    return Experiment.model_validate(data), False


def _report(result: RunResult, main_job: bool) -> None:
    escape = result.summary.get("escape") or []
    families = (result.summary.get("agimaze") or {}).get("family") or []
    sets = result.summary.get("agimaze_set") or []
    if escape:
        print("\nMaze Escape\n")
        print(escape_table(escape))
    if families:
        print(
            "\nAGI Maze, per pack family (per stage, laid out like the benchmark's calibration "
            "table: summary.md)\n"
        )
        print(agimaze_level_table(families, "family"))
    if sets:
        from maze_envs.bench.setresults import agimaze_set_tables

        print("\nAGI Maze labyrinth sets (the score is the target's, as EnvTraverse reports it)\n")
        print("\n\n".join(agimaze_set_tables(sets)))
    errors = [r for r in result.rows if r.get("status") == "error"]
    apart = excluded_counts(result.rows)
    print(
        f"\n{len(result.rows)} games ({result.played} played, {result.skipped} already done) "
        f"in {result.elapsed_s:.1f} s; {len(errors)} ended with a policy error, "
        f"{apart['outage_games']} touched by a model outage and {apart['stopped_games']} "
        f"stopped early{stop_reasons(result.rows)} (these two are counted apart, not as "
        "failures)"
    )
    for row in errors[:5]:
        print(
            f"  error in {row['setup']} / {row['case']} / {row['policy']} seed {row['seed']}: "
            f"{row['error']}"
        )
    for note in result.notes:
        print(f"note: {note}")
    if result.verified is not None:
        bad = [r for r in result.verified if not r.ok]
        print(
            f"verify: {len(result.verified) - len(bad)} of {len(result.verified)} games "
            f"replayed and verified" + ("" if not bad else f"; FAILED: {len(bad)}")
        )
        for report in bad[:5]:
            print(f"  {report.describe()}")
    out = result.out
    print(f"\nwritten to {out}/:")
    if "index" in result.paths:
        print(
            f"  {'index.html':<24} the front page: tables, plots, every game linked "
            "(open it in a browser)"
        )
    if result.journal is not None:
        print(
            f"  {result.journal.name:<24} every game (check it: maze-envs verify {result.journal})"
        )
    for label, path in (("the table", "markdown"), ("every game", "csv"), ("everything", "json")):
        if path in result.paths:
            print(f"  {result.paths[path].name:<24} {label}")
    for plot in result.plots:
        print(f"  {plot.name:<24} plot")
    if result.pages:
        print(
            f"  {'pages/':<24} {len(result.pages)} viewer page(s): the first failure, success, "
            "... of each size or stage"
        )
    print(f"  {'experiment.json':<24} the experiment as run (resume: add --resume)")
    if main_job:
        print(
            "\nrun your own: maze-envs bench --env escape --size 9 13 --policy explorer "
            "--seeds 0-49 (see maze-envs bench --help)"
        )


def resume_command(argv: Sequence[str]) -> str:
    """The command that resumes the run ``argv`` started (``--fresh`` dropped, ``--resume`` added).

    >>> resume_command(["--env", "escape", "--fresh", "--out", "my run"])
    "maze-envs bench --env escape --out 'my run' --resume"
    """
    kept = [arg for arg in argv if arg not in ("--fresh", "--resume")]
    return shlex.join(["maze-envs", "bench", *kept, "--resume"])


def run_error_status(command: str, error: Exception, out: Path, resume: str) -> int:
    """Print why a run did not finish and return its exit status: 2 for a run that could not
    start (bad setup, unusable folder), 3 for a run that failed (its journal, its workers);
    every game finished before is in the journal, and ``resume`` says how to go on."""
    if isinstance(error, RunError | ValueError):
        print(f"{command}: {error}", file=sys.stderr)
        return 2
    print(
        f"{command}: the run failed: {error}\nEvery game finished before is in the journal in "
        f"{out}; {resume}",
        file=sys.stderr,
    )
    return 3


def finished_status(command: str, result: RunResult) -> int:
    """The exit status of a run that finished: 1 when its journal did not verify, else
    :data:`EXIT_OUTAGE` (with the outages printed) when a model was unavailable, else 0."""
    outages = outage_report(result.rows)
    if outages is not None:
        print(f"{command}: {outages}", file=sys.stderr)
    if not result.verified_ok:
        return 1
    return EXIT_OUTAGE if outages is not None else 0


def _stopped(stop: RunStopped, argv: Sequence[str]) -> int:
    done = "" if stop.done is None else f" after {stop.done} of {stop.total} games"
    where = f" in {stop.out}" if stop.out else ""
    print(
        f"maze-envs bench: stopped by {stop.signal_name}{done}. Every finished game is in the "
        f"journal{where}; games in progress were dropped and will be played again.\n"
        f"resume with: {resume_command(argv)}",
        file=sys.stderr,
    )
    return stop.exit_status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark the arguments describe; see the module docstring for exit statuses."""
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(given)
    except RunStopped as stop:
        return _stopped(stop, given)
    except KeyboardInterrupt:  # Ctrl-C outside the run itself (before it, or writing pages)
        return _stopped(RunStopped(2), given)


#: The options that set an experiment's fields: an error names the option the user typed.
OPTION_OF_FIELD = {
    "sizes": "--size",
    "seeds": "--seeds",
    "policies": "--policy",
    "preset": "--preset",
    "set": "--set",
    "max_turns": "--max-turns",
    "packs": "--pack",
    "targets": "--target",
    "paths": "--paths",
    "tutorials": "--tutorials",
    "budget_factor": "--budget-factor",
    "pack_root": "--pack-root",
    "pack_version": "--pack-version",
}


def _main(given: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(given)
    try:
        experiment, main_job = build_experiment(args)
        experiment.tasks()  # every setup resolves (sizes, configs, packs, teams) before a game
    except ValidationError as exc:
        parser.error(describe_errors(exc, OPTION_OF_FIELD))
    except ValueError as exc:
        parser.error(str(exc))
    for flag in ("workers", "concurrency", "max_tokens_per_run"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag.replace('_', '-')} must be at least 1, got {value}")
    if args.max_cost_per_run is not None and not args.max_cost_per_run > 0:
        parser.error(f"--max-cost-per-run must be positive, got {args.max_cost_per_run}")
    if args.fresh and args.resume:
        parser.error("--fresh starts over and --resume continues: give one of them")
    if args.retry_outages and not args.resume:
        parser.error("--retry-outages plays again the outage games of a run: add --resume")
    if (args.ray_address or args.ray_runtime_env) and args.executor != "ray":
        parser.error("--ray-address and --ray-runtime-env go with --executor ray")
    try:
        runtime_env = parse_runtime_env(args.ray_runtime_env)
    except ValueError as exc:
        parser.error(str(exc))
    options = RunOptions(
        executor=args.executor or ("process" if main_job else "inline"),
        workers=args.workers,
        concurrency=args.concurrency,
        resume=args.resume,
        retry_outages=args.retry_outages,
        fresh=args.fresh,
        journal=not args.no_journal,
        verify=(main_job if args.verify is None else args.verify) and not args.no_journal,
        plots=not args.no_plots,
        pages=args.pages is not False,
        quiet=args.quiet,
        ray_address=args.ray_address,
        ray_runtime_env=runtime_env,
        max_tokens_per_run=args.max_tokens_per_run,
        max_cost_per_run=args.max_cost_per_run,
        main_job=main_job,
    )
    out = Path(args.out or DEFAULT_OUT)
    if main_job and not args.quiet:
        print(f"maze-envs bench: the main job ({experiment.name}): {experiment.description}")
    try:
        result = run_experiment(experiment, out, options)
    except (RunError, ValueError, ExecutorError, JournalError) as exc:
        resume = f"once the cause is fixed, resume with: {resume_command(given)}"
        return run_error_status("maze-envs bench", exc, out, resume)
    if not args.quiet:
        _report(result, main_job)
    return finished_status("maze-envs bench", result)
