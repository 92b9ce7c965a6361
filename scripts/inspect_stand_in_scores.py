"""The scores of the project's stand-in model on the Inspect task ``maze_envs/escape``, offline.

    python scripts/inspect_stand_in_scores.py                  # the task's defaults, seeds 0-9
    python scripts/inspect_stand_in_scores.py -T preset=navigator -T sizes=9

The stand-in (``stand-in:wall-follower``, :mod:`llm_policies.backends.stand_in`) is a scripted
model that reads its prompt and answers in the schema it is given: a right-hand wall follower
keeping notes in its notebook and radioing once it stands on the exit. Here it is the
package's Inspect model provider (``stand-in/wall-follower``,
:mod:`llm_policies.apps.inspect.stand_in`), so the task runs
exactly as ``inspect eval maze_envs/escape --model ...`` does, the harness, the Inspect backend,
the scorer and its metrics included; no network, no key. It prints the task's metrics as
Inspect computed them (the eval log's results) with the conditions: the parameters, the
journal, the time and the load. The project's stand-ins play Maze Escape only: the AGI Maze
tasks have none.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from llm_policies.apps.inspect import tasks  # registers the provider stand-in/... too
from llm_policies.apps.inspect.stand_in import PROVIDER


def _parameters(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        out[key] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-T", dest="params", action="append", default=[], help="task parameter")
    parser.add_argument("--model", default="wall-follower", help="stand-in name")
    args = parser.parse_args()
    params = _parameters(args.params)
    folder = Path(tempfile.mkdtemp(prefix="stand-in-scores-"))
    params.setdefault("journal", str(folder / "maze_envs.sqlite"))
    started, load = time.perf_counter(), os.getloadavg()
    (log,) = inspect_eval(
        tasks.escape(**params),
        model=get_model(f"{PROVIDER}/{args.model}"),
        log_dir=str(folder / "logs"),
        display="none",
    )
    elapsed = time.perf_counter() - started
    assert log.results is not None and log.samples is not None
    print(f"task maze_envs/escape, model stand-in:{args.model}, parameters {params}")
    print(
        f"status {log.status}; {len(log.samples)} games; {elapsed:.1f} s; load before "
        f"{load[0]:.1f}, after {os.getloadavg()[0]:.1f}; journal {params['journal']}"
    )
    for score in log.results.scores:
        values = ", ".join(f"{name} {m.value:.3f}" for name, m in score.metrics.items())
        print(f"{score.name}: {values}")


if __name__ == "__main__":
    main()
