"""A language model against a classical solver in Maze Escape, through ``maze-envs bench``.

Two arms play the same mazes (same sizes, same seeds): a team of depth-first ``explorer``
solvers and a team of LLM policies (``llm_policies``: versioned prompt, reply schema, quirk
rules, journal records, tokens and cost). The runner writes the journal, ``results.csv``,
``results.json`` and ``summary.md`` to ``--out`` and this script prints the table (team
success, finish / fastest, wall moves, tokens, cost, cost per success, fallbacks, quirks) and
the paired difference of the censored finish ratio (LLM minus solver, same maze).

By default the "model" is an offline stand-in, so the example runs anywhere without a network
or a key: :func:`offline_model` reads the prompt the policy sends (the observation text), keeps
its heading in the notebook and follows the right-hand wall, answering in the reply schema. It
goes through the whole harness (prompt, parsing, records, caps); only the model is fake, and
its cost is 0 (local). Point it at a real model with ``--model``:

    python examples/llm_vs_solver.py                                   # offline, a few seconds
    python examples/llm_vs_solver.py --model ollama:qwen3:8b           # a local Ollama
    python examples/llm_vs_solver.py --model openai-chat:gpt-4o-mini --seeds 0-9
    python examples/llm_vs_solver.py --model openai-chat:Qwen/Qwen3-8B:base_url=http://localhost:8000/v1,local=true

The same comparison on the command line: ``maze-envs bench --env escape --size 7 9
--policy explorer --policy ollama:qwen3:8b --seeds 0-4``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from maze_envs.bench.report import escape_table
from maze_envs.bench.results import paired_difference
from maze_envs.bench.runner import RunOptions, run_experiment
from maze_envs.bench.seeds import parse_seeds
from maze_envs.bench.spec import Experiment

HERE = Path(__file__).resolve().parent
#: The offline stand-in model's policy spec (an import path: this file's ``offline_llm``).
OFFLINE = "llm_vs_solver:offline_llm"
SOLVER = "explorer"
_RIGHT = {"N": "E", "E": "S", "S": "W", "W": "N"}
_BACK = {"N": "S", "E": "W", "S": "N", "W": "E"}
_CELL = re.compile(r"Cell: N (\w+), E (\w+), S (\w+), W (\w+)\.")
_HEADING = re.compile(r"heading ([NESW])")


def _user_text(request: Any) -> str:
    return "\n".join(m.content for m in request.messages if m.role == "user")


def offline_reply(text: str) -> dict[str, Any]:
    """The stand-in model's answer to one Maze Escape prompt: the right-hand rule.

    >>> prompt = "heading N\\nCell: N interior_wall, E open, S open, W open."
    >>> offline_reply(prompt)["move"]
    'E'
    """
    cell = _CELL.search(text)
    if cell is None:
        return {"move": "STAY", "notebook": None, "radio": None}
    open_sides = {d for d, kind in zip("NESW", cell.groups(), strict=True) if kind == "open"}
    headings = _HEADING.findall(text)
    heading = headings[-1] if headings else "N"
    on_exit = "On the exit: yes" in text
    move = "STAY"
    if not on_exit:
        # right hand on the wall: right, straight on, left, back
        for turn in (_RIGHT[heading], heading, _BACK[_RIGHT[heading]], _BACK[heading]):
            if turn in open_sides:
                move = turn
                break
    note = None if move == "STAY" else f"heading {move}\n"
    return {"move": move, "notebook": note, "radio": None}


def offline_model(request: Any) -> Any:
    """A scripted-backend function: the request in, the reply the "model" sends out."""
    from llm_policies.backends.scripted import ScriptedReply

    values = offline_reply(_user_text(request))
    fields = list(request.schema.get("properties") or {})
    answer = {field: values.get(field) for field in fields} or values
    raw = json.dumps(answer)
    if request.output_mode == "tool":
        return ScriptedReply(tool_arguments=raw)
    return ScriptedReply(text=raw)


def offline_llm(check: str = "off", prompt_version: str = "latest") -> Any:
    """The LLM policy with the offline stand-in model (an import-path factory for the runner)."""
    from llm_policies.registry import make_llm_policy

    return make_llm_policy(
        "scripted:right-hand",
        "escape",
        client=offline_model,
        check=check,
        prompt_version=prompt_version,
    )


def experiment(model: str, sizes: list[int], seeds: str, max_turns: int) -> Experiment:
    return Experiment.model_validate(
        {
            "name": "llm vs solver",
            "seeds": parse_seeds(seeds),
            "escape": [
                {
                    "label": "navigator",
                    "preset": "navigator",
                    "sizes": sizes,
                    "max_turns": max_turns,
                    "policies": [
                        {"policy": SOLVER, "label": "explorer (solver)"},
                        {"policy": model, "label": f"LLM ({model.split(':base_url')[0]})"},
                    ],
                }
            ],
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=OFFLINE, help="an LLM policy spec (default: offline)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[7, 9])
    parser.add_argument("--seeds", default="0-4", help="e.g. 0-9 (default 0-4)")
    parser.add_argument("--max-turns", type=int, default=150)
    parser.add_argument("--concurrency", type=int, default=8, help="games at once")
    parser.add_argument("--out", help="output folder (default: a temporary one)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))  # so the runner can import this file's offline_llm
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="llm-vs-solver-"))
    study = experiment(args.model, args.sizes, args.seeds, args.max_turns)
    options = RunOptions(concurrency=args.concurrency, fresh=True, plots=False, quiet=True)
    result = run_experiment(study, out, options)
    print(escape_table(result.summary["escape"]))
    errors = [r for r in result.rows if r["status"] != "ok"]
    print(f"\n{len(result.rows)} games in {result.elapsed_s:.1f} s, {len(errors)} not ok")
    setup = result.rows[0]["setup"]
    solver, llm = (entry.name for entry in study.escape[0].policies)
    differences = paired_difference(
        result.rows, (setup, llm), (setup, solver), "finish_ratio_censored"
    )
    for size, diff in differences.items():
        if diff.mean is not None and diff.low is not None and diff.high is not None:
            print(
                f"{size}: finish / fastest, LLM minus solver (same mazes): {diff.mean:+.2f} "
                f"[{diff.low:+.2f}, {diff.high:+.2f}] over {diff.n} pairs"
            )
    print(f"\nresults in {out}/ (journal: maze-envs view {out}/games.sqlite)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
