"""The Maze Escape prompt: a stable system part and this turn's observation.

The system part is fixed for a whole game and an agent (byte-identical every turn, so provider
prompt caches hit): the prompt version, the rules of the game filled from its configuration, the
version's advice (the ladder of :mod:`llm_policies.prompts`), the legend of the observation
(:func:`maze_envs.text.escape_legend`) and how to reply (output mode, check rule, and in
json_object and prompted modes the JSON schema). The user part is
:func:`maze_envs.text.render_escape`: the agent's notebook, last turn's radio, colocated
teammates' notebooks and this turn's observation.

Example:
    >>> from maze_envs.escape.types import Config
    >>> from llm_policies.schema import escape_schema
    >>> config = Config()
    >>> system = escape_system(config, "B", escape_schema(config), "tool", version="v4")
    >>> system.splitlines()[0]
    'Maze Escape. Prompt version v4; observation wording escape-v1.'
    >>> "You are agent B, one of 3 agents (A, B, C)" in system
    True
"""

from __future__ import annotations

from llm_policies.parsing import OutputMode
from llm_policies.prompts import escape_rules_for, escape_version, load
from llm_policies.schema import Check, ReplySchema
from maze_envs.escape.types import Config, Observation
from maze_envs.text.escape import escape_legend, render_escape
from maze_envs.text.wording import load_wording


def _rules(config: Config, agent: str) -> list[str]:
    data = load("escape/rules.toml")
    values = {
        "agent": agent,
        "count": config.num_agents,
        "team": ", ".join(config.agents),
        "width": config.width,
        "height": config.height,
        "max_turns": config.max_turns,
    }
    lines = []
    for section in data["order"]:
        if section == "radio" and not (config.radio and config.num_agents > 1):
            continue
        if section == "solo" and config.num_agents > 1:
            continue
        lines.append(data[section].format(**values))
    return lines


def reply_instructions(
    schema: ReplySchema, mode: OutputMode, *, check: Check = "off", kind: str = "escape"
) -> list[str]:
    """How to reply: the output mode's sentence, the check rule, the "nothing" rule."""
    data = load("escape/reply.toml")
    lines = [
        data["mode"][mode].format(schema_name=schema.name, schema=schema.schema_text),
    ]
    if check != "off":
        lines.append(data["escape"][f"check_rule_{check}"])
    if kind == "escape":
        lines.append(data["escape"]["nothing"])
    return lines


def escape_system(
    config: Config,
    agent: str,
    schema: ReplySchema,
    mode: OutputMode,
    *,
    version: str = "latest",
    check: Check = "off",
    wording: str | None = None,
) -> str:
    """The stable part of agent ``agent``'s prompt in this game."""
    rung = escape_version(version)
    data = load("escape/rules.toml")
    text_wording = load_wording("escape", wording)
    parts = [
        data["header"].format(version=rung.name, wording=text_wording.version),
        " ".join(_rules(config, agent)),
    ]
    advice = escape_rules_for(rung.name)
    if advice:
        parts.append("\n".join([data["advice"], *(f"- {rule}" for rule in advice)]))
    parts.append(escape_legend(config, trail=rung.trail, wording=wording))
    parts.append("\n".join([data["reply"], *reply_instructions(schema, mode, check=check)]))
    return "\n\n".join(parts)


def escape_user(
    observation: Observation,
    config: Config,
    *,
    version: str = "latest",
    wording: str | None = None,
) -> str:
    """The changing part: this turn's notebook, radio, teammates' notebooks, observation."""
    return render_escape(observation, config, trail=escape_version(version).trail, wording=wording)
