"""``maze-envs study run``: play a study with a model, through the benchmark runner.

A study (:mod:`maze_envs.studies`) becomes a benchmark experiment
(:meth:`~maze_envs.studies.spec.Study.experiment`: one setup per arm, one policy entry per
model) that :func:`maze_envs.bench.runner.run_experiment` plays, exactly as ``maze-envs bench``
would: the same journal, rows, resume, caps and executors. Before a game, the command checks
that compared arms play the same mazes (:func:`~maze_envs.studies.pairing.check_same_mazes`).
Every model gets the response cache ``--cache`` (default ``OUT/responses.sqlite``): a rerun
of the same study (``--fresh``, or another folder with the same ``--cache``) sends nothing and
reproduces every reply, token and cost. The temperature study also replays the recorded
decisions of one arm with changed settings (:mod:`llm_policies.apps.replay`), through the same
cache. Then the report is written (:func:`maze_envs.studies.folder.write_report`).

``--dry-run`` plays nothing: it prints the games, the model calls to expect and a cost estimate
(:mod:`llm_policies.apps.study_plan`).

Offline, the stand-in models (``--model stand-in:wall-follower``,
:mod:`llm_policies.backends.stand_in`) play through the real harness at no cost.

Exit status: 0 done; 1 a game failed verification (``--verify``); 2 bad arguments, an unknown
study, arms that would not play the same mazes, or an unusable output folder; 3 the run failed
(see ``maze-envs bench``); 4 a model could not be reached (outages, reported apart;
``--resume --retry-outages`` plays those games again); 130 / 143 stopped by SIGINT / SIGTERM
(``--resume`` completes it).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from maze_envs.bench.command import OneLineParser, finished_status, run_error_status
from maze_envs.bench.executors import EXECUTORS, ExecutorError
from maze_envs.bench.folder import held_run
from maze_envs.bench.policyspec import PolicySpec
from maze_envs.bench.ray_executor import parse_runtime_env
from maze_envs.bench.runner import RunError, RunOptions, RunResult, run_experiment
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import Experiment, parse_size
from maze_envs.bench.stopping import RunStopped
from maze_envs.journal import JournalError
from maze_envs.studies.folder import REPLAY_FILE, REPORT_FILES, RUN_FILE, STUDY_FILE, write_report
from maze_envs.studies.pairing import Pair, check_same_mazes, comparisons
from maze_envs.studies.spec import ReplaySpec, Study, model_label

#: The response cache of a run, in its folder, unless ``--cache`` says otherwise.
CACHE_NAME: Final = "responses.sqlite"
#: Prefixes of the offline stand-in models.
STAND_IN_PREFIXES: Final = ("stand-in", "scripted")


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="maze-envs study run",
        description="Play a study: its arms on the same mazes and seeds, through the benchmark "
        "runner (journal, resume, caps, executors), then write its report. Offline: "
        "--model stand-in:wall-follower.",
    )
    parser.add_argument("study", help="a study name (maze-envs study list) or a study file")
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        required=True,
        metavar="SPEC",
        help="the model (repeatable: the models study compares them): anthropic:<model>, "
        "ollama:<model>, stand-in:wall-follower...; options after a colon "
        "(ollama:qwen3:8b:num_ctx=8192). An option the study sets itself is refused.",
    )
    parser.add_argument("--seeds", nargs="+", metavar="SEEDS", help="replace the study's seeds")
    parser.add_argument("--size", nargs="+", metavar="N", help="replace its maze sizes")
    parser.add_argument("--max-turns", type=int, help="replace its turn limits")
    parser.add_argument("--arms", nargs="+", metavar="ARM", help="run only these arms")
    parser.add_argument("--out", help="the run's folder (default: study-NAME)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument(
        "--retry-outages",
        action="store_true",
        help="with --resume: play again the games an outage touched",
    )
    parser.add_argument("--fresh", action="store_true", help="delete the run in --out first")
    parser.add_argument("--cache", help=f"response cache file (default: OUT/{CACHE_NAME})")
    parser.add_argument("--dry-run", action="store_true", help="print games, calls and cost only")
    parser.add_argument("--executor", choices=EXECUTORS, default="inline")
    parser.add_argument("--workers", type=int)
    parser.add_argument("--concurrency", type=int)
    parser.add_argument(
        "--ray-address",
        help="the Ray cluster to join, HOST:PORT (--executor ray; its nodes need not share this "
        "disk, the cache stays on it: docs/cluster.md)",
    )
    parser.add_argument(
        "--ray-runtime-env", metavar="JSON|FILE", help="Ray's runtime environment of the workers"
    )
    parser.add_argument("--max-tokens-per-run", type=int, metavar="N")
    parser.add_argument("--max-cost-per-run", type=float, metavar="USD")
    parser.add_argument("--verify", action="store_true", help="replay and check every game")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return parser


def _check_model(model: PolicySpec) -> None:
    """A study plays language models: ``--model`` names one as ``prefix:model``. Raises
    ValueError saying what is wrong and what is allowed."""
    from maze_envs.policies.providers import LLM_PREFIXES, bare_prefix, listed, unknown_prefix

    prefix, colon, _ = model.spec.partition(":")
    if colon and prefix in LLM_PREFIXES:
        return
    problem = bare_prefix(model.spec) if not colon else unknown_prefix(model.spec)
    if problem is None:
        problem = (
            f"{model.spec!r} is not a language model; a study plays one, named as "
            f"prefix:model with a prefix of {listed()} (offline: stand-in:wall-follower)"
        )
    raise ValueError(f"--model {model.text}: {problem}")


def _stand_in(models: Sequence[PolicySpec]) -> bool:
    return all(m.spec.partition(":")[0] in STAND_IN_PREFIXES for m in models)


def refuse_dropped_differences(study: Study, experiment: Experiment, pairs: Sequence[Pair]) -> None:
    """Refuse compared arms whose only difference is a setting their model's requests drop.

    Such arms send the same requests (an Anthropic model given two temperatures plays both at
    none), so their comparison would measure noise under two names. The same for a decision
    replay whose changed settings the model drops. Raises ``ValueError`` naming the setting, the
    model and the provider's reason.
    """
    from llm_policies.registry import dropped_by

    entries = {
        (setup.label, entry.name): (setup, entry)
        for setup in experiment.escape
        for entry in setup.policies
    }
    for pair in pairs:
        first, second = entries.get(pair.first), entries.get(pair.second)
        if first is None or second is None:
            continue
        (setup_a, entry_a), (setup_b, entry_b) = first, second
        if entry_a.policy is None or entry_b.policy is None:
            continue
        spec_a, spec_b = entry_a.policy, entry_b.policy
        rules_a = setup_a.model_dump(exclude={"label", "policies"})
        rules_b = setup_b.model_dump(exclude={"label", "policies"})
        if spec_a.spec != spec_b.spec or rules_a != rules_b:
            continue
        differing = {
            key
            for key in {*spec_a.options, *spec_b.options}
            if spec_a.options.get(key) != spec_b.options.get(key)
        }
        dropped_a = dropped_by(spec_a.spec, spec_a.options)
        dropped_b = dropped_by(spec_b.spec, spec_b.options)
        if differing and all(k in dropped_a and k in dropped_b for k in differing):
            setting = sorted(differing)[0]
            names = ", ".join(sorted(differing))
            raise ValueError(
                f"study {study.name}: arms {pair.first[0]!r} and {pair.second[0]!r} differ only "
                f"in {names}, which {spec_a.spec} drops ({dropped_a[setting]}): "
                "both arms would send the same requests. Run it with a model that takes "
                f"{setting}, or choose other arms (--arms)"
            )
    replay = study.replay
    if replay is None:
        return
    for (arm, _), (_, entry) in entries.items():
        if arm != replay.recorded or entry.policy is None:
            continue
        options = {**entry.policy.options, **replay.set}
        dropped = dropped_by(entry.policy.spec, options)
        if replay.set and all(k in dropped for k in replay.set):
            setting = sorted(replay.set)[0]
            raise ValueError(
                f"study {study.name}: its decision replay changes {', '.join(sorted(replay.set))}, "
                f"which {entry.policy.spec} drops ({dropped[setting]}): the replayed requests "
                f"would be the recorded ones. Run it with a model that takes {setting}"
            )


def _sizes(values: Sequence[str] | None) -> list[tuple[int, int]] | None:
    return [parse_size(v) for v in values] if values else None


def _prepare(out: Path, study_text: str, resume: bool, fresh: bool) -> None:
    """Refuse a folder holding another run (or a run of another study file when resuming)."""
    if not out.exists():
        return
    held = held_run(out)
    old = out / STUDY_FILE
    if resume and old.is_file() and old.read_text("utf-8") != study_text:
        raise RunError(
            f"{out} holds a run of another study file ({old}); resume it with that file, or "
            "choose another --out"
        )
    if held is not None and not (resume or fresh):
        raise RunError(
            f"{out} already holds a run; pass --resume to continue it, --fresh to delete it "
            f"and start over, or choose another folder with --out DIR (it holds {held})"
        )
    if fresh:
        for name in (STUDY_FILE, RUN_FILE, REPLAY_FILE, *REPORT_FILES):
            (out / name).unlink(missing_ok=True)


def _replay(study: Study, result: RunResult, models: Sequence[PolicySpec], cache: str) -> Any:
    """The temperature study's decision replay, per model label (None when the study has
    none): the recorded decisions of one arm re-asked with the changed settings, through the
    response cache, beside the full games of the other arm."""
    if study.replay is None or result.journal is None:
        return None
    from llm_policies.apps.replay import open_journal

    journal = open_journal(result.journal)
    try:
        out: dict[str, Any] = {}
        for model in models:
            label = model_label(model)
            report = _replay_model(study.replay, journal, result.rows, model, label, cache)
            if report is not None:
                out[label] = report
        return out
    finally:
        journal.close()


def _replay_model(
    spec: ReplaySpec,
    journal: Any,
    rows: Sequence[dict[str, Any]],
    model: PolicySpec,
    label: str,
    cache: str,
) -> dict[str, Any] | None:
    from llm_policies.apps.replay import (
        full_game_summary,
        recorded_decisions,
        replay_decisions,
        replay_settings,
    )
    from llm_policies.backends.make import make_backend
    from llm_policies.cache import CachedBackend
    from llm_policies.settings import ModelSettings

    def games(arm: str) -> list[int]:
        return [
            int(r["game_id"])
            for r in rows
            if r.get("setup") == arm and r.get("policy") == label and r.get("game_id")
        ]

    recorded, full = games(spec.recorded), games(spec.full_games)
    first = next(iter(recorded_decisions(journal, recorded)), None)
    if first is None:
        return None
    changed = dict(spec.set)
    settings = replay_settings(first, changed, ModelSettings())[0]
    backend = CachedBackend(make_backend(model.spec, settings), cache)

    async def run() -> Any:
        try:
            return await replay_decisions(
                journal, backend, settings, games=recorded, limit=spec.limit, changed=changed
            )
        finally:
            await backend.aclose()

    report = asyncio.run(run())
    if full:
        report.full_games = full_game_summary(journal, full)
    data = report.to_json()
    data.pop("per_decision", None)
    return {**data, "recorded_arm": spec.recorded, "full_arm": spec.full_games}


def _describe_run(
    args: argparse.Namespace, study: Study, models: Sequence[PolicySpec], cache: str, argv: Any
) -> dict[str, Any]:
    experiment_seeds = parse_seeds(list(args.seeds)) if args.seeds else study.seeds
    names = [arm.name for arm in study.selected(args.arms)]
    turns = sorted({args.max_turns or study.setup_of(study.arm(n)).max_turns or 0 for n in names})
    return {
        "study": study.name,
        "models": [model_label(m) for m in models],
        "specs": [m.text for m in models],
        "arms": names,
        "seeds": list(experiment_seeds),
        "seeds_text": f"{len(experiment_seeds)} ({experiment_seeds[0]}..{experiment_seeds[-1]})",
        "turns_text": ", ".join(str(t) if t else "the preset's" for t in turns),
        "cache": cache,
        "command": shlex.join(["maze-envs", "study", "run", *argv]),
        "stand_in": _stand_in(models),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs study run``: play a study with a model and write its report."""
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(given)
    except RunStopped as stop:
        resume = shlex.join(
            ["maze-envs", "study", "run", *[a for a in given if a != "--fresh"], "--resume"]
        )
        print(
            f"maze-envs study run: stopped by {stop.signal_name}; every finished game is in the "
            f"journal. resume with: {resume}",
            file=sys.stderr,
        )
        return stop.exit_status


