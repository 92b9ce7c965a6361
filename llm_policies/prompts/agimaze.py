"""The AGI Maze prompt: the labyrinth's description first, then the history policy's messages.

The system part is fixed for a labyrinth: a header naming the prompt version and history policy,
the single-labyrinth description (:func:`maze_envs.text.agimaze_description`: rules, task info,
board size, start, public map, actions, coordinate convention), the history policy's instruction
and how to reply. Each step's observation is :func:`maze_envs.text.render_agimaze`.

Example:
    >>> from types import SimpleNamespace
    >>> from llm_policies.schema import agimaze_schema
    >>> episode = SimpleNamespace(description="Rules.", task={"board": {"n": 2, "m": 3}},
    ...     action_names=("up", "down"), public_map=None, max_steps=10, budget=50)
    >>> text = agimaze_system(episode, agimaze_schema(["up", "down"]), "tool")
    >>> text.splitlines()[0]
    'AGI Maze. Prompt version v1 (wording agimaze-v1); history: observations.'
"""

from __future__ import annotations

from typing import Final

from llm_policies.history import HistoryKind, history_text
from llm_policies.parsing import OutputMode
from llm_policies.prompt_data import load
from llm_policies.prompts.escape import reply_instructions
from llm_policies.schema import Check, ReplySchema
from maze_envs.text.agimaze import AgiMazeEpisodeLike, agimaze_description
from maze_envs.text.wording import load_wording

#: AGI Maze prompt versions (one so far; the wording file carries the sentences).
AGIMAZE_PROMPT_VERSIONS: Final = ("v1",)


def agimaze_system(
    episode: AgiMazeEpisodeLike,
    schema: ReplySchema,
    mode: OutputMode,
    *,
    history: HistoryKind = "observations",
    window: int | None = None,
    check: Check = "off",
    version: str = "v1",
    wording: str | None = None,
) -> str:
    """The stable part of the prompt for one labyrinth."""
    if version not in AGIMAZE_PROMPT_VERSIONS:
        raise ValueError(
            f"unknown AGI Maze prompt version {version!r}; "
            f"choose {', '.join(AGIMAZE_PROMPT_VERSIONS)}"
        )
    header = load("agimaze/prompt.toml")["header"].format(
        version=version,
        wording=load_wording("agimaze", wording).version,
        history=history,
        window="" if window is None else load("agimaze/prompt.toml")["window"].format(n=window),
    )
    parts = [
        header,
        agimaze_description(episode, wording=wording),
        history_text(history)["instruction"],
        "\n".join(
            [
                load("agimaze/prompt.toml")["reply"],
                *reply_instructions(schema, mode, check=check, kind="agimaze"),
            ]
        ),
    ]
    return "\n\n".join(parts)
