"""Offline models for the Inspect tests: Inspect's own mock model with scripted outputs.

* :func:`mock_model`: ``mockllm/model`` answering through a function of the request (Inspect's
  ``custom_outputs``); every request it saw is kept in ``calls``.
* :func:`wall_follower`: a scripted Maze Escape player that reads only its prompt: the cell's
  sides, its notebook (where it writes the way it is heading each turn) and whether it stands on
  the exit (then it says so on the radio). Right-hand rule, so every agent of a small perfect
  maze reaches the exit.
* :func:`agimaze_player`: plays given plans (the oracle's actions) labyrinth after labyrinth,
  answering ``start`` when a labyrinth set waits for it.

Every output carries its token counts: without them the mock counts tokens with tiktoken, which
downloads its tables (no network in tests).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from maze_envs.journal import Journal

IN_TOKENS, OUT_TOKENS = 100, 10
Responder = Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], ModelOutput]
TURNS = (("N", "E", "S", "W"), {"N": "E", "E": "S", "S": "W", "W": "N"})
#: What a labyrinth set says while it waits for ``start``.
WAITING = 'Available actions: {"id":"start"}'


@dataclass
class Call:
    """One request the mock model received."""

    input: list[ChatMessage]
    tools: list[ToolInfo]
    tool_choice: ToolChoice
    config: GenerateConfig


@dataclass
class Mock:
    """The mock model and what it was asked."""

    model: Model
    calls: list[Call] = field(default_factory=list)


def with_usage(output: ModelOutput, input_tokens: int = IN_TOKENS, **extra: Any) -> ModelOutput:
    output.usage = ModelUsage(
        input_tokens=input_tokens,
        output_tokens=OUT_TOKENS,
        total_tokens=input_tokens + OUT_TOKENS,
        **extra,
    )
    return output


def tool_output(tools: list[ToolInfo], arguments: dict[str, Any]) -> ModelOutput:
    return with_usage(ModelOutput.for_tool_call("mockllm/model", tools[0].name, arguments))


def text_output(text: str) -> ModelOutput:
    return with_usage(ModelOutput.from_content("mockllm/model", text))


def reply(tools: list[ToolInfo], values: dict[str, Any]) -> ModelOutput:
    """``values`` as a tool call when a tool was offered, else as JSON text."""
    return tool_output(tools, values) if tools else text_output(json.dumps(values))


def mock_model(respond: Responder | Sequence[ModelOutput]) -> Mock:
    """``mockllm/model`` answering with ``respond`` (a function, or outputs in turn)."""
    calls: list[Call] = []
    outputs = iter(respond) if not callable(respond) else None

    def answer(
        input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        calls.append(Call(list(input), list(tools), choice, config))
        if outputs is not None:
            return next(outputs)
        assert callable(respond)
        return respond(input, tools, choice, config)

    model = get_model("mockllm/model", custom_outputs=answer, memoize=False)
    return Mock(model, calls)


def _fields(tools: list[ToolInfo], config: GenerateConfig) -> dict[str, Any]:
    if tools:
        return {
            k: v.model_dump(exclude_none=True) for k, v in tools[0].parameters.properties.items()
        }
    if config.response_schema is not None:
        return dict(config.response_schema.json_schema.model_dump(exclude_none=True)["properties"])
    return {"move": {}, "notebook": {}}


def wall_follower(
    input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    """A right-hand wall follower that keeps its heading in its notebook (see the module)."""
    text = input[-1].text
    sides = re.search(r"Cell: N (\w+), E (\w+), S (\w+), W (\w+)\.", text)
    assert sides, f"not a Maze Escape turn: {text[:200]!r}"
    open_sides = {d for d, kind in zip(TURNS[0], sides.groups(), strict=True) if kind == "open"}
    notebook = re.search(r"<<<notebook\n(.*?)\nnotebook>>>", text, re.S)
    notes = notebook.group(1) if notebook else ""
    headings = re.findall(r"heading ([NESW])", notes)
    heading = headings[-1] if headings else "N"
    right = TURNS[1]
    order = [right[heading], heading, right[right[right[heading]]], right[right[heading]]]
    move = next((d for d in order if d in open_sides), "STAY")
    fields = _fields(tools, config)
    values: dict[str, Any] = {name: None for name in fields}
    values["move"] = move
    note = f"heading {move}\n"
    notebook_schema = json.dumps(fields.get("notebook", {}))
    if '"start"' in notebook_schema:  # splice edits: append at the end
        size = re.search(r"Notebook size: (\d+) of", text)
        end = int(size.group(1)) if size else len(notes if notes != "(empty)" else "")
        values["notebook"] = {"start": end, "end": end, "text": note}
    else:
        values["notebook"] = note
    if "radio" in fields and "On the exit: yes" in text:
        values["radio"] = "I am on the exit."
    if "check" in fields:
        values["check"] = f"open: {''.join(sorted(open_sides))}; heading {heading}, going {move}"
    return reply(tools, values)


def agimaze_player(plans: Sequence[Sequence[str]]) -> Responder:
    """Plays ``plans`` in order (one per labyrinth), answering ``start`` when a set waits."""
    where = {"labyrinth": 0, "step": 0}

    def respond(
        input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        fields = _fields(tools, config)
        values: dict[str, Any] = {name: None for name in fields}
        if WAITING in input[-1].text:
            values["action"] = "start"
        else:
            plan = plans[where["labyrinth"]]
            values["action"] = plan[where["step"]]
            where["step"] += 1
            if where["step"] == len(plan):
                where.update(labyrinth=where["labyrinth"] + 1, step=0)
        for name in ("plan", "state", "check"):
            if name in values:
                values[name] = "following the plan"
        return reply(tools, values)

    return respond


def run(task: Any, model: Model, log_dir: Path, **options: Any) -> EvalLog:
    """One Inspect eval, its log in ``log_dir``; the log."""
    options.setdefault("display", "none")
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), **options)
    return log


def decisions(journal: Path, game_id: int) -> list[dict[str, Any]]:
    """Every decision record of a game, blobs resolved."""
    out = []
    with Journal(journal, readonly=True) as opened:
        for turn in opened.turns(game_id):
            for agent, record in opened.resolve(turn.decisions).items():
                out.append({"turn": turn.turn, "agent": agent, **record})
    return out