def _main(given: list[str]) -> int:
    from maze_envs.studies.catalog import find

    parser = _parser()
    args = parser.parse_args(given)
    if args.fresh and args.resume:
        parser.error("--fresh starts over and --resume continues: give one of them")
    if (args.ray_address or args.ray_runtime_env) and args.executor != "ray":
        parser.error("--ray-address and --ray-runtime-env go with --executor ray")
    try:
        runtime_env = parse_runtime_env(args.ray_runtime_env)
        study, text, _ = find(args.study)
        models = [PolicySpec.parse(m) for m in args.model]
        for model in models:
            _check_model(model)
        seeds = parse_seeds(list(args.seeds)) if args.seeds else None
        sizes = _sizes(args.size)
        out = Path(args.out or f"study-{study.name}")
        cache = args.cache or str(out / CACHE_NAME)
        experiment = study.experiment(
            models,
            seeds=seeds,
            sizes=sizes,
            max_turns=args.max_turns,
            arms=args.arms,
            model_options={"cache": cache},
        )
        experiment.tasks()
        labels = [model_label(m) for m in models]
        names = [arm.name for arm in study.selected(args.arms)]
        pairs = comparisons(study, labels, names)
        check_same_mazes(experiment, pairs)
        refuse_dropped_differences(study, experiment, pairs)
    except ValueError as exc:
        parser.error(str(exc))
    if args.dry_run:
        from llm_policies.apps.study_plan import plan_text, study_plan

        plan = study_plan(
            study,
            args.model,
            seeds=seeds,
            sizes=sizes,
            max_turns=args.max_turns,
            arms=args.arms,
        )
        print(f"study {study.name}: {study.question}\n")
        print(plan_text(study, plan))
        print("\n(dry run: nothing was played)")
        return 0
    try:
        _prepare(out, text, args.resume, args.fresh)
        out.mkdir(parents=True, exist_ok=True)
        (out / STUDY_FILE).write_text(text, "utf-8")
        described = _describe_run(args, study, models, cache, given)
        (out / RUN_FILE).write_bytes(orjson.dumps(described, option=orjson.OPT_INDENT_2))
        options = RunOptions(
            executor=args.executor,
            workers=args.workers,
            concurrency=args.concurrency,
            resume=args.resume,
            retry_outages=args.retry_outages and args.resume,
            fresh=args.fresh,
            verify=args.verify,
            quiet=args.quiet,
            max_tokens_per_run=args.max_tokens_per_run,
            max_cost_per_run=args.max_cost_per_run,
            ray_address=args.ray_address,
            ray_runtime_env=runtime_env,
        )
        result = run_experiment(experiment, out, options)
    except (RunError, ValueError, ExecutorError, JournalError) as exc:
        return run_error_status("maze-envs study run", exc, out, "resume with --resume")
    replay = _replay(study, result, models, cache)
    if replay is not None:
        (out / REPLAY_FILE).write_bytes(orjson.dumps(replay, option=orjson.OPT_INDENT_2))
    written = write_report(out)
    if not args.quiet:
        print(
            f"study {study.name}: {len(result.rows)} games ({result.played} played, "
            f"{result.skipped} already done)"
        )
        for path in [*written.paths.values(), *written.plots]:
            print(f"wrote {path}")
        if written.note:
            print(f"note: {written.note}")
    return finished_status("maze-envs study run", result)
