"""The scores of the project's stand-in model on the Inspect task ``maze_envs/escape``, offline.

    python scripts/inspect_stand_in_scores.py                  # the task's defaults, seeds 0-9
    python scripts/inspect_stand_in_scores.py -T preset=navigator -T sizes=9

The stand-in (``stand-in:wall-follower``, :mod:`llm_policies.backends.stand_in`) is a scripted
model that reads its prompt and answers in the schema it is given: a right-hand wall follower
keeping notes in its notebook and radioing once it stands on the exit. Here it is an Inspect
model provider (``maze-stand-in/wall-follower``, defined in this script), so the task runs
exactly as ``inspect eval maze_envs/escape --model ...`` does, the harness, the Inspect backend,
the scorer and its metrics included; no network, no key. It prints the task's metrics as
Inspect computed them (the eval log's results) with the conditions: the parameters, the
journal, the time and the load. The project's stand-ins play Maze Escape only: the AGI Maze
tasks have none.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from llm_policies.apps.inspect import tasks
from llm_policies.backends.base import ChatMessage as HarnessMessage
from llm_policies.backends.base import ModelRequest
from llm_policies.backends.scripted import CHARS_PER_TOKEN
from llm_policies.backends.stand_in import stand_in_script
from llm_policies.settings import ModelSettings

_SCHEMA_AFTER = "It must follow this JSON schema:\n"


def _request(
    input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> ModelRequest:
    """What the harness asked, as its own request (mode and schema read back)."""
    system = next((m.text for m in input if m.role == "system"), "")
    messages = tuple(
        HarnessMessage("user" if m.role == "user" else "assistant", m.text)
        for m in input
        if m.role in ("user", "assistant")
    )
    if tools:
        mode, schema = "tool", tools[0].parameters.model_dump(exclude_none=True)
    elif config.response_schema is not None:
        mode = "native"
        schema = config.response_schema.json_schema.model_dump(exclude_none=True)
    else:
        at = system.index(_SCHEMA_AFTER) + len(_SCHEMA_AFTER)
        mode, schema = "prompted", json.JSONDecoder().raw_decode(system, at)[0]
    return ModelRequest(system, messages, mode, schema, "maze_action", ModelSettings())


@modelapi(name="maze-stand-in")
class StandInAPI(ModelAPI):
    """Every model of this provider is the stand-in of its name (``wall-follower``...)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008  (Inspect's own signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.script = stand_in_script(f"stand-in:{model_name}")

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        request = _request(input, tools, config)
        reply = self.script(request)
        said = reply.tool_arguments or reply.text or ""
        if reply.tool_arguments is not None:
            output = ModelOutput.for_tool_call(
                self.model_name, tools[0].name, json.loads(reply.tool_arguments)
            )
        else:
            output = ModelOutput.from_content(self.model_name, reply.text or "")
        prompt = request.system + "".join(m.content for m in request.messages)
        output.usage = ModelUsage(
            input_tokens=len(prompt) // CHARS_PER_TOKEN,
            output_tokens=max(1, len(said) // CHARS_PER_TOKEN),
            total_tokens=(len(prompt) + len(said)) // CHARS_PER_TOKEN,
        )
        return output


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
        model=get_model(f"maze-stand-in/{args.model}"),
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
