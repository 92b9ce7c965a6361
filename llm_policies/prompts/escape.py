"""The Maze Escape prompt: a stable system part and this turn's observation.

The system part is fixed for a whole game (byte-identical every turn, so provider prompt caches
hit): the prompt version, the rules of the game filled from its configuration, the version's
advice (the ladder of :mod:`llm_policies.prompts`), the legend of the observation
(:func:`maze_envs.text.escape_legend`) and how to reply (output mode, check rule, and in
json_object and prompted modes the JSON schema). The user part is
:func:`maze_envs.text.render_escape`: the agent's notebook, last turn's radio, colocated
teammates' notebooks and this turn's observation.

Where the agent's name goes is the prompt version's layout. Up to ``v13`` (``agent_first``) the
system prompt says "You are agent B" in its first lines, so the prompts of a game's agents
differ from character 73 on and a server's prefix cache (llama.cpp keeps the last prompt's
tokens) reuses almost nothing between agents. From ``v14`` (``shared_first``) the system prompt
is the same for every agent of the game and the user message opens with the agent's name:
what every agent and turn share comes first, the agent's own part last.

Example:
    >>> from maze_envs.escape.types import Config
    >>> from llm_policies.schema import escape_schema
    >>> config = Config()
    >>> system = escape_system(config, "B", escape_schema(config), "tool", version="v4")
    >>> system.splitlines()[0]
    'Maze Escape. Prompt version v4; observation wording escape-v1.'
    >>> "You are agent B, one of 3 agents (A, B, C)" in system
    True
    >>> shared = escape_system(config, "B", escape_schema(config), "tool", version="v14")
    >>> shared == escape_system(config, "C", escape_schema(config), "tool", version="v14")
    True
"""

from __future__ import annotations

from llm_policies.parsing import OutputMode
from llm_policies.prompt_data import Layout, escape_rules_for, escape_version, load
from llm_policies.schema import Check, ReplySchema
from maze_envs.escape.types import Config, Observation
from maze_envs.text.escape import escape_legend, render_escape
from maze_envs.text.wording import load_wording


def _rules(config: Config, agent: str, layout: Layout) -> list[str]:
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
    for section in data["shared_order" if layout == "shared_first" else "order"]:
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
    """The stable part of agent ``agent``'s prompt in this game (the same for every agent of
    the game from ``v14``, whose layout puts the agent's name in the user message)."""
    rung = escape_version(version)
    data = load("escape/rules.toml")
    text_wording = load_wording("escape", wording)
    parts = [
        data["header"].format(version=rung.name, wording=text_wording.version),
        " ".join(_rules(config, agent, rung.layout)),
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
    agent: str = "",
    *,
    version: str = "latest",
    wording: str | None = None,
) -> str:
    """The changing part: this turn's notebook, radio, teammates' notebooks, observation; from
    ``v14`` (layout ``shared_first``) after the line naming ``agent``."""
    rung = escape_version(version)
    text = render_escape(observation, config, trail=rung.trail, wording=wording)
    return agent_line(agent, version=version) + text


def agent_line(agent: str, *, version: str = "latest") -> str:
    r"""What the user message of prompt ``version`` puts before the observation: from ``v14``
    (layout ``shared_first``) the line naming ``agent`` and a blank line, before it nothing.

    Example:
        >>> agent_line("B", version="v14")
        'You are agent B.\n\n'
        >>> agent_line("B", version="v13")
        ''
    """
    if escape_version(version).layout != "shared_first":
        return ""
    return load("escape/rules.toml")["you"].format(agent=agent) + "\n\n"
