"""How far a study's dry run is from what the stand-in model really spends (issue 25, point 12).

For each study: ``maze-envs study run NAME --model stand-in:wall-follower --seeds ... --dry-run``
estimates the model calls and the tokens of its arms (the study file's ``[tokens]`` table:
input and output tokens per call, share of the turn limit a game lasts); the same run without
``--dry-run`` plays every game through the real harness with the stand-in model and counts what
was spent (its rows' tokens and requests). The script prints, per study, estimated / measured
for calls, input tokens, output tokens and all tokens. Goal: the token estimate within 1.5x of
the stand-in run (it was 4-6x high on output before the tables were calibrated).

The study files' tables are edited by hand from what this prints (so that each figure's source
sentence stays true); ``--json`` prints the figures as data. The turn share printed is the
stand-in's calls over the most calls the games could make (every agent, every turn).

    python benchmarks/dry_run_calibration.py                  # every study, seed 0
    python benchmarks/dry_run_calibration.py --studies radio notebook --seeds 0 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llm_policies.apps.study_plan import study_plan  # noqa: E402
from llm_policies.apps.study_run import main as study_main  # noqa: E402
from maze_envs.studies.catalog import find, shipped  # noqa: E402

MODEL = "stand-in:wall-follower"


def measure(name: str, seeds: list[int], out: Path) -> dict[str, Any]:
    """Estimate and stand-in run of study ``name``: calls and tokens on both sides."""
    study = find(name)[0]
    lines = study_plan(study, [MODEL], seeds=seeds)
    estimated = {"calls": 0, "input": 0, "output": 0}
    most = sum(line.max_calls for line in lines)
    for line in lines:
        arm = study.arm(line.arm)
        tokens = study.tokens_of(arm)
        estimated["calls"] += line.expected_calls
        estimated["input"] += line.expected_calls * tokens.input
        estimated["output"] += line.expected_calls * tokens.output
    started = time.perf_counter()
    args = [name, "--model", MODEL, "--seeds", *map(str, seeds), "--out", str(out), "--quiet"]
    code = study_main(args)
    if code != 0:
        raise SystemExit(f"study run {name} exited with {code}")
    rows = json.loads((out / "results.json").read_text())["games"]
    measured = {
        "calls": sum(int(r.get("requests") or 0) for r in rows),
        "input": sum(int(r.get("input_tokens") or 0) for r in rows),
        "output": sum(int(r.get("output_tokens") or 0) for r in rows),
    }
    return {
        "study": name,
        "games": len(rows),
        "estimated": estimated,
        "measured": measured,
        "per_call": {
            "input": measured["input"] / measured["calls"] if measured["calls"] else None,
            "output": measured["output"] / measured["calls"] if measured["calls"] else None,
        },
        "turn_share": measured["calls"] / most if most else None,
        "elapsed_s": time.perf_counter() - started,
    }


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", nargs="*", help="study names (default: every study)")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    names = args.studies or [study.name for study, _ in shipped()]
    load = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            results.append(measure(name, args.seeds, Path(tmp) / name))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"dry run vs {MODEL}, seeds {args.seeds}; load average {load[0]:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    print(
        "| study | games | calls est/meas | input est/meas | output est/meas | all tokens "
        "est/meas | stand-in per call (in/out) | turn share |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        e, m, per = r["estimated"], r["measured"], r["per_call"]
        print(
            f"| {r['study']} | {r['games']} | {ratio(e['calls'], m['calls'])} | "
            f"{ratio(e['input'], m['input'])} | {ratio(e['output'], m['output'])} | "
            f"{ratio(e['input'] + e['output'], m['input'] + m['output'])} | "
            f"{per['input']:.0f} / {per['output']:.1f} | {r['turn_share']:.2f} |"
        )


if __name__ == "__main__":
    main()
