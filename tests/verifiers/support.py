"""A scripted model behind the loopback OpenAI-compatible server, and verifiers' own command.

* :class:`Player`: answers a Chat Completions request the way the projects' scripted players
  do, from the request alone: Maze Escape with the stand-in wall follower
  (:mod:`llm_policies.backends.stand_in`, reading its prompt), AGI Maze with the oracle's plan of
  the labyrinth the system prompt describes (the step read off the observation), ``start`` when a
  labyrinth set waits. Every request it answered is kept.
* :func:`vf_eval`: ``vf-eval`` as a researcher types it, in a child process, against a base URL;
  its run directory and parsed ``traces.jsonl``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from llm_policies.backends.base import ChatMessage, ModelRequest
from llm_policies.backends.stand_in import stand_in_script
from llm_policies.settings import ModelSettings
from tests.conftest import REPO_ROOT
from tests.llm.servers import RecordedRequest, Reply

HUB = REPO_ROOT / "llm_policies" / "apps" / "verifiers" / "hub"
#: What a labyrinth set says while it waits for ``start``.
WAITING = 'Available actions: {"id":"start"}'
_SCHEMA_AFTER = "It must follow this JSON schema:\n"
_STEP = re.compile(r"^Step (\d+) of \d+\.", re.MULTILINE)


def _schema_in(system: str) -> dict[str, Any]:
    """The reply schema a prompted/json_object system prompt carries as text."""
    at = system.find(_SCHEMA_AFTER)
    if at < 0:
        return {}
    schema, _ = json.JSONDecoder().raw_decode(system, at + len(_SCHEMA_AFTER))
    return dict(schema)


def as_request(body: dict[str, Any]) -> ModelRequest:
    """A Chat Completions body as the LLM policies' request (its mode and schema recovered)."""
    system = ""
    messages: list[ChatMessage] = []
    for message in body["messages"]:
        content = message.get("content") or ""
        if message["role"] == "system":
            system = content
        else:
            messages.append(ChatMessage(message["role"], content))
    tools, fmt = body.get("tools"), body.get("response_format") or {}
    if tools:
        mode, schema = "tool", tools[0]["function"]["parameters"]
    elif fmt.get("type") == "json_schema":
        mode, schema = "native", fmt["json_schema"]["schema"]
    elif fmt.get("type") == "json_object":
        mode = "grammar" if "schema" in fmt else "json_object"
        schema = fmt.get("schema") or _schema_in(system)
    else:
        mode, schema = "prompted", _schema_in(system)
    return ModelRequest(system, tuple(messages), mode, schema, "reply", ModelSettings())


@cache
def oracle_plan(pack: str) -> tuple[str, tuple[str, ...]]:
    """(the labyrinth's task information as its prompts give it, the oracle's actions)."""
    from maze_envs.agimaze.env import AgiMazeEnv
    from maze_envs.agimaze.observation import AgiMazeObservation
    from maze_envs.policies.episodes import agimaze_episode
    from maze_envs.policies.registry import make_policy
    from maze_envs.text.agimaze import agimaze_description

    env = AgiMazeEnv(path=pack)
    obs, info = env.reset(seed=0)
    description = agimaze_description(agimaze_episode(env, info))
    task_info = description[description.index("Task information:") : description.index("\nActions")]
    oracle = make_policy("oracle", "agimaze")
    oracle.reset("player", 0, agimaze_episode(env, info, privileged=True))
    actions: list[str] = []
    typed = AgiMazeObservation.from_env(obs, info, env=env)
    over = False
    while not over:
        action = str(oracle.act(typed))
        actions.append(action)
        obs, _, terminated, truncated, info = env.step_name(action)
        typed = AgiMazeObservation.from_env(obs, info, env=env, last_action=action)
        over = terminated or truncated
    env.close()
    return task_info, tuple(actions)


@dataclass
class Player:
    """The scripted model (see the module docstring); ``packs``: the AGI Maze bundles it has
    plans for; ``as_tool``: answer with a tool call when the request offers one."""

    packs: Sequence[str] = ()
    requests: list[ModelRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stand_in = stand_in_script("stand-in:wall-follower")
        self._plans = [oracle_plan(p) for p in self.packs]

    def __call__(self, recorded: RecordedRequest) -> Reply:
        request = as_request(recorded.body)
        self.requests.append(request)
        if request.system.startswith("Maze Escape."):
            scripted = self._stand_in(request)
            return Reply(text=scripted.text, tool_arguments=scripted.tool_arguments)
        values = {"action": self._agimaze_action(request)}
        for name in ("plan", "state", "check"):
            if name in request.schema.get("properties", {}):
                values[name] = "following the plan"
        reply = json.dumps(values)
        if request.output_mode == "tool":
            return Reply(tool_arguments=reply)
        return Reply(text=reply)

    def _agimaze_action(self, request: ModelRequest) -> str:
        last = request.messages[-1].content
        if WAITING in last:
            return "start"
        for task_info, plan in self._plans:
            if task_info in request.system:
                steps = _STEP.findall(last)
                return plan[int(steps[-1])]
        raise AssertionError("the scripted player has no plan for this labyrinth")


@dataclass
class Run:
    """One ``vf-eval`` run: its exit status, output, directory and episodes."""

    status: int
    output: str
    directory: Path | None
    episodes: list[dict[str, Any]]

    @property
    def traces(self) -> list[dict[str, Any]]:
        return [t for e in self.episodes for t in e["traces"]]


def vf_eval(env_id: str, base_url: str, out: Path, *args: str, timeout: float = 900) -> Run:
    """``vf-eval <env_id> -m scripted-model --client.base-url <base_url> ...`` in a child
    process (the hub packages found on ``PYTHONPATH`` as if installed); its run."""
    command = [
        str(Path(sys.executable).with_name("vf-eval")),
        env_id,
        "-m",
        "scripted-model",
        "--client.base-url",
        base_url,
        "--client.api-key-var",
        "MAZE_ENVS_TEST_NO_KEY",
        "--no-push",
        "--no-rich",
        "-o",
        str(out),
        *args,
    ]
    paths = [str(HUB / "maze-envs-escape"), str(HUB / "maze-envs-agimaze"), str(REPO_ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run(
        command, cwd=out, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    found = sorted(out.glob("*/traces.jsonl"))
    episodes = []
    if found:
        episodes = [json.loads(line) for line in found[-1].read_text().splitlines() if line]
    directory = found[-1].parent if found else None
    return Run(done.returncode, done.stdout + done.stderr, directory, episodes)
